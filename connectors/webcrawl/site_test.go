package webcrawl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docindex/docindex/connectors/webcrawl"
	"github.com/docindex/docindex/plugins/connector"
)

// site is a small web site the tests write and change as they go, served on
// loopback. It records every request.
type site struct {
	srv *httptest.Server

	mu     sync.Mutex
	pages  map[string]*sitePage // by request URI
	robots string               // robots.txt; "" answers 404
	reqs   []siteRequest
}

type sitePage struct {
	body         string
	contentType  string // default text/html; charset=utf-8
	etag         string
	lastModified time.Time
	status       int    // default 200
	location     string // with a 3xx status
	header       map[string]string
	failures     int // answer 503 (Retry-After: 0) this many times first
}

type siteRequest struct {
	path            string
	at              time.Time
	ifNoneMatch     string
	ifModifiedSince string
	userAgent       string
	status          int
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{pages: map[string]*sitePage{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// newSiteOn serves the site on a given loopback address ("127.0.0.2:0").
func newSiteOn(t *testing.T, addr string) *site {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	s := &site{pages: map[string]*sitePage{}}
	s.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(s.serve)}}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rec := siteRequest{
		path:            r.URL.RequestURI(),
		at:              time.Now(),
		ifNoneMatch:     r.Header.Get("If-None-Match"),
		ifModifiedSince: r.Header.Get("If-Modified-Since"),
		userAgent:       r.Header.Get("User-Agent"),
	}
	status := s.respond(w, r)
	rec.status = status
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()
}

// respond writes the answer; s.mu is held.
func (s *site) respond(w http.ResponseWriter, r *http.Request) int {
	if r.URL.Path == "/robots.txt" && s.robots != "" {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, s.robots)
		return http.StatusOK
	}
	p, ok := s.pages[r.URL.RequestURI()]
	if !ok {
		http.NotFound(w, r)
		return http.StatusNotFound
	}
	for k, v := range p.header {
		w.Header().Set(k, v)
	}
	if p.failures > 0 {
		p.failures--
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusServiceUnavailable)
		return http.StatusServiceUnavailable
	}
	if p.location != "" {
		w.Header().Set("Location", p.location)
		w.WriteHeader(p.status)
		return p.status
	}
	if p.etag != "" {
		w.Header().Set("ETag", p.etag)
		if r.Header.Get("If-None-Match") == p.etag {
			w.WriteHeader(http.StatusNotModified)
			return http.StatusNotModified
		}
	}
	if !p.lastModified.IsZero() {
		w.Header().Set("Last-Modified", p.lastModified.UTC().Format(http.TimeFormat))
		if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && p.etag == "" && !p.lastModified.Truncate(time.Second).After(ims) {
			w.WriteHeader(http.StatusNotModified)
			return http.StatusNotModified
		}
	}
	ct := p.contentType
	if ct == "" {
		ct = "text/html; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", fmt.Sprint(len(p.body)))
	status := p.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, p.body)
	return status
}

func (s *site) url(path string) string { return s.srv.URL + path }

func (s *site) set(path string, p *sitePage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = p
}

// page sets an HTML page at path with a title and links, and an ETag.
func (s *site) page(path, title string, links ...string) {
	s.set(path, &sitePage{body: htmlPage(title, "", links...), etag: etagOf(path, title)})
}

func (s *site) remove(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pages, path)
}

func (s *site) setRobots(txt string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.robots = txt
}

// requests returns the requests recorded so far and forgets them.
func (s *site) requests() []siteRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.reqs
	s.reqs = nil
	return out
}

func paths(reqs []siteRequest) map[string]int {
	out := map[string]int{}
	for _, r := range reqs {
		out[r.path]++
	}
	return out
}

func etagOf(parts ...string) string {
	return fmt.Sprintf("%q", strings.Join(parts, "|"))
}

// htmlPage is an HTML document with a title, extra head elements and links.
func htmlPage(title, head string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>%s</head><body>\n<h1>%s</h1>\n<ul>\n", title, head, title)
	for _, l := range links {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", l, l)
	}
	b.WriteString("</ul>\n<p>Some text so that the page is a page.</p>\n</body></html>\n")
	return b.String()
}

// config builds a configuration; allowPrivateNetworks and a high request
// rate are set unless kv overrides them.
func config(t *testing.T, kv map[string]any) json.RawMessage {
	t.Helper()
	m := map[string]any{"allowPrivateNetworks": true, "requestsPerSecond": 1000}
	for k, v := range kv {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newConnector returns a connector that logs warnings to the test's output.
func newConnector(t *testing.T, opts ...webcrawl.Option) *webcrawl.Connector {
	t.Helper()
	l := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	return webcrawl.New(append([]webcrawl.Option{webcrawl.WithLogger(l)}, opts...)...)
}

// syncRun is what one sync said.
type syncRun struct {
	items    map[string]connector.Item
	order    []string // item IDs in the order listed
	cursor   []byte
	snapshot bool
	err      error
}

func (r syncRun) ids() []string { return r.order }

func runSync(t *testing.T, c connector.Connector, cfg json.RawMessage, cursor []byte) syncRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := syncRun{items: map[string]connector.Item{}}
	n := 0
	for ev, err := range c.Sync(ctx, connector.SyncRequest{Config: cfg, Cursor: cursor}) {
		if err != nil {
			run.err = err
			break
		}
		n++
		switch ev.Kind {
		case connector.EventSnapshot:
			if n != 1 {
				t.Errorf("snapshot as event %d", n)
			}
			run.snapshot = true
		case connector.EventUpsert:
			if _, dup := run.items[ev.Item.ID]; dup {
				t.Errorf("item %s listed twice", ev.Item.ID)
			}
			run.items[ev.Item.ID] = ev.Item
			run.order = append(run.order, ev.Item.ID)
		case connector.EventCheckpoint:
			run.cursor = ev.Cursor
		case connector.EventDelete:
			t.Errorf("unexpected delete event %q", ev.ID)
		}
	}
	if !run.snapshot && run.err == nil {
		t.Error("sync sent no snapshot")
	}
	return run
}

// mustSync is runSync that fails the test on a sync error.
func mustSync(t *testing.T, c connector.Connector, cfg json.RawMessage, cursor []byte) syncRun {
	t.Helper()
	run := runSync(t, c, cfg, cursor)
	if run.err != nil {
		t.Fatalf("sync: %v", run.err)
	}
	return run
}

func fetchAll(t *testing.T, c connector.Connector, cfg json.RawMessage, it connector.Item) (string, *connector.Content) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	content, err := c.Fetch(ctx, connector.FetchRequest{Config: cfg, Item: it})
	if err != nil {
		t.Fatalf("fetch %s: %v", it.ID, err)
	}
	defer content.Body.Close()
	b, err := io.ReadAll(content.Body)
	if err != nil {
		t.Fatalf("fetch %s: read: %v", it.ID, err)
	}
	return string(b), content
}

// pgManual is the directory of Debian's PostgreSQL HTML manual.
const pgManual = "/usr/share/doc/postgresql-doc-15/html"

// servePGManual serves the PostgreSQL manual on loopback and returns its
// base URL and the number of HTML pages in it.
func servePGManual(t *testing.T) (string, int) {
	t.Helper()
	entries, err := os.ReadDir(pgManual)
	if err != nil {
		t.Fatalf("the PostgreSQL manual is not installed (%v): run scripts/webcrawl-deps.sh as root "+
			"(apt-get install postgresql-doc-15)", err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".html") {
			n++
		}
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(pgManual)))
	t.Cleanup(srv.Close)
	return srv.URL, n
}
