package auth

import (
	"net/http"
	"time"
)

// DefaultLeeway is the clock skew tolerated on exp and nbf: small, because
// a token is a bearer secret and its lifetime should mean what it says.
const DefaultLeeway = 30 * time.Second

// Option configures NewHS256, NewOIDC and MintHS256. Options that do not
// apply to a constructor are ignored by it.
type Option func(*config)

type config struct {
	audience string
	issuer   string
	leeway   time.Duration
	now      func() time.Time
	client   *http.Client
	algs     []string
}

func newConfig(opts []Option) *config {
	c := &config{leeway: DefaultLeeway, now: time.Now}
	for _, o := range opts {
		o(c)
	}
	return c
}

// WithAudience makes NewHS256 require aud to contain aud, and MintHS256
// set it. NewOIDC takes the audience as an argument instead.
func WithAudience(aud string) Option { return func(c *config) { c.audience = aud } }

// WithIssuer makes NewHS256 require iss to equal iss, and MintHS256 set it.
// NewOIDC takes the issuer as an argument instead.
func WithIssuer(iss string) Option { return func(c *config) { c.issuer = iss } }

// WithLeeway sets the clock skew tolerated on exp and nbf (DefaultLeeway
// otherwise).
func WithLeeway(d time.Duration) Option { return func(c *config) { c.leeway = d } }

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithHTTPClient sets the client NewOIDC uses for discovery and JWKS
// fetches (http.DefaultClient otherwise).
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.client = hc } }

// WithAlgorithms restricts the signing algorithms NewOIDC accepts. Without
// it, NewOIDC accepts the asymmetric ones the issuer's discovery document
// announces (RS256 when it announces none). "none" and the HMAC algorithms
// are refused either way.
func WithAlgorithms(algs ...string) Option {
	return func(c *config) { c.algs = append([]string(nil), algs...) }
}
