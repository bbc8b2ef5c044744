package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var (
	testSecret = []byte("test-secret-of-reasonable-length-0123456789")
	alice      = Claims{
		Subject: "u-alice",
		Email:   "Alice@Example.com",
		Name:    "Alice Liddell",
		Groups:  []string{"g-eng", "g-all"},
		Roles:   []string{"admin"},
	}
)

// signRaw signs an arbitrary claims map, for shapes MintHS256 cannot make.
func signRaw(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatalf("sign %s: %v", method.Alg(), err)
	}
	return s
}

func wantUnauthorized(t *testing.T, err error, reason string) {
	t.Helper()
	if err == nil {
		t.Fatalf("verify succeeded, want an error mentioning %q", reason)
	}
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("error %v does not wrap ErrUnauthorized", err)
	}
	if !strings.Contains(err.Error(), reason) {
		t.Fatalf("error %q does not mention %q", err, reason)
	}
}

func TestHS256Valid(t *testing.T) {
	ctx := context.Background()
	tok, err := MintHS256(testSecret, alice, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewHS256(testSecret).Verify(ctx, tok)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if c.Subject != alice.Subject || c.Email != alice.Email || c.Name != alice.Name {
		t.Errorf("got %+v, want %+v", c, alice)
	}
	if !slices.Equal(c.Groups, alice.Groups) || !slices.Equal(c.Roles, alice.Roles) {
		t.Errorf("groups/roles = %v/%v, want %v/%v", c.Groups, c.Roles, alice.Groups, alice.Roles)
	}
	if !c.IsAdmin() {
		t.Error("IsAdmin = false for roles [admin]")
	}
	if d := time.Until(c.Expiry); d < 59*time.Minute || d > time.Hour {
		t.Errorf("expiry %v is not an hour from now", c.Expiry)
	}
}

func TestHS256WithoutExpiryIsAccepted(t *testing.T) {
	tok, err := MintHS256(testSecret, alice, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewHS256(testSecret).Verify(context.Background(), tok)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if !c.Expiry.IsZero() {
		t.Errorf("expiry = %v, want zero", c.Expiry)
	}
}

func TestHS256Expired(t *testing.T) {
	ctx := context.Background()
	tok, err := MintHS256(testSecret, alice, -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewHS256(testSecret).Verify(ctx, tok)
	wantUnauthorized(t, err, "expired")
	if !errors.Is(err, jwt.ErrTokenExpired) {
		t.Errorf("error %v does not wrap jwt.ErrTokenExpired", err)
	}

	// Ten seconds past exp is inside the default leeway, a minute is not.
	fresh, err := MintHS256(testSecret, alice, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	later := func(d time.Duration) Option {
		return WithClock(func() time.Time { return time.Now().Add(d) })
	}
	if _, err := NewHS256(testSecret, later(70*time.Second)).Verify(ctx, fresh); err != nil {
		t.Errorf("10 s past exp: %v, want accepted within leeway", err)
	}
	_, err = NewHS256(testSecret, later(2*time.Minute)).Verify(ctx, fresh)
	wantUnauthorized(t, err, "expired")
	_, err = NewHS256(testSecret, later(70*time.Second), WithLeeway(0)).Verify(ctx, fresh)
	wantUnauthorized(t, err, "expired")

	// Claims.Expiry is used when ttl is 0.
	past := alice
	past.Expiry = time.Now().Add(-time.Hour)
	tok, err = MintHS256(testSecret, past, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewHS256(testSecret).Verify(ctx, tok)
	wantUnauthorized(t, err, "expired")
}

func TestHS256NotYetValid(t *testing.T) {
	tok := signRaw(t, jwt.SigningMethodHS256, testSecret, jwt.MapClaims{
		"sub": "u", "email": "u@example.com", "nbf": time.Now().Add(time.Hour).Unix(),
	})
	_, err := NewHS256(testSecret).Verify(context.Background(), tok)
	wantUnauthorized(t, err, "not valid yet")
}

func TestHS256WrongSecret(t *testing.T) {
	tok, err := MintHS256([]byte("another-secret"), alice, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewHS256(testSecret).Verify(context.Background(), tok)
	wantUnauthorized(t, err, "signature is invalid")
}

func TestHS256EmptySecretRejectsEverything(t *testing.T) {
	// An HMAC with an empty key is still an HMAC; the verifier must not
	// accept tokens anyone can forge.
	tok := signRaw(t, jwt.SigningMethodHS256, []byte{}, jwt.MapClaims{"sub": "u", "email": "u@example.com"})
	_, err := NewHS256(nil).Verify(context.Background(), tok)
	wantUnauthorized(t, err, "no secret")
	if _, err := MintHS256(nil, alice, time.Hour); err == nil {
		t.Error("MintHS256 with an empty secret succeeded")
	}
}

func TestHS256WrongAlgorithm(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{"sub": "u-alice", "email": "alice@example.com", "exp": time.Now().Add(time.Hour).Unix()}
	b64 := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	unsigned := b64(map[string]string{"alg": "none", "typ": "JWT"}) + "." + b64(claims)
	tests := map[string]string{
		"RS256":           signRaw(t, jwt.SigningMethodRS256, rsaKey, claims),
		"HS512":           signRaw(t, jwt.SigningMethodHS512, testSecret, claims),
		"none":            signRaw(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims),
		"none, no dot":    unsigned,
		"none, HS256 sig": unsigned + "." + strings.Split(signRaw(t, jwt.SigningMethodHS256, testSecret, claims), ".")[2],
	}
	v := NewHS256(testSecret)
	for name, tok := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tok)
			if err == nil || !errors.Is(err, ErrUnauthorized) {
				t.Fatalf("verify = %v, want ErrUnauthorized", err)
			}
		})
	}
}

func TestHS256Malformed(t *testing.T) {
	v := NewHS256(testSecret)
	for _, tok := range []string{"", "abc", "a.b.c", "dik_notajwt", "eyJhbGciOiJIUzI1NiJ9..."} {
		_, err := v.Verify(context.Background(), tok)
		if !errors.Is(err, ErrUnauthorized) {
			t.Errorf("Verify(%q) = %v, want ErrUnauthorized", tok, err)
		}
	}
}

func TestHS256MissingClaims(t *testing.T) {
	exp := time.Now().Add(time.Hour).Unix()
	tests := []struct {
		name   string
		claims jwt.MapClaims
		reason string
	}{
		{"no sub", jwt.MapClaims{"email": "a@example.com", "exp": exp}, "no sub claim"},
		{"blank sub", jwt.MapClaims{"sub": "  ", "email": "a@example.com", "exp": exp}, "no sub claim"},
		{"no email", jwt.MapClaims{"sub": "u", "exp": exp}, "no email claim"},
		{"empty email", jwt.MapClaims{"sub": "u", "email": "", "exp": exp}, "no email claim"},
		{"neither", jwt.MapClaims{"name": "x", "exp": exp}, "neither a sub nor an email"},
		{"not an address", jwt.MapClaims{"sub": "u", "email": "alice", "exp": exp}, "not an e-mail address"},
		{"email of wrong type", jwt.MapClaims{"sub": "u", "email": 42, "exp": exp}, "malformed"},
	}
	v := NewHS256(testSecret)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), signRaw(t, jwt.SigningMethodHS256, testSecret, tt.claims))
			wantUnauthorized(t, err, tt.reason)
		})
	}
}

