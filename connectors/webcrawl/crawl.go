package webcrawl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/docindex/docindex/plugins/connector"
)

// maxSitemaps bounds the sitemap documents one crawl reads (indexes
// included).
const maxSitemaps = 1000

// Origins of a crawl target; a failure to crawl a start URL or to read a
// sitemap makes the sync fail.
const (
	fromLink    = ""
	fromStart   = "start URL"
	fromSitemap = "sitemap entry"
)

var errDisallowed = errors.New("disallowed by robots.txt")

// Sync crawls the site and lists its HTML pages. Every sync lists the whole
// site (it starts with a Snapshot); its closing checkpoint carries the
// validators of the pages seen, for conditional requests next time.
func (c *Connector) Sync(ctx context.Context, req connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		s, err := c.parseConfig(req.Config)
		if err != nil {
			yield(connector.Event{}, fmt.Errorf("webcrawl: %w", err))
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cr := &crawl{
			c:       c,
			s:       s,
			cache:   decodeCursor(req.Cursor),
			log:     c.log.With("connector", Type),
			queued:  map[string]bool{},
			done:    map[string]bool{},
			emitted: map[string]bool{},
			next:    map[string]*cachedPage{},
		}
		cr.pages = c.client(s, cr.checkRedirect)
		cr.plain = c.client(s, func(r *http.Request) error {
			return c.limits.wait(r.Context(), r.URL.Host, s.interval(0))
		})
		if !yield(connector.Snapshot(), nil) {
			return
		}
		cr.run(ctx, cancel, yield)
	}
}

// crawl is the state of one sync. The fields below "handler state" are
// touched only by the goroutine running the iterator.
type crawl struct {
	c      *Connector
	s      *settings
	cache  map[string]*cachedPage // from the cursor; read-only
	log    *slog.Logger
	robots robotsCache
	pages  *http.Client // follows redirects within the crawl's scope and robots.txt
	plain  *http.Client // robots.txt and sitemaps

	// handler state
	queue    []target
	queued   map[string]bool        // ever put in the queue
	done     map[string]bool        // URLs whose page is known: requested, redirected to, or named canonical
	emitted  map[string]bool        // item IDs listed
	next     map[string]*cachedPage // the next cursor
	fetched  int                    // pages requested, for maxPages
	listed   int
	reused   int // 304 answers
	failures []error
}

// target is a URL to crawl.
type target struct {
	u      *url.URL
	depth  int
	origin string
}

// result is the outcome of requesting one target.
type result struct {
	t           target
	page        *cachedPage // nil unless the target is an HTML page
	notModified bool
	skip        string // why the target lists nothing, when that is not a failure
	disallowed  bool   // robots.txt forbids the target: not a page request
	err         error  // a failure: the sync will end in error
}

func (cr *crawl) run(ctx context.Context, cancel context.CancelFunc, yield func(connector.Event, error) bool) {
	start := time.Now()
	for _, u := range cr.s.starts {
		cr.enqueue(u, 0, fromStart)
	}
	cr.readSitemaps(ctx)

	type job struct {
		t    target
		done chan result
	}
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	// Up to concurrency pages are requested at once, but their results
	// are handled strictly in the order they were queued, so the crawl
	// lists the same pages in the same order as a sequential one would,
	// whatever the timing: a page limit never cuts a different set of
	// pages from one sync to the next.
	var pending []*job
	for {
		for len(pending) < cr.c.concurrency && cr.fetched+len(pending) < cr.s.maxPages && len(cr.queue) > 0 {
			t := cr.queue[0]
			cr.queue = cr.queue[1:]
			if cr.done[t.u.String()] {
				continue
			}
			j := &job{t: t, done: make(chan result, 1)}
			wg.Add(1)
			go func() {
				defer wg.Done()
				j.done <- cr.visit(ctx, j.t)
			}()
			pending = append(pending, j)
		}
		if len(pending) == 0 {
			break
		}
		j := pending[0]
		pending = pending[1:]
		r := <-j.done
		if ctx.Err() != nil {
			break // the results now are cancellations, not failures of the site
		}
		if !cr.handle(r, yield) {
			return
		}
	}
	if err := ctx.Err(); err != nil {
		yield(connector.Event{}, fmt.Errorf("webcrawl: crawl stopped: %w", err))
		return
	}
	cr.log.Info("crawl finished", "pages", cr.fetched, "listed", cr.listed, "notModified", cr.reused,
		"failures", len(cr.failures), "unvisited", len(cr.queue), "duration", time.Since(start).Round(time.Millisecond))
	if len(cr.failures) > 0 {
		yield(connector.Event{}, &CrawlError{Errs: cr.failures})
		return
	}
	cursor, err := encodeCursor(cr.next)
	if err != nil {
		yield(connector.Event{}, err)
		return
	}
	if len(cursor) > maxCursorBytes {
		cr.log.Warn("too many pages to remember their validators; the next sync downloads every page again", "cursorBytes", len(cursor))
		return
	}
	yield(connector.Checkpoint(cursor), nil)
}

