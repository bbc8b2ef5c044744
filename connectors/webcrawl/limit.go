package webcrawl

import (
	"context"
	"sync"
	"time"
)

// hostLimits spaces the requests to each host. It belongs to a Connector, so
// that the syncs and fetches that run at the same time against one host
// share its budget.
type hostLimits struct {
	mu    sync.Mutex
	hosts map[string]*slot
}

type slot struct {
	next time.Time // when the next request may start
	used time.Time // when the slot was last reserved, for pruning
}

// idle is how long an unused host entry is kept.
const idle = 10 * time.Minute

// wait blocks until a request to host may start, at least interval after
// the previous one; the first request to a host starts at once.
func (l *hostLimits) wait(ctx context.Context, host string, interval time.Duration) error {
	now := time.Now()
	l.mu.Lock()
	if l.hosts == nil {
		l.hosts = map[string]*slot{}
	}
	s := l.hosts[host]
	if s == nil {
		if len(l.hosts) > 1024 {
			l.prune(now)
		}
		s = &slot{}
		l.hosts[host] = s
	}
	at := s.next
	if at.Before(now) {
		at = now
	}
	s.next = at.Add(interval)
	s.used = now
	l.mu.Unlock()

	d := at.Sub(now)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// prune forgets hosts not used for a while; l.mu is held.
func (l *hostLimits) prune(now time.Time) {
	for h, s := range l.hosts {
		if now.Sub(s.used) > idle && now.After(s.next) {
			delete(l.hosts, h)
		}
	}
}
