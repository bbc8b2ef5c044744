package git

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/docindex/docindex/plugins"
)

// errBranchNotFound is wrapped when the configured branch does not exist.
var errBranchNotFound = fmt.Errorf("branch not found: %w", plugins.ErrNotFound)

// errEmpty is wrapped when the repository has no commits at all.
var errEmpty = errors.New("the repository has no commits")

// remoteError turns an error of go-git's transport into one that says what
// happened in words, wraps the plugins error the host acts on, and never
// contains the token (servers may echo a request in an error page).
func remoteError(op string, cfg Config, err error) error {
	repo := repoLabel(cfg.URL)
	var kind error
	var msg string
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("git: %s %s: %w", op, repo, err)
	case errors.Is(err, transport.ErrAuthenticationRequired):
		kind = plugins.ErrUnauthenticated
		if cfg.Token == "" {
			msg = "the server requires authentication (HTTP 401): set username and token"
		} else {
			msg = "the server rejected the credentials (HTTP 401): check username and token"
		}
	case errors.Is(err, transport.ErrAuthorizationFailed):
		kind = plugins.ErrPermissionDenied
		msg = "the server refused access (HTTP 403): the credentials lack read access to the repository"
	case errors.Is(err, transport.ErrRepositoryNotFound):
		kind = plugins.ErrNotFound
		msg = "repository not found (HTTP 404): check the URL, or the credentials if the repository is private"
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return fmt.Errorf("git: %s %s: %w", op, repo, errEmpty)
	default:
		return &scrubbed{err: fmt.Errorf("git: %s %s: %w", op, repo, err), secret: cfg.Token}
	}
	return fmt.Errorf("git: %s %s: %s: %w", op, repo, msg, kind)
}

// scrubbed is an error whose message has a secret masked; errors.Is and
// errors.As still see the original.
type scrubbed struct {
	err    error
	secret string
}

func (s *scrubbed) Error() string {
	msg := s.err.Error()
	if s.secret != "" {
		msg = strings.ReplaceAll(msg, s.secret, "[redacted]")
	}
	const max = 600 // HTML error pages are not messages
	if len(msg) > max {
		msg = msg[:max] + "..."
	}
	return msg
}

func (s *scrubbed) Unwrap() error { return s.err }

// scrub masks the token in any error about cfg's repository.
func scrub(cfg Config, err error) error {
	if err == nil || cfg.Token == "" || !strings.Contains(err.Error(), cfg.Token) {
		return err
	}
	return &scrubbed{err: err, secret: cfg.Token}
}
