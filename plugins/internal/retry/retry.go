// Package retry is the retry policy the first-party HTTP providers share (the OpenAI-compatible
// embedder and language model): exponential backoff with jitter, the server's Retry-After honoured,
// and no attempt that would land after the caller's deadline.
package retry

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff is a retry policy: up to Retries retries, waiting First, then twice as long each time,
// at most Longest.
type Backoff struct {
	Retries int
	First   time.Duration
	Longest time.Duration
}

// maxServerWait caps a server's Retry-After: a misconfigured server must not park a job for hours.
const maxServerWait = 2 * time.Minute

// Delay is the wait before retry number attempt+1: the server's Retry-After if it gave one, else
// exponential backoff with jitter over the upper half, which keeps many workers from retrying in
// lockstep.
func (b Backoff) Delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, maxServerWait)
	}
	d := b.First << min(attempt, 20)
	d = min(d, b.Longest)
	return d/2 + rand.N(d/2+1)
}

// Do calls once until it succeeds or must stop. once returns, besides its result and error, how
// to retry: < 0 never (a permanent error), 0 after the computed backoff, > 0 after that long (the
// server's wish).
func Do[T any](ctx context.Context, b Backoff, once func() (T, time.Duration, error)) (T, error) {
	var zero T
	for attempt := 0; ; attempt++ {
		v, retryAfter, err := once()
		if err == nil {
			return v, nil
		}
		if retryAfter < 0 || attempt >= b.Retries || ctx.Err() != nil {
			if attempt > 0 && retryAfter >= 0 {
				err = fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
			}
			return zero, err
		}
		wait := b.Delay(attempt, retryAfter)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return zero, fmt.Errorf("%w (the next attempt, in %v, would come after the deadline)", err, wait.Round(time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return zero, fmt.Errorf("%w (while waiting to retry: %w)", err, ctx.Err())
		}
	}
}

// Retryable reports whether a response status is worth another attempt: rate limits, timeouts
// and server-side failures (529 is an overloaded upstream).
func Retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusRequestTimeout, 529:
		return true
	}
	return false
}

// After is how long a response asks the client to wait: Retry-After-Ms (Azure and OpenAI send
// it; it is more precise) or Retry-After in delay-seconds or an HTTP date; 0 when it says nothing.
func After(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	return ParseAfter(h.Get("Retry-After"), now)
}

// ParseAfter reads an HTTP Retry-After value.
func ParseAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
