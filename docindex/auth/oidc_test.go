package auth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

const testAudience = "https://docindex.test"

// issuerClient is one client of the test issuer and the claims its
// client_credentials tokens carry ("sub": null drops sub).
type issuerClient struct {
	ID     string         `json:"client_id"`
	Secret string         `json:"client_secret"`
	Claims map[string]any `json:"claims"`
}

var issuerClients = []issuerClient{
	{"alice", "alice-secret", map[string]any{
		"sub": "u-alice", "email": "alice@example.com", "name": "Alice",
		"groups": []string{"g-eng", "g-all"}, "roles": []string{"admin"},
	}},
	{"bob", "bob-secret", map[string]any{"sub": "u-bob", "email": "bob@example.com", "groups": "g-eng"}},
	{"noemail", "noemail-secret", map[string]any{"sub": "u-noemail"}},
	{"nosub", "nosub-secret", map[string]any{"sub": nil, "email": "nosub@example.com"}},
}

// lockedBuffer collects node's stderr, written by exec's copier while the
// test may read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startIssuer runs scripts/oidc-provider/issuer.js (the npm package
// oidc-provider) on a free loopback port and returns its issuer URL. node
// is killed when the test ends.
func startIssuer(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "scripts", "oidc-provider"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oidc-provider", "package.json")); err != nil {
		t.Fatalf("the test OIDC issuer's npm packages are missing (%v): run scripts/oidc-deps.sh", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found (%v): install Node.js 20.19 or later, then run scripts/oidc-deps.sh", err)
	}
	cfg, err := json.Marshal(map[string]any{"port": 0, "audience": testAudience, "ttl": 300, "clients": issuerClients})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "issuer.js"), string(cfg))
	cmd.Dir = dir
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	// node exits when this pipe closes, so it does not outlive a test
	// binary that dies before its cleanup runs.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})

	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-ready:
		var hello struct{ Issuer string }
		if err := json.Unmarshal([]byte(line), &hello); err != nil || hello.Issuer == "" {
			t.Fatalf("issuer did not start (first line %q): %s", line, stderr)
		}
		return hello.Issuer
	case <-time.After(30 * time.Second):
		t.Fatalf("issuer did not start within 30 s: %s", stderr)
	}
	return ""
}

// fetchToken obtains a JWT access token from the issuer with the
// client_credentials grant; resource "" means the default audience.
func fetchToken(t *testing.T, issuer, client, secret, resource string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	if resource != "" {
		form.Set("resource", resource)
	}
	req, err := http.NewRequest(http.MethodPost, issuer+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &tr) != nil || tr.AccessToken == "" {
		t.Fatalf("token request for %s: %s: %s", client, resp.Status, body)
	}
	if strings.Count(tr.AccessToken, ".") != 2 {
		t.Fatalf("access token %q is not a JWT", tr.AccessToken)
	}
	return tr.AccessToken
}

