package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// asymmetric lists the algorithms an OIDC verifier may be told to accept:
// those go-oidc verifies against a JWKS. "none" and HMAC are absent on
// purpose: a JWKS is public, so an HMAC "key" in it would be no secret.
var asymmetric = map[string]bool{
	oidc.RS256: true, oidc.RS384: true, oidc.RS512: true,
	oidc.ES256: true, oidc.ES384: true, oidc.ES512: true,
	oidc.PS256: true, oidc.PS384: true, oidc.PS512: true,
	oidc.EdDSA: true,
}

// NewOIDC fetches issuer's discovery document (issuer +
// "/.well-known/openid-configuration"), which must name issuer exactly,
// and returns a Verifier for JWTs it signs: the signature is checked
// against the keys at its jwks_uri (fetched when first needed and again
// when a token names an unknown key id, so rotation needs no restart), iss
// must equal issuer, exp is required and honoured with WithLeeway's
// tolerance, and aud must contain audience.
//
// audience "" skips the audience check. Then every token the issuer signs
// for any client or API is accepted, which is only safe when the issuer
// serves docindex alone; set DOCINDEX_OIDC_AUDIENCE otherwise.
//
// Accepted algorithms are those the discovery document announces for ID
// tokens (RS256 if none), restricted to asymmetric ones, or those given by
// WithAlgorithms. ctx bounds discovery only; later key fetches use
// WithHTTPClient's client, if set, with no deadline of their own beyond it.
func NewOIDC(ctx context.Context, issuer, audience string, opts ...Option) (Verifier, error) {
	c := newConfig(opts)
	if issuer == "" {
		return nil, errors.New("oidc: empty issuer")
	}
	for _, a := range c.algs {
		if !asymmetric[a] {
			return nil, fmt.Errorf("oidc: signing algorithm %q is not allowed (want one of RS*, ES*, PS*, EdDSA)", a)
		}
	}
	if c.client != nil {
		ctx = oidc.ClientContext(ctx, c.client)
	}
	p, err := oidc.NewProvider(ctx, issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc discovery for %s: %w", issuer, err)
	}
	leeway, now := c.leeway, c.now
	cfg := &oidc.Config{
		ClientID:             audience,
		SkipClientIDCheck:    audience == "",
		SupportedSigningAlgs: c.algs,
		// go-oidc has no leeway for exp; judging the token a little in the
		// past gives the same tolerance as the HS256 verifier.
		Now: func() time.Time { return now().Add(-leeway) },
	}
	// VerifierContext keeps ctx's values (the HTTP client) for key fetches
	// but not its cancellation.
	return &oidcVerifier{issuer: issuer, v: p.VerifierContext(ctx, cfg)}, nil
}

type oidcVerifier struct {
	issuer string
	v      *oidc.IDTokenVerifier
}

func (o *oidcVerifier) Verify(ctx context.Context, token string) (*Claims, error) {
	if token == "" {
		return nil, unauthorized("oidc: empty token")
	}
	// go-oidc calls every JWT an "id token"; it checks signature, iss, aud
	// and exp the same way for access tokens.
	t, err := o.v.Verify(ctx, token)
	if err != nil {
		return nil, unauthorized("oidc", err)
	}
	var tc tokenClaims
	if err := t.Claims(&tc); err != nil {
		return nil, unauthorized("oidc: decode claims", err)
	}
	return tc.claims()
}
