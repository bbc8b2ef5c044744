package worker

import (
	"context"
	"errors"

	"github.com/docindex/docindex/docindex/queue"
)

// Handler runs one job. It must return when ctx is done and be idempotent: a job is run again
// from the start after a retry or when its worker died mid-job.
type Handler interface {
	Handle(ctx context.Context, job queue.Job) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, job queue.Job) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, job queue.Job) error { return f(ctx, job) }

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as one that retrying cannot fix (an unsupported format, a file that is
// not there): the job fails at once with err's text. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or an error it wraps, was marked by Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}
