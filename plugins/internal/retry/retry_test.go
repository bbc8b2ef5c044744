package retry

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestDo(t *testing.T) {
	ctx := context.Background()
	b := Backoff{Retries: 3, First: time.Millisecond, Longest: 4 * time.Millisecond}
	calls := 0
	v, err := Do(ctx, b, func() (int, time.Duration, error) {
		calls++
		if calls < 3 {
			return 0, 0, errors.New("busy")
		}
		return 42, 0, nil
	})
	if v != 42 || err != nil || calls != 3 {
		t.Fatalf("retried success: %d %v after %d calls", v, err, calls)
	}
	calls = 0
	_, err = Do(ctx, b, func() (int, time.Duration, error) { calls++; return 0, -1, errors.New("bad key") })
	if calls != 1 || err == nil || strings.Contains(err.Error(), "gave up") {
		t.Fatalf("permanent error: %v after %d calls", err, calls)
	}
	calls = 0
	_, err = Do(ctx, b, func() (int, time.Duration, error) { calls++; return 0, 0, errors.New("busy") })
	if calls != 4 || err == nil || !strings.Contains(err.Error(), "gave up after 4 attempts") {
		t.Fatalf("exhausted: %v after %d calls", err, calls)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = Do(short, b, func() (int, time.Duration, error) { return 0, time.Minute, errors.New("slow down") })
	if err == nil || !strings.Contains(err.Error(), "after the deadline") {
		t.Fatalf("deadline: %v", err)
	}
}

func TestDelayAndAfter(t *testing.T) {
	b := Backoff{First: 100 * time.Millisecond, Longest: time.Second}
	for attempt := range 10 {
		d := b.Delay(attempt, 0)
		want := min(b.First<<attempt, b.Longest)
		if d < want/2 || d > want {
			t.Errorf("attempt %d: %v not in [%v, %v]", attempt, d, want/2, want)
		}
	}
	if d := b.Delay(0, time.Hour); d != maxServerWait {
		t.Errorf("server wait not capped: %v", d)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{"": 0, "2": 2 * time.Second, "0.5": 500 * time.Millisecond, "-1": 0, "soon": 0,
		now.Add(3 * time.Second).Format(http.TimeFormat): 3 * time.Second} {
		if got := ParseAfter(in, now); got != want {
			t.Errorf("ParseAfter(%q) = %v, want %v", in, got, want)
		}
	}
	h := http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}
	if got := After(h, now); got != 250*time.Millisecond {
		t.Errorf("After prefers milliseconds: %v", got)
	}
	if !Retryable(429) || !Retryable(503) || Retryable(400) || Retryable(401) {
		t.Error("Retryable")
	}
}
