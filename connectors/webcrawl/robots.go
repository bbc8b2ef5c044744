package webcrawl

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

// maxRobotsBytes bounds a robots.txt (Google reads the first 500 KiB).
const maxRobotsBytes = 512 << 10

// maxCrawlDelay caps a robots.txt Crawl-delay, so that a site cannot stall
// a crawl indefinitely.
const maxCrawlDelay = 60 * time.Second

// robotsRules is what one host's robots.txt says for the crawl's user agent.
type robotsRules struct {
	group *robotstxt.Group // nil: everything allowed
	err   error            // robots.txt could not be read: every page of the host fails
	// invalid is why robots.txt was ignored: it could not be parsed.
	invalid error
}

func (r *robotsRules) allowed(u *url.URL) bool {
	return r.group == nil || r.group.Test(u.RequestURI())
}

func (r *robotsRules) delay() time.Duration {
	if r.group == nil {
		return 0
	}
	return min(r.group.CrawlDelay, maxCrawlDelay)
}

// robotsCache reads each host's robots.txt once per crawl.
type robotsCache struct {
	mu    sync.Mutex
	hosts map[string]*robotsEntry
}

type robotsEntry struct {
	ready chan struct{}
	rules *robotsRules
}

// get returns the rules for u's host, reading robots.txt with fetch the
// first time. Concurrent callers for one host wait for the one read.
func (c *robotsCache) get(ctx context.Context, u *url.URL, fetch func(context.Context, *url.URL) *robotsRules) (*robotsRules, error) {
	key := u.Scheme + "://" + u.Host
	c.mu.Lock()
	if c.hosts == nil {
		c.hosts = map[string]*robotsEntry{}
	}
	e, ok := c.hosts[key]
	if !ok {
		e = &robotsEntry{ready: make(chan struct{})}
		c.hosts[key] = e
	}
	c.mu.Unlock()
	if !ok {
		e.rules = fetch(ctx, &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"})
		close(e.ready)
	}
	select {
	case <-e.ready:
		return e.rules, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readRobots interprets a robots.txt response the way Google does: a 2xx
// is parsed, a 4xx means no rules. A 5xx or a network error is an error,
// not "disallow everything": that would list no page and make the host
// delete them all.
func readRobots(resp *http.Response, agent string) *robotsRules {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRobotsBytes))
	if err != nil {
		return &robotsRules{err: fmt.Errorf("read %s: %w", resp.Request.URL, err)}
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		data, err := robotstxt.FromBytes(body)
		if err != nil {
			// An unparsable file sets no rules that can be honoured.
			return &robotsRules{invalid: err}
		}
		return &robotsRules{group: data.FindGroup(agent)}
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return &robotsRules{}
	default:
		return &robotsRules{err: fmt.Errorf("%s: HTTP %d", resp.Request.URL, resp.StatusCode)}
	}
}
