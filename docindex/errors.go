package docindex

import (
	"database/sql"
	"errors"
	"fmt"
)

// Kinds of domain errors. Service methods return an *Error whose Kind is one of these; the HTTP
// module maps the kind to a status code and the message to {"error": "..."}.
var (
	ErrInvalid      = errors.New("invalid request")
	ErrUnauthorized = errors.New("unauthorized")
	ErrForbidden    = errors.New("forbidden")
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrTooLarge     = errors.New("too large")
	// ErrUnavailable: a service the request needs (the embedding provider, the blob store) did
	// not answer; the request changed nothing and may be tried again.
	ErrUnavailable = errors.New("unavailable")
)

// Error is a domain error: a kind for the status code and a message safe to show the caller.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is lets errors.Is(err, ErrNotFound) match an *Error of that kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Errorf builds an *Error of the given kind.
func Errorf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error { return Errorf(ErrInvalid, format, args...) }

// errNoRows is database/sql's no-rows error, named once for the store queries.
var errNoRows = sql.ErrNoRows

// pageLimit applies the paging rules of the list endpoints: limit 0 means 100, at most 1000;
// offset must not be negative.
func pageLimit(limit, offset int) (int, error) {
	switch {
	case limit == 0:
		limit = 100
	case limit < 0 || limit > 1000:
		return 0, invalid("limit must be between 1 and 1000")
	}
	if offset < 0 {
		return 0, invalid("offset must not be negative")
	}
	return limit, nil
}