// tamper replaces one claim in the payload and keeps the old signature.
func tamper(t *testing.T, token, claim string, value any) string {
	t.Helper()
	parts := strings.Split(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var payload map[string]any
	if err := json.Unmarshal(raw, &payload); err != nil {
		t.Fatal(err)
	}
	payload[claim] = value
	raw, err = json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	parts[1] = base64.RawURLEncoding.EncodeToString(raw)
	return strings.Join(parts, ".")
}

// issuerPublicKeyPEM returns the issuer's signing key as PEM, the "secret"
// of the classic RS256-to-HS256 confusion attack.
func issuerPublicKeyPEM(t *testing.T, issuer string) []byte {
	t.Helper()
	resp, err := http.Get(issuer + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil || len(set.Keys) == 0 {
		t.Fatalf("jwks: %v (%d keys)", err, len(set.Keys))
	}
	der, err := x509.MarshalPKIXPublicKey(set.Keys[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func TestOIDC(t *testing.T) {
	issuer := startIssuer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	v, err := NewOIDC(ctx, issuer, testAudience)
	if err != nil {
		t.Fatalf("NewOIDC: %v", err)
	}
	aliceTok := fetchToken(t, issuer, "alice", "alice-secret", "")

	t.Run("valid", func(t *testing.T) {
		c, err := v.Verify(ctx, aliceTok)
		if err != nil {
			t.Fatalf("verify: %v", err)
		}
		want := Claims{Subject: "u-alice", Email: "alice@example.com", Name: "Alice",
			Groups: []string{"g-eng", "g-all"}, Roles: []string{"admin"}}
		if c.Subject != want.Subject || c.Email != want.Email || c.Name != want.Name ||
			!slices.Equal(c.Groups, want.Groups) || !slices.Equal(c.Roles, want.Roles) {
			t.Errorf("claims = %+v, want %+v", c, want)
		}
		if !c.IsAdmin() {
			t.Error("alice is not admin")
		}
		if d := time.Until(c.Expiry); d <= 0 || d > 301*time.Second {
			t.Errorf("expiry %v is not within the issuer's 300 s ttl", c.Expiry)
		}
	})

	t.Run("single group string, no roles", func(t *testing.T) {
		c, err := v.Verify(ctx, fetchToken(t, issuer, "bob", "bob-secret", ""))
		if err != nil {
			t.Fatalf("verify: %v", err)
		}
		if c.Subject != "u-bob" || !slices.Equal(c.Groups, []string{"g-eng"}) || len(c.Roles) != 0 || c.IsAdmin() {
			t.Errorf("claims = %+v", c)
		}
	})

	t.Run("missing claims", func(t *testing.T) {
		_, err := v.Verify(ctx, fetchToken(t, issuer, "noemail", "noemail-secret", ""))
		wantUnauthorized(t, err, "no email claim")
		_, err = v.Verify(ctx, fetchToken(t, issuer, "nosub", "nosub-secret", ""))
		wantUnauthorized(t, err, "no sub claim")
	})

	t.Run("tampered", func(t *testing.T) {
		for name, tok := range map[string]string{
			"payload":   tamper(t, aliceTok, "email", "mallory@example.com"),
			"roles":     tamper(t, aliceTok, "roles", []string{"admin", "more"}),
			"signature": aliceTok[:len(aliceTok)-4] + strings.Repeat("A", 4),
			"truncated": aliceTok[:strings.LastIndex(aliceTok, ".")+1],
		} {
			_, err := v.Verify(ctx, tok)
			if !errors.Is(err, ErrUnauthorized) {
				t.Errorf("%s: verify = %v, want ErrUnauthorized", name, err)
			}
		}
	})

	t.Run("wrong audience", func(t *testing.T) {
		other := fetchToken(t, issuer, "alice", "alice-secret", "https://other.test")
		_, err := v.Verify(ctx, other)
		wantUnauthorized(t, err, "audience")

		strict, err := NewOIDC(ctx, issuer, "https://other.test")
		if err != nil {
			t.Fatal(err)
		}
		_, err = strict.Verify(ctx, aliceTok)
		wantUnauthorized(t, err, "audience")
		if _, err := strict.Verify(ctx, other); err != nil {
			t.Errorf("verifier for https://other.test rejected its token: %v", err)
		}

		// audience "" skips the check: both tokens pass.
		open, err := NewOIDC(ctx, issuer, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{aliceTok, other} {
			if _, err := open.Verify(ctx, tok); err != nil {
				t.Errorf("verifier without audience: %v", err)
			}
		}
	})

	t.Run("expired", func(t *testing.T) {
		late, err := NewOIDC(ctx, issuer, testAudience,
			WithClock(func() time.Time { return time.Now().Add(time.Hour) }))
		if err != nil {
			t.Fatal(err)
		}
		_, err = late.Verify(ctx, aliceTok)
		wantUnauthorized(t, err, "expired")
		var expired *oidc.TokenExpiredError
		if !errors.As(err, &expired) {
			t.Errorf("error %v does not wrap *oidc.TokenExpiredError", err)
		}
	})

	t.Run("wrong algorithm", func(t *testing.T) {
		claims := jwt.MapClaims{
			"sub": "u-mallory", "email": "mallory@example.com", "roles": []string{"admin"},
			"iss": issuer, "aud": testAudience, "exp": time.Now().Add(time.Hour).Unix(),
		}
		for name, tok := range map[string]string{
			"none":              signRaw(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims),
			"HS256, shared key": signRaw(t, jwt.SigningMethodHS256, testSecret, claims),
			"HS256, public key": signRaw(t, jwt.SigningMethodHS256, issuerPublicKeyPEM(t, issuer), claims),
		} {
			_, err := v.Verify(ctx, tok)
			if !errors.Is(err, ErrUnauthorized) {
				t.Errorf("%s: verify = %v, want ErrUnauthorized", name, err)
			}
		}
		// Only RS256 tokens come from this issuer; limiting to ES256 refuses them.
		es, err := NewOIDC(ctx, issuer, testAudience, WithAlgorithms(oidc.ES256))
		if err != nil {
			t.Fatal(err)
		}
		_, err = es.Verify(ctx, aliceTok)
		wantUnauthorized(t, err, "oidc")
		for _, alg := range []string{"none", "HS256"} {
			if _, err := NewOIDC(ctx, issuer, testAudience, WithAlgorithms(alg)); err == nil {
				t.Errorf("NewOIDC accepted WithAlgorithms(%q)", alg)
			}
		}
	})

	t.Run("chain with HS256", func(t *testing.T) {
		c := Chain(NewHS256(testSecret), v)
		hsTok, err := MintHS256(testSecret, alice, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for name, tok := range map[string]string{"hs256": hsTok, "oidc": aliceTok} {
			if _, err := c.Verify(ctx, tok); err != nil {
				t.Errorf("%s token through chain: %v", name, err)
			}
		}
		_, err = c.Verify(ctx, tamper(t, aliceTok, "sub", "u-mallory"))
		wantUnauthorized(t, err, "oidc")
	})

	t.Run("discovery failures", func(t *testing.T) {
		if _, err := NewOIDC(ctx, issuer+"/", testAudience); err == nil {
			t.Error("NewOIDC accepted an issuer URL that differs from the discovered one")
		}
		if _, err := NewOIDC(ctx, "http://127.0.0.1:1", testAudience); err == nil {
			t.Error("NewOIDC succeeded against a closed port")
		}
		if _, err := NewOIDC(ctx, "", testAudience); err == nil {
			t.Error("NewOIDC accepted an empty issuer")
		}
	})
}

func TestOIDCDiscoveryHonoursHTTPClient(t *testing.T) {
	issuer := startIssuer(t)
	var calls int
	var mu sync.Mutex
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})}
	ctx := context.Background()
	v, err := NewOIDC(ctx, issuer, testAudience, WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, fetchToken(t, issuer, "alice", "alice-secret", "")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// One discovery request and one JWKS fetch.
	if calls != 2 {
		t.Errorf("custom client made %d requests, want 2", calls)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