func TestHS256GroupShapes(t *testing.T) {
	tests := []struct {
		name   string
		groups any // nil means "absent"
		want   []string
		bad    bool
	}{
		{name: "absent"},
		{name: "null", groups: json.RawMessage("null")},
		{name: "array", groups: []string{"g1", "g2"}, want: []string{"g1", "g2"}},
		{name: "empty array", groups: []string{}},
		{name: "single string", groups: "g1", want: []string{"g1"}},
		{name: "empty string", groups: ""},
		{name: "blanks dropped", groups: []string{"g1", "", " "}, want: []string{"g1"}},
		{name: "number", groups: 7, bad: true},
		{name: "mixed array", groups: []any{"g1", 2}, bad: true},
		{name: "object", groups: map[string]string{"id": "g1"}, bad: true},
	}
	v := NewHS256(testSecret)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims := jwt.MapClaims{"sub": "u", "email": "u@example.com"}
			if tt.groups != nil {
				claims["groups"] = tt.groups
				claims["roles"] = tt.groups
			}
			c, err := v.Verify(context.Background(), signRaw(t, jwt.SigningMethodHS256, testSecret, claims))
			if tt.bad {
				wantUnauthorized(t, err, "malformed")
				return
			}
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			if !slices.Equal(c.Groups, tt.want) || !slices.Equal(c.Roles, tt.want) {
				t.Errorf("groups, roles = %q, %q; want %q", c.Groups, c.Roles, tt.want)
			}
		})
	}
}