// enqueue adds u to the crawl unless it was seen or is out of scope.
func (cr *crawl) enqueue(u *url.URL, depth int, origin string) {
	k := u.String()
	if cr.queued[k] || cr.done[k] || !cr.s.inScope(u) {
		return
	}
	if origin != fromStart && isAsset(u) {
		return
	}
	cr.queued[k] = true
	cr.queue = append(cr.queue, target{u: u, depth: depth, origin: origin})
}

// handle takes the result of one target, in queue order, and lists its page.
// It returns false when the consumer stopped the iteration.
func (cr *crawl) handle(r result, yield func(connector.Event, error) bool) bool {
	key := r.t.u.String()
	if cr.done[key] {
		// An earlier page named this URL as its canonical or redirected
		// to it: a sequential crawl would not have requested it.
		return true
	}
	if r.disallowed {
		if r.t.origin == fromStart {
			cr.fail(r.t, fmt.Errorf("%w (set \"respectRobots\": false to crawl it anyway)", errDisallowed))
		}
		return true
	}
	cr.fetched++
	cr.done[key] = true
	switch {
	case r.err != nil:
		cr.fail(r.t, r.err)
		return true
	case r.page == nil:
		if r.t.origin == fromStart {
			cr.fail(r.t, errors.New(r.skip))
		} else {
			cr.log.Debug("page not listed", "url", key, "reason", r.skip)
		}
		return true
	}
	p := r.page
	cr.next[key] = p
	if r.notModified {
		cr.reused++
	}
	final := r.t.u
	if p.Final != "" {
		fu, err := url.Parse(p.Final)
		if err != nil {
			cr.fail(r.t, fmt.Errorf("redirected to an unparsable URL: %w", err))
			return true
		}
		final = fu
		if cr.done[p.Final] {
			return true
		}
		cr.done[p.Final] = true
	}
	noIndex, noFollow := false, false
	if cr.s.respectRobots {
		hi, hf := robotsDirectives(p.HeaderRobots)
		noIndex, noFollow = p.Page.NoIndex || hi, p.Page.NoFollow || hf
	}
	id := final
	if p.Page.Canonical != "" && p.Page.Canonical != final.String() {
		if cu, err := url.Parse(p.Page.Canonical); err == nil && cr.s.inScope(cu) {
			id = cu
			cr.done[cu.String()] = true
		}
	}
	if !noFollow && r.t.depth < cr.s.maxDepth {
		for _, l := range p.Page.Links {
			if lu, err := url.Parse(l); err == nil {
				cr.enqueue(lu, r.t.depth+1, fromLink)
			}
		}
	}
	switch {
	case noIndex:
		cr.log.Debug("page not listed", "url", key, "reason", "robots noindex")
		return true
	case !cr.s.included(final.String()):
		return true
	case cr.emitted[id.String()]:
		return true
	}
	cr.emitted[id.String()] = true
	cr.listed++
	return yield(connector.Upsert(cr.item(id, final, p)), nil)
}

func (cr *crawl) item(id, final *url.URL, p *cachedPage) connector.Item {
	md := map[string]any{"url": id.String(), "fetchUrl": final.String()}
	if p.Page.Title != "" {
		md["title"] = p.Page.Title
	}
	if p.Page.Description != "" {
		md["description"] = p.Page.Description
	}
	if p.Page.Language != "" {
		md["language"] = p.Page.Language
	}
	it := connector.Item{
		ID:          id.String(),
		Version:     p.Version,
		Name:        itemName(id),
		Path:        id.Host + id.RequestURI(),
		URL:         id.String(),
		ContentType: p.ContentType,
		Size:        p.Size,
		Metadata:    md,
	}
	if t, err := http.ParseTime(p.LastModified); err == nil {
		it.ModifiedAt = t.UTC()
	}
	return it
}

