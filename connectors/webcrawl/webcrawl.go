package webcrawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

// Type is the source type of this connector.
const Type = "webcrawl"

// Version is the connector's version.
const Version = "1.0.0"

// Defaults of the options.
const (
	DefaultConcurrency    = 2
	DefaultRequestTimeout = 30 * time.Second
	DefaultMaxPageBytes   = 16 << 20
)

// Connector crawls web sites. It is safe for concurrent use; build it with
// New.
type Connector struct {
	userAgent    string
	concurrency  int
	timeout      time.Duration
	maxPageBytes int64
	log          *slog.Logger
	guard        guard

	// Two transports, so that connections opened for a source that may
	// reach private networks are never reused by one that may not.
	public, private *http.Transport
	// limits paces requests per host across all syncs and fetches.
	limits hostLimits
}

var _ connector.Connector = (*Connector)(nil)

// Option adjusts a Connector.
type Option func(*Connector)

// WithConcurrency sets how many pages one sync requests at a time (default
// 2). The request rate per host stays bounded by requestsPerSecond.
func WithConcurrency(n int) Option {
	return func(c *Connector) {
		if n > 0 {
			c.concurrency = n
		}
	}
}

// WithRequestTimeout bounds the request and download of one page during a
// sync (default 30s).
func WithRequestTimeout(d time.Duration) Option {
	return func(c *Connector) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithMaxPageBytes bounds the size of a page the crawl reads for links
// (default 16 MiB); larger pages are not listed.
func WithMaxPageBytes(n int64) Option {
	return func(c *Connector) {
		if n > 0 {
			c.maxPageBytes = n
		}
	}
}

// WithLogger sets the logger (default plugins.Logger(), which reaches the
// host's log when the connector runs as a plugin).
func WithLogger(l *slog.Logger) Option {
	return func(c *Connector) {
		if l != nil {
			c.log = l
		}
	}
}

// WithAllowedNetworks lets every source reach these networks although they
// are private (an intranet's documentation server, say), without setting
// allowPrivateNetworks, which opens all of them.
func WithAllowedNetworks(prefixes ...netip.Prefix) Option {
	return func(c *Connector) { c.guard.extra = append(c.guard.extra, prefixes...) }
}

// WithUserAgent sets the default User-Agent, used when a source sets none
// (default "docindex-webcrawl/<Version>").
func WithUserAgent(ua string) Option {
	return func(c *Connector) {
		if ua = strings.TrimSpace(ua); ua != "" {
			c.userAgent = ua
		}
	}
}

// New returns a web crawler connector.
func New(opts ...Option) *Connector {
	c := &Connector{
		userAgent:    "docindex-webcrawl/" + Version + " (+https://github.com/docindex/docindex)",
		concurrency:  DefaultConcurrency,
		timeout:      DefaultRequestTimeout,
		maxPageBytes: DefaultMaxPageBytes,
	}
	for _, o := range opts {
		o(c)
	}
	if c.log == nil {
		c.log = plugins.Logger()
	}
	c.public = newTransport(c.guard, false)
	c.private = newTransport(c.guard, true)
	return c
}

func (c *Connector) transport(s *settings) *http.Transport {
	if s.allowPrivate {
		return c.private
	}
	return c.public
}

// Describe tells what the connector is and how it is configured.
func (c *Connector) Describe(context.Context) (connector.Description, error) {
	return connector.Description{
		Type:        Type,
		Version:     Version,
		DisplayName: "Web crawler",
		Description: "Crawls web sites from start URLs and sitemaps and lists their HTML pages, honouring robots.txt.",
		// Not incremental: every sync lists the whole site (its cursor only
		// caches validators for conditional requests). No access lists:
		// the pages are public.
		Capabilities: []connector.Capability{connector.CapSchedule},
		ConfigSchema: json.RawMessage(configSchema),
	}, nil
}

// Validate checks a configuration without contacting any site.
func (c *Connector) Validate(_ context.Context, config json.RawMessage) error {
	if _, err := c.parseConfig(config); err != nil {
		return fmt.Errorf("webcrawl: %w", err)
	}
	return nil
}

// CheckHealth requests the first few start URLs.
func (c *Connector) CheckHealth(ctx context.Context, config json.RawMessage) (connector.Health, error) {
	s, err := c.parseConfig(config)
	if err != nil {
		return connector.Health{}, fmt.Errorf("webcrawl: %w", err)
	}
	starts := s.starts
	if len(starts) > 3 {
		starts = starts[:3]
	}
	var bad []string
	for _, u := range starts {
		if err := c.probe(ctx, s, u); err != nil {
			bad = append(bad, err.Error())
		}
	}
	switch {
	case len(bad) == 0:
		return connector.Health{Status: connector.StatusOK, Message: fmt.Sprintf("%d start URL(s) reachable", len(starts))}, nil
	case len(bad) < len(starts):
		return connector.Health{Status: connector.StatusDegraded, Message: strings.Join(bad, "; ")}, nil
	default:
		return connector.Health{Status: connector.StatusDown, Message: strings.Join(bad, "; ")}, nil
	}
}

func (c *Connector) probe(ctx context.Context, s *settings, u *url.URL) error {
	ctx, cancel := context.WithTimeout(ctx, min(c.timeout, 15*time.Second))
	defer cancel()
	client := c.client(s, nil)
	if err := c.limits.wait(ctx, u.Host, s.interval(0)); err != nil {
		return fmt.Errorf("start URL %s: %w", u, err)
	}
	req, err := c.newRequest(ctx, s, u)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("start URL %s: %w", u, unwrapURLError(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 400 {
		return fmt.Errorf("start URL %s: HTTP %s", u, resp.Status)
	}
	return nil
}

// Fetch streams the page of an item.
func (c *Connector) Fetch(ctx context.Context, req connector.FetchRequest) (*connector.Content, error) {
	s, err := c.parseConfig(req.Config)
	if err != nil {
		return nil, fmt.Errorf("webcrawl: fetch: %w", err)
	}
	raw := req.Item.ID
	if f, ok := req.Item.Metadata["fetchUrl"].(string); ok && f != "" {
		raw = f
	}
	pu, err := url.Parse(raw)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return nil, fmt.Errorf("webcrawl: fetch %q: not an http(s) URL: %w", req.Item.ID, plugins.ErrInvalidArgument)
	}
	u := normalize(pu)
	if s.sameHost && !s.hosts[u.Host] {
		return nil, fmt.Errorf("webcrawl: fetch %s: not on the hosts of this source: %w", u, plugins.ErrInvalidArgument)
	}
	if err := c.limits.wait(ctx, u.Host, s.interval(0)); err != nil {
		return nil, fmt.Errorf("webcrawl: fetch %s: %w", u, err)
	}
	client := c.client(s, func(r *http.Request) error {
		if s.sameHost && !s.hosts[normalize(r.URL).Host] {
			return fmt.Errorf("redirected to %s, off the hosts of this source", normalize(r.URL))
		}
		return c.limits.wait(r.Context(), r.URL.Host, s.interval(0))
	})
	hreq, err := c.newRequest(ctx, s, u)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("webcrawl: fetch %s: %w", u, unwrapURLError(err))
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		err := fmt.Errorf("webcrawl: fetch %s: HTTP %s", u, resp.Status)
		switch resp.StatusCode {
		case http.StatusNotFound, http.StatusGone:
			return nil, fmt.Errorf("%w: %w", err, plugins.ErrNotFound)
		case http.StatusUnauthorized:
			return nil, fmt.Errorf("%w: %w", err, plugins.ErrUnauthenticated)
		case http.StatusForbidden:
			return nil, fmt.Errorf("%w: %w", err, plugins.ErrPermissionDenied)
		case http.StatusTooManyRequests:
			return nil, fmt.Errorf("%w: %w", err, plugins.ErrRateLimited)
		}
		return nil, err
	}
	ct := resp.Header.Get("Content-Type")
	if clean, ok := htmlType(ct); ok {
		ct = clean
	}
	return &connector.Content{
		ContentType: ct,
		Size:        resp.ContentLength,
		Version:     headerVersion(resp.Header),
		Body:        resp.Body,
	}, nil
}

// client returns an HTTP client for a source. redirect, if not nil, vets
// each redirect (after the hop limit and the scheme are checked).
func (c *Connector) client(s *settings, redirect func(*http.Request) error) *http.Client {
	return &http.Client{
		Transport: c.transport(s),
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			if r.URL.Scheme != "http" && r.URL.Scheme != "https" {
				return fmt.Errorf("redirected to a %s: URL", r.URL.Scheme)
			}
			if redirect != nil {
				return redirect(r)
			}
			return nil
		},
	}
}

func (c *Connector) newRequest(ctx context.Context, s *settings, u *url.URL) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("webcrawl: request %s: %w", u, err)
	}
	req.Header.Set("User-Agent", s.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5")
	return req, nil
}

// interval is the least time between two requests to one host.
func (s *settings) interval(crawlDelay time.Duration) time.Duration {
	return max(time.Duration(float64(time.Second)/s.rps), crawlDelay)
}

// headerVersion derives a version from a response's validators; "" when it
// has none.
func headerVersion(h http.Header) string {
	if e := h.Get("ETag"); e != "" {
		return "etag:" + e
	}
	if lm := h.Get("Last-Modified"); lm != "" {
		if t, err := http.ParseTime(lm); err == nil {
			return "modified:" + t.UTC().Format(time.RFC3339)
		}
	}
	return ""
}

// retryAfter reads a Retry-After header (seconds or a date).
func retryAfter(v string, def time.Duration) time.Duration {
	if v == "" {
		return def
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return def
}

// unwrapURLError drops the *url.Error layer ("Get \"http://...\": ...")
// where the message names the URL anyway.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
