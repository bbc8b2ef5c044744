package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/docindex/docindex/plugins"
)

// codeOf maps an error from plugin code to the status code that carries it.
// Unavailable is deliberately absent: it is reserved for a transport that
// broke, so that the host can tell a dead plugin from a failed call.
func codeOf(err error) codes.Code {
	switch {
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, plugins.ErrInvalidArgument):
		return codes.InvalidArgument
	case errors.Is(err, plugins.ErrNotFound):
		return codes.NotFound
	case errors.Is(err, plugins.ErrUnauthenticated):
		return codes.Unauthenticated
	case errors.Is(err, plugins.ErrPermissionDenied):
		return codes.PermissionDenied
	case errors.Is(err, plugins.ErrRateLimited):
		return codes.ResourceExhausted
	case errors.Is(err, plugins.ErrNotReady):
		return codes.FailedPrecondition
	case errors.Is(err, plugins.ErrUnimplemented):
		return codes.Unimplemented
	default:
		return codes.Unknown
	}
}

// Status turns an error returned by plugin code into a gRPC status error
// that keeps its message. A status error passes unchanged.
func Status(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codeOf(err), err.Error())
}

// remote is an error that came back from a plugin: its message is the
// plugin's, and it matches the SDK error its status code stands for.
type remote struct {
	msg  string
	kind error
}

func (e *remote) Error() string { return e.msg }
func (e *remote) Unwrap() error { return e.kind }

// Error turns an error from a gRPC call into an SDK error on the host side.
// specific are the kind's own sentinels, each wrapping one of package
// plugins' (embedder.ErrUnknownModel wraps plugins.ErrNotFound): a status
// that stands for the general one comes back as the specific one, so that it
// matches both. ctx is the caller's context:
// a call that was cancelled by the caller reports the context's error, one
// that was cancelled by anything else (a closed connection) is a plugin that
// went away. op names the call for the message, e.g. "embedder hash: embed".
func Error(ctx context.Context, op string, err error, specific ...error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w", op, err)
	}
	var kind error
	switch st.Code() {
	case codes.Canceled, codes.DeadlineExceeded:
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", op, ctx.Err())
		}
		if st.Code() == codes.DeadlineExceeded {
			kind = context.DeadlineExceeded
		} else {
			kind = plugins.ErrUnavailable
		}
	case codes.Unavailable:
		kind = plugins.ErrUnavailable
	case codes.InvalidArgument:
		kind = plugins.ErrInvalidArgument
	case codes.NotFound:
		kind = plugins.ErrNotFound
	case codes.Unauthenticated:
		kind = plugins.ErrUnauthenticated
	case codes.PermissionDenied:
		kind = plugins.ErrPermissionDenied
	case codes.ResourceExhausted:
		// gRPC itself uses this code for a message over the size limit,
		// which is no rate limit: that one stays a plain error.
		if !strings.Contains(st.Message(), "larger than max") {
			kind = plugins.ErrRateLimited
		}
	case codes.FailedPrecondition:
		kind = plugins.ErrNotReady
	case codes.Unimplemented:
		kind = plugins.ErrUnimplemented
	}
	for _, sp := range specific {
		if kind != nil && errors.Is(sp, kind) {
			kind = sp
			break
		}
	}
	msg := st.Message()
	if kind == plugins.ErrUnavailable {
		msg = fmt.Sprintf("%s: %v: %s", op, plugins.ErrUnavailable, msg)
	} else {
		msg = op + ": " + msg
	}
	if kind == nil {
		return errors.New(msg)
	}
	return &remote{msg: msg, kind: kind}
}
