package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrUnauthorized is wrapped by every verification failure: a missing,
// malformed, badly signed or expired token, a wrong audience or issuer, or
// a token without sub or email.
var ErrUnauthorized = errors.New("unauthorized")

// Verifier checks a bearer token and returns the identity it carries.
type Verifier interface {
	Verify(ctx context.Context, token string) (*Claims, error)
}

// Chain returns a Verifier that tries vs in order and returns the first
// success; it is how a server accepts both HS256 and OIDC tokens. When all
// fail, the error wraps ErrUnauthorized and every verifier's error, and its
// message lists each reason. A chain of no verifiers rejects everything.
func Chain(vs ...Verifier) Verifier {
	c := make(chain, 0, len(vs))
	for _, v := range vs {
		if v != nil {
			c = append(c, v)
		}
	}
	return c
}

type chain []Verifier

func (c chain) Verify(ctx context.Context, token string) (*Claims, error) {
	if len(c) == 0 {
		return nil, unauthorized("no token verifier is configured")
	}
	errs := make([]error, 0, len(c))
	for _, v := range c {
		claims, err := v.Verify(ctx, token)
		if err == nil {
			return claims, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 1 {
		return nil, errs[0]
	}
	return nil, &chainError{errs: errs}
}

// chainError keeps every verifier's error reachable through errors.Is/As
// while printing "unauthorized" once rather than once per verifier.
type chainError struct{ errs []error }

func (e *chainError) Error() string {
	reasons := make([]string, len(e.errs))
	for i, err := range e.errs {
		reasons[i] = strings.TrimPrefix(err.Error(), ErrUnauthorized.Error()+": ")
	}
	return ErrUnauthorized.Error() + ": " + strings.Join(reasons, "; ")
}

func (e *chainError) Unwrap() []error {
	return append([]error{ErrUnauthorized}, e.errs...)
}

// unauthorized wraps ErrUnauthorized with a reason; errs, when given, stay
// reachable through errors.Is/As (e.g. jwt.ErrTokenExpired).
func unauthorized(reason string, errs ...error) error {
	if len(errs) == 0 {
		return fmt.Errorf("%w: %s", ErrUnauthorized, reason)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnauthorized, reason, errors.Join(errs...))
}
