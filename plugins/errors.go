package plugins

import "errors"

// Errors that keep their meaning across the process boundary. A plugin wraps
// one of them (fmt.Errorf("...: %w", plugins.ErrNotReady)); the SDK carries
// it as a gRPC status code, and on the host the returned error again matches
// it with errors.Is and keeps the plugin's message. Any other error arrives
// as a plain error with the plugin's message.
var (
	// ErrInvalidArgument: the request or configuration is wrong; retrying it
	// unchanged fails again.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotFound: the model, item or resource named does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnauthenticated: the credentials were missing or rejected.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrPermissionDenied: the credentials do not allow the operation.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrRateLimited: the upstream service kept refusing for load or quota
	// after the plugin's own retries.
	ErrRateLimited = errors.New("rate limited")
	// ErrNotReady: the plugin lacks something it needs (a data file, a
	// setting); the message says what and how to provide it.
	ErrNotReady = errors.New("not ready")
	// ErrUnimplemented: the plugin does not offer this operation.
	ErrUnimplemented = errors.New("unimplemented")
	// ErrUnavailable: the plugin process could not be reached (it exited,
	// crashed or was killed). Plugins never return it; hosts use it to tell
	// a dead process from a failed call, restart and retry.
	ErrUnavailable = errors.New("plugin unavailable")
)
