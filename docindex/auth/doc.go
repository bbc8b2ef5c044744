// Package auth verifies the bearer credentials docindex accepts and turns
// them into Claims: JWTs signed with a shared HS256 secret (NewHS256),
// JWTs from an OpenID Connect issuer checked through discovery and its
// JWKS (NewOIDC), and the shape of docindex API keys (NewKey, HashKey,
// IsKey). Looking keys up and upserting users belong to the caller; this
// package has no database.
//
// Every verification failure wraps ErrUnauthorized, so an HTTP layer needs
// one errors.Is check to answer 401; the wrapped reason (expired, bad
// signature, missing email, ...) is meant for logs.
//
// A typical request path:
//
//	tok, ok := auth.BearerToken(r)
//	if !ok { /* 401 */ }
//	if auth.IsKey(tok) {
//		hash := auth.HashKey(tok) // look the key up by its hash
//	} else {
//		claims, err := verifier.Verify(ctx, tok) // auth.Chain(hs, oidc)
//	}
package auth