func TestIsAdmin(t *testing.T) {
	tests := []struct {
		roles []string
		want  bool
	}{
		{nil, false},
		{[]string{"reader"}, false},
		{[]string{"Admin"}, false},
		{[]string{"administrator"}, false},
		{[]string{"reader", "admin"}, true},
	}
	for _, tt := range tests {
		if got := (&Claims{Roles: tt.roles}).IsAdmin(); got != tt.want {
			t.Errorf("IsAdmin(%q) = %v, want %v", tt.roles, got, tt.want)
		}
	}
	if (*Claims)(nil).IsAdmin() {
		t.Error("nil Claims is admin")
	}
}

func TestHS256AudienceAndIssuer(t *testing.T) {
	ctx := context.Background()
	aud, iss := WithAudience("docindex"), WithIssuer("https://login.example")
	v := NewHS256(testSecret, aud, iss)

	good, err := MintHS256(testSecret, alice, time.Hour, aud, iss)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, good); err != nil {
		t.Fatalf("matching aud and iss: %v", err)
	}
	tests := map[string][]Option{
		"no aud or iss": nil,
		"other aud":     {WithAudience("other"), iss},
		"other iss":     {aud, WithIssuer("https://evil.example")},
	}
	for name, opts := range tests {
		t.Run(name, func(t *testing.T) {
			tok, err := MintHS256(testSecret, alice, time.Hour, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Verify(ctx, tok); !errors.Is(err, ErrUnauthorized) {
				t.Fatalf("verify = %v, want ErrUnauthorized", err)
			}
		})
	}
	// Without WithAudience, a token's aud is not checked.
	if _, err := NewHS256(testSecret).Verify(ctx, good); err != nil {
		t.Errorf("verifier without audience rejected a token with one: %v", err)
	}
}

func TestChain(t *testing.T) {
	ctx := context.Background()
	first, second := []byte("first-secret"), []byte("second-secret")
	c := Chain(NewHS256(first), nil, NewHS256(second))
	for _, secret := range [][]byte{first, second} {
		tok, err := MintHS256(secret, alice, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.Verify(ctx, tok); err != nil || got.Subject != alice.Subject {
			t.Errorf("chain verify with %q = %v, %v", secret, got, err)
		}
	}

	expired, err := MintHS256(first, alice, -time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Verify(ctx, expired)
	wantUnauthorized(t, err, "expired")
	wantUnauthorized(t, err, "signature is invalid")
	if !errors.Is(err, jwt.ErrTokenExpired) {
		t.Errorf("chain error %v hides jwt.ErrTokenExpired", err)
	}
	if n := strings.Count(err.Error(), "unauthorized"); n != 1 {
		t.Errorf("chain error %q says unauthorized %d times", err, n)
	}

	_, err = Chain().Verify(ctx, expired)
	wantUnauthorized(t, err, "no token verifier")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Verify(cancelled, "garbage"); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("verify with cancelled context = %v, want ErrUnauthorized", err)
	}
}
