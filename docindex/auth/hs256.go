package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// NewHS256 returns a Verifier for JWTs signed with HMAC-SHA256 and secret.
// Only HS256 is accepted: a token naming any other algorithm, "none"
// included, is refused before its signature is looked at. exp is optional
// but honoured when present, as is nbf, each with WithLeeway's tolerance
// (DefaultLeeway). WithAudience and WithIssuer add aud and iss checks. An
// empty secret rejects every token, so a misconfigured server fails closed.
func NewHS256(secret []byte, opts ...Option) Verifier {
	c := newConfig(opts)
	popts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithLeeway(c.leeway),
		jwt.WithTimeFunc(c.now),
	}
	if c.audience != "" {
		popts = append(popts, jwt.WithAudience(c.audience))
	}
	if c.issuer != "" {
		popts = append(popts, jwt.WithIssuer(c.issuer))
	}
	return &hs256{
		secret: append([]byte(nil), secret...),
		parser: jwt.NewParser(popts...),
	}
}

type hs256 struct {
	secret []byte
	parser *jwt.Parser
}

func (v *hs256) Verify(_ context.Context, token string) (*Claims, error) {
	if len(v.secret) == 0 {
		return nil, unauthorized("hs256: no secret is configured")
	}
	if token == "" {
		return nil, unauthorized("hs256: empty token")
	}
	var tc tokenClaims
	_, err := v.parser.ParseWithClaims(token, &tc, func(*jwt.Token) (any, error) {
		return v.secret, nil
	})
	if err != nil {
		return nil, unauthorized("hs256", err)
	}
	return tc.claims()
}

// MintHS256 signs c as an HS256 JWT with secret, for tests, the CLI and
// the docs. The token expires ttl from now; a negative ttl mints an
// already expired token (for tests), and ttl 0 uses c.Expiry, leaving exp
// out when that is zero too. WithAudience and WithIssuer set aud and iss;
// WithClock sets "now".
func MintHS256(secret []byte, c Claims, ttl time.Duration, opts ...Option) (string, error) {
	if len(secret) == 0 {
		return "", errors.New("mint hs256: empty secret")
	}
	cfg := newConfig(opts)
	now := cfg.now()
	tc := tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:  c.Subject,
			Issuer:   cfg.issuer,
			IssuedAt: jwt.NewNumericDate(now),
		},
		Email:  c.Email,
		Name:   c.Name,
		Groups: stringList(c.Groups),
		Roles:  stringList(c.Roles),
	}
	if cfg.audience != "" {
		tc.Audience = jwt.ClaimStrings{cfg.audience}
	}
	switch {
	case ttl != 0:
		tc.ExpiresAt = jwt.NewNumericDate(now.Add(ttl))
	case !c.Expiry.IsZero():
		tc.ExpiresAt = jwt.NewNumericDate(c.Expiry)
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, tc).SignedString(secret)
	if err != nil {
		return "", fmt.Errorf("mint hs256: %w", err)
	}
	return s, nil
}