func (cr *crawl) fail(t target, err error) {
	what := "page " + t.u.String()
	if t.origin != fromLink {
		what = t.origin + " " + t.u.String()
	}
	err = fmt.Errorf("%s: %w", what, err)
	cr.log.Warn("page could not be crawled", "error", err)
	cr.failures = append(cr.failures, err)
}

// CrawlError is the error a sync ends with when pages could not be
// crawled. The sync has listed every other page, but a page that failed
// may exist still, so the host must not delete what the sync missed: the
// error keeps it from doing so.
type CrawlError struct {
	Errs []error
}

func (e *CrawlError) Error() string {
	const show = 5
	var b strings.Builder
	fmt.Fprintf(&b, "webcrawl: %d page(s) could not be crawled, so this sync deletes nothing", len(e.Errs))
	b.WriteString(" (leave a page that stays broken out with \"exclude\"): ")
	for i, err := range e.Errs {
		if i == show {
			fmt.Fprintf(&b, "; and %d more", len(e.Errs)-show)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e *CrawlError) Unwrap() []error { return e.Errs }

// visit requests one target. It runs on its own goroutine.
func (cr *crawl) visit(ctx context.Context, t target) result {
	var delay time.Duration
	if cr.s.respectRobots {
		rules, err := cr.robots.get(ctx, t.u, cr.readRobots)
		switch {
		case err != nil:
			return result{t: t, err: err}
		case errors.Is(rules.err, ErrPrivateAddress):
			return result{t: t, err: rules.err} // about the host, not its robots.txt
		case rules.err != nil:
			return result{t: t, err: fmt.Errorf("robots.txt: %w", rules.err)}
		case !rules.allowed(t.u):
			return result{t: t, disallowed: true}
		}
		delay = rules.delay()
	}
	ctx, cancel := context.WithTimeout(ctx, cr.c.timeout)
	defer cancel()
	req, err := cr.c.newRequest(ctx, cr.s, t.u)
	if err != nil {
		return result{t: t, err: err}
	}
	cached := cr.cache[t.u.String()]
	if cached != nil {
		if cached.ETag != "" {
			req.Header.Set("If-None-Match", cached.ETag)
		}
		if cached.LastModified != "" {
			req.Header.Set("If-Modified-Since", cached.LastModified)
		}
	}
	resp, err := cr.do(req, cr.pages, delay)
	switch {
	case errors.Is(err, errDisallowed):
		return result{t: t, disallowed: true}
	case errors.Is(err, errOffScope):
		return result{t: t, skip: unwrapURLError(err).Error()}
	case err != nil:
		return result{t: t, err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	final := normalize(resp.Request.URL)
	switch {
	case resp.StatusCode == http.StatusNotModified && cached != nil:
		return result{t: t, page: cached, notModified: true}
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return result{t: t, skip: "HTTP " + resp.Status}
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return result{t: t, err: fmt.Errorf("HTTP %s", resp.Status)}
	case resp.StatusCode >= 300:
		return result{t: t, skip: "HTTP " + resp.Status}
	}
	ct, ok := htmlType(resp.Header.Get("Content-Type"))
	if !ok {
		return result{t: t, skip: fmt.Sprintf("not an HTML page (%s)", ct)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, cr.c.maxPageBytes+1))
	if err != nil {
		return result{t: t, err: fmt.Errorf("read: %w", err)}
	}
	if int64(len(body)) > cr.c.maxPageBytes {
		return result{t: t, skip: fmt.Sprintf("larger than %d bytes", cr.c.maxPageBytes)}
	}
	pg, err := parsePage(body, final, ct)
	if err != nil {
		return result{t: t, skip: err.Error()}
	}
	p := &cachedPage{
		ETag:         resp.Header.Get("ETag"),
		LastModified: resp.Header.Get("Last-Modified"),
		Version:      headerVersion(resp.Header),
		ContentType:  ct,
		Size:         int64(len(body)),
		HeaderRobots: strings.Join(resp.Header.Values("X-Robots-Tag"), ", "),
		Page:         *pg,
	}
	if f := final.String(); f != t.u.String() {
		p.Final = f
	}
	if p.Version == "" {
		sum := sha256.Sum256(body)
		p.Version = "sha256:" + hex.EncodeToString(sum[:])
	}
	return result{t: t, page: p}
}

var errOffScope = errors.New("redirected off the crawl's scope")

// checkRedirect vets a redirect of a page request: it must stay in the
// crawl's scope and be allowed by robots.txt, and it is paced like any
// request.
func (cr *crawl) checkRedirect(r *http.Request) error {
	u := normalize(r.URL)
	if !cr.s.inScope(u) {
		return fmt.Errorf("%w: to %s", errOffScope, u)
	}
	var delay time.Duration
	if cr.s.respectRobots {
		rules, err := cr.robots.get(r.Context(), u, cr.readRobots)
		switch {
		case err != nil:
			return err
		case errors.Is(rules.err, ErrPrivateAddress):
			return rules.err
		case rules.err != nil:
			return fmt.Errorf("robots.txt: %w", rules.err)
		case !rules.allowed(u):
			return fmt.Errorf("redirected to %s: %w", u, errDisallowed)
		}
		delay = rules.delay()
	}
	return cr.c.limits.wait(r.Context(), u.Host, cr.s.interval(delay))
}

// do sends req after waiting for its host's turn, and retries twice when
// the server answers 429 or 503 (after its Retry-After, at most 30s).
func (cr *crawl) do(req *http.Request, client *http.Client, delay time.Duration) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		if err := cr.c.limits.wait(ctx, req.URL.Host, cr.s.interval(delay)); err != nil {
			return nil, err
		}
		resp, err := client.Do(req.Clone(ctx))
		if err != nil {
			return nil, err
		}
		if attempt >= 2 || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
			return resp, nil
		}
		wait := min(retryAfter(resp.Header.Get("Retry-After"), time.Duration(attempt+1)*time.Second), 30*time.Second)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// readRobots fetches a host's robots.txt (u is its URL).
func (cr *crawl) readRobots(ctx context.Context, u *url.URL) *robotsRules {
	ctx, cancel := context.WithTimeout(ctx, cr.c.timeout)
	defer cancel()
	req, err := cr.c.newRequest(ctx, cr.s, u)
	if err != nil {
		return &robotsRules{err: err}
	}
	req.Header.Set("Accept", "text/plain,*/*;q=0.5")
	resp, err := cr.do(req, cr.plain, 0)
	if err != nil {
		return &robotsRules{err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	rules := readRobots(resp, cr.s.userAgent)
	if rules.invalid != nil {
		cr.log.Warn("robots.txt ignored: it cannot be parsed", "url", u.String(), "error", strings.TrimSpace(rules.invalid.Error()))
	}
	return rules
}

// readSitemaps reads the configured sitemaps, following sitemap indexes,
// and queues the pages they list at depth 0.
func (cr *crawl) readSitemaps(ctx context.Context) {
	queue := append([]*url.URL(nil), cr.s.sitemaps...)
	seen := map[string]bool{}
	for n := 0; len(queue) > 0 && n < maxSitemaps && ctx.Err() == nil; n++ {
		u := queue[0]
		queue = queue[1:]
		if seen[u.String()] {
			continue
		}
		seen[u.String()] = true
		sm, err := cr.readSitemap(ctx, u)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			cr.fail(target{u: u, origin: "sitemap"}, err)
			continue
		}
		for _, raw := range sm.Sitemaps {
			if su, ok := resolve(u, raw); ok && (!cr.s.sameHost || cr.s.hosts[su.Host]) {
				queue = append(queue, su)
			}
		}
		for _, raw := range sm.Pages {
			if pu, ok := resolve(u, raw); ok {
				cr.enqueue(pu, 0, fromSitemap)
			}
		}
	}
}

func (cr *crawl) readSitemap(ctx context.Context, u *url.URL) (*sitemap, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*cr.c.timeout)
	defer cancel()
	req, err := cr.c.newRequest(ctx, cr.s, u)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/xml,text/xml;q=0.9,*/*;q=0.5")
	resp, err := cr.do(req, cr.plain, 0)
	if err != nil {
		return nil, unwrapURLError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	return parseSitemap(resp.Body)
}
