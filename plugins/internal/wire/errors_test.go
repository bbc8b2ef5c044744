package wire

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/docindex/docindex/plugins"
)

var errSpecific = fmt.Errorf("special thing missing: %w", plugins.ErrNotFound)

func TestErrorsRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, sentinel := range []error{plugins.ErrInvalidArgument, plugins.ErrNotFound, plugins.ErrUnauthenticated,
		plugins.ErrPermissionDenied, plugins.ErrRateLimited, plugins.ErrNotReady, plugins.ErrUnimplemented} {
		sent := fmt.Errorf("the plugin's words: %w", sentinel)
		got := Error(ctx, "op", Status(sent))
		if !errors.Is(got, sentinel) || got.Error() != "op: the plugin's words: "+sentinel.Error() {
			t.Errorf("%v came back as %q", sentinel, got)
		}
		if errors.Is(got, plugins.ErrUnavailable) {
			t.Errorf("%v came back as unavailable", sentinel)
		}
	}
	got := Error(ctx, "op", Status(fmt.Errorf("x: %w", plugins.ErrNotFound)), errSpecific)
	if !errors.Is(got, errSpecific) || !errors.Is(got, plugins.ErrNotFound) {
		t.Errorf("specific sentinel: %v", got)
	}
	got = Error(ctx, "op", Status(errors.New("plain")), errSpecific)
	if errors.Is(got, errSpecific) || got.Error() != "op: plain" {
		t.Errorf("plain error: %v", got)
	}
}

func TestTransportFailuresAreUnavailable(t *testing.T) {
	ctx := context.Background()
	for _, err := range []error{
		status.Error(codes.Unavailable, "connection refused"),
		status.Error(codes.Canceled, "grpc: the client connection is closing"),
	} {
		if got := Error(ctx, "op", err); !errors.Is(got, plugins.ErrUnavailable) {
			t.Errorf("%v: %v", err, got)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if got := Error(cctx, "op", status.Error(codes.Canceled, "context canceled")); !errors.Is(got, context.Canceled) || errors.Is(got, plugins.ErrUnavailable) {
		t.Errorf("the caller's cancellation: %v", got)
	}
	got := Error(ctx, "op", status.Error(codes.ResourceExhausted, "grpc: received message larger than max (70000000 vs. 67108864)"))
	if errors.Is(got, plugins.ErrRateLimited) {
		t.Errorf("size limit is not a rate limit: %v", got)
	}
	if Status(context.Canceled) == nil || status.Code(Status(fmt.Errorf("w: %w", context.DeadlineExceeded))) != codes.DeadlineExceeded {
		t.Error("context errors keep their codes")
	}
}
