package webcrawl_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/connectors/webcrawl"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func wantIDs(t *testing.T, run syncRun, want ...string) {
	t.Helper()
	got := sortedKeys(run.items)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("listed items\n got %q\nwant %q", got, want)
	}
}

func TestDescribe(t *testing.T) {
	c := newConnector(t)
	d, err := c.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Type != "webcrawl" || d.Version == "" || d.DisplayName == "" {
		t.Errorf("description %+v", d)
	}
	if !slices.Equal(d.Capabilities, []connector.Capability{connector.CapSchedule}) {
		t.Errorf("capabilities %v, want [schedule]", d.Capabilities)
	}
	var schema struct {
		Type       string                    `json:"type"`
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(d.ConfigSchema, &schema); err != nil {
		t.Fatal(err)
	}
	keys := []string{"allowPrivateNetworks", "exclude", "include", "maxDepth", "maxPages", "requestsPerSecond",
		"respectRobots", "sameHost", "sitemapUrls", "startUrls", "userAgent"}
	if got := sortedKeys(schema.Properties); !slices.Equal(got, keys) {
		t.Errorf("config keys %v, want %v", got, keys)
	}
	for k, p := range schema.Properties {
		if s, _ := p["description"].(string); s == "" {
			t.Errorf("key %s has no description", k)
		}
	}
	defaults := map[string]any{"maxDepth": 2.0, "maxPages": 1000.0, "sameHost": true, "respectRobots": true,
		"requestsPerSecond": 2.0, "allowPrivateNetworks": false}
	for k, want := range defaults {
		if got := schema.Properties[k]["default"]; got != want {
			t.Errorf("default of %s: %v, want %v", k, got, want)
		}
	}
	if !slices.Equal(schema.Required, []string{"startUrls"}) {
		t.Errorf("required %v", schema.Required)
	}
	if secrets, err := connector.SecretFields(d.ConfigSchema); err != nil || len(secrets) != 0 {
		t.Errorf("secret fields %v (%v); the crawler has none", secrets, err)
	}
}

func TestValidate(t *testing.T) {
	c := newConnector(t)
	ctx := context.Background()
	good := []string{
		`{"startUrls": ["https://docs.example.com/"]}`,
		`{"startUrls": ["https://docs.example.com/"], "sitemapUrls": ["https://docs.example.com/sitemap.xml"],
		  "maxDepth": 0, "maxPages": 5, "sameHost": false, "include": ["^https://docs\\.example\\.com/guide/"],
		  "exclude": ["\\?print=1$"], "respectRobots": false, "requestsPerSecond": 0.5, "userAgent": "mybot/1.0",
		  "allowPrivateNetworks": false}`,
		`{"startUrls": ["http://127.0.0.1:8080/"], "allowPrivateNetworks": true}`,
		`{"startUrls": ["http://localhost:8080/"]}`, // names are checked when dialled
	}
	for _, cfg := range good {
		if err := c.Validate(ctx, json.RawMessage(cfg)); err != nil {
			t.Errorf("Validate(%s): %v", cfg, err)
		}
	}
	bad := []struct{ cfg, field, says string }{
		{`{}`, "/startUrls", "required"},
		{`{"startUrls": []}`, "/startUrls", "required"},
		{`{"startUrls": ["ftp://example.com/"]}`, "/startUrls/0", "http or https"},
		{`{"startUrls": ["/relative"]}`, "/startUrls/0", "http or https"},
		{`{"startUrls": ["https://example.com/"], "sitemapUrls": ["nope"]}`, "/sitemapUrls/0", "http or https"},
		{`{"startUrls": ["https://example.com/"], "maxDepth": -1}`, "/maxDepth", "between"},
		{`{"startUrls": ["https://example.com/"], "maxPages": 0}`, "/maxPages", "between"},
		{`{"startUrls": ["https://example.com/"], "requestsPerSecond": 0}`, "/requestsPerSecond", "more than 0"},
		{`{"startUrls": ["https://example.com/"], "include": ["("]}`, "/include/0", "regular expression"},
		{`{"startUrls": ["https://example.com/"], "exclude": ["ok", "[z-a]"]}`, "/exclude/1", "regular expression"},
		{`{"startUrls": ["https://example.com/"], "exclude": ["example"]}`, "/startUrls/0", "excluded"},
		{`{"startUrls": ["https://example.com/"], "userAgent": "a\nb"}`, "/userAgent", "single line"},
		{`{"startUrls": ["https://example.com/"], "depth": 3}`, "", "unknown field"},
		{`{"startUrls": "https://example.com/"}`, "/startUrls", "must be a"},
		{`{"startUrls": ["http://127.0.0.1:8080/"]}`, "/startUrls/0", `loopback address; the crawler refuses private, loopback and link-local addresses unless the source's configuration sets "allowPrivateNetworks": true`},
		{`{"startUrls": ["http://[::1]/"]}`, "/startUrls/0", "loopback"},
		{`{"startUrls": ["https://example.com/"], "sitemapUrls": ["http://169.254.169.254/latest/"]}`, "/sitemapUrls/0", "link-local"},
		{`{"startUrls": ["http://10.0.0.7/"]}`, "/startUrls/0", "private address"},
	}
	for _, b := range bad {
		err := c.Validate(ctx, json.RawMessage(b.cfg))
		var ve *connector.ValidationError
		switch {
		case err == nil:
			t.Errorf("Validate(%s) accepted it", b.cfg)
			continue
		case !errors.Is(err, connector.ErrInvalidConfig) || !errors.As(err, &ve):
			t.Errorf("Validate(%s): %v; want a *connector.ValidationError", b.cfg, err)
			continue
		}
		found := false
		for _, p := range ve.Problems {
			if p.Field == b.field && strings.Contains(p.Message, b.says) {
				found = true
			}
		}
		if !found {
			t.Errorf("Validate(%s): %v; want a problem at %q saying %q", b.cfg, err, b.field, b.says)
		}
	}

	// A URL's credentials are refused and never repeated back.
	err := c.Validate(ctx, json.RawMessage(`{"startUrls": ["https://bob:s3cret-pw@example.com/"]}`))
	if err == nil || !strings.Contains(err.Error(), "credentials") || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("Validate of a URL with credentials: %v; want a refusal that does not repeat the password", err)
	}
}

// TestSync covers the life of a source: first listing, unchanged second
// sync (with and without the cursor), a changed page, a deleted page.
func TestSync(t *testing.T) {
	s := newSite(t)
	s.page("/", "Home", "/a.html", "b.html", "/sub/", "/c.html?x=1#part", "mailto:x@example.com",
		"javascript:void(0)", "/logo.png", "https://elsewhere.example/", "/download", "#top")
	s.page("/a.html", "Page A", "/b.html", "/a.html")
	s.page("/b.html", "Page B")
	s.page("/sub/", "Sub", "d.html")
	s.page("/sub/d.html", "Page D")
	s.page("/c.html?x=1", "Page C")
	s.set("/download", &sitePage{body: "\x00\x01", contentType: "application/octet-stream"})
	lm := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s.set("/lm.html", &sitePage{body: htmlPage("Dated", ""), lastModified: lm})
	s.set("/plain.html", &sitePage{body: htmlPage("No validators", "")})
	s.page("/extra/", "Extra", "/lm.html", "/plain.html")
	c := newConnector(t)
	cfg := config(t, map[string]any{"startUrls": []string{s.url("/"), s.url("/extra/")}})

	first := mustSync(t, c, cfg, nil)
	wantIDs(t, first, s.url("/"), s.url("/a.html"), s.url("/b.html"), s.url("/sub/"), s.url("/sub/d.html"),
		s.url("/c.html?x=1"), s.url("/extra/"), s.url("/lm.html"), s.url("/plain.html"))
	reqs := s.requests()
	got := paths(reqs)
	if got["/logo.png"] != 0 {
		t.Error("an image link was requested")
	}
	if got["/download"] != 1 {
		t.Errorf("/download requested %d times, want once (it is not listed: not HTML)", got["/download"])
	}
	for p, n := range got {
		if n > 1 {
			t.Errorf("%s requested %d times in one sync", p, n)
		}
	}
	for _, r := range reqs {
		if !strings.HasPrefix(r.userAgent, "docindex-webcrawl/") {
			t.Errorf("request %s with User-Agent %q", r.path, r.userAgent)
		}
	}
	// The first listing follows the breadth-first order of the links.
	if first.order[0] != s.url("/") || first.order[1] != s.url("/extra/") {
		t.Errorf("listing order %q", first.order)
	}

	home := first.items[s.url("/")]
	if home.Name != "index.html" || home.ContentType != "text/html; charset=utf-8" || home.URL != s.url("/") ||
		home.Metadata["title"] != "Home" || home.Metadata["url"] != s.url("/") || home.Metadata["language"] != "en" ||
		!strings.HasPrefix(home.Version, "etag:") || home.Path != strings.TrimPrefix(s.url("/"), "http://") {
		t.Errorf("home item %+v", home)
	}
	if n := first.items[s.url("/sub/")].Name; n != "sub.html" {
		t.Errorf("name of /sub/: %q", n)
	}
	dated := first.items[s.url("/lm.html")]
	if dated.Version != "modified:2026-03-01T12:00:00Z" || !dated.ModifiedAt.Equal(lm) {
		t.Errorf("page with Last-Modified only: version %q, modified %v", dated.Version, dated.ModifiedAt)
	}
	if v := first.items[s.url("/plain.html")].Version; !strings.HasPrefix(v, "sha256:") {
		t.Errorf("page without validators: version %q, want a content hash", v)
	}
	for _, it := range first.items {
		body, content := fetchAll(t, c, cfg, it)
		u, _ := url.Parse(it.ID)
		s.mu.Lock()
		want := s.pages[u.RequestURI()].body
		s.mu.Unlock()
		if body != want {
			t.Errorf("fetch %s: content differs from the page", it.ID)
		}
		if int64(len(body)) != it.Size || content.Size != it.Size {
			t.Errorf("fetch %s: %d bytes, item says %d, content says %d", it.ID, len(body), it.Size, content.Size)
		}
		if content.ContentType != "text/html; charset=utf-8" {
			t.Errorf("fetch %s: content type %q", it.ID, content.ContentType)
		}
		if !strings.HasPrefix(it.Version, "sha256:") && content.Version != it.Version {
			t.Errorf("fetch %s: version %q, item %q", it.ID, content.Version, it.Version)
		}
	}
	s.requests()

	same := func(name string, run syncRun) {
		t.Helper()
		if len(run.items) != len(first.items) {
			t.Fatalf("%s: %d items, first sync %d", name, len(run.items), len(first.items))
		}
		for id, it := range first.items {
			if run.items[id].Version != it.Version {
				t.Errorf("%s: %s version %q, was %q", name, id, run.items[id].Version, it.Version)
			}
		}
		if !slices.Equal(run.order, first.order) {
			t.Errorf("%s: order %q, was %q", name, run.order, first.order)
		}
	}
	same("second sync without cursor", mustSync(t, c, cfg, nil))
	s.requests()

	// With the first sync's cursor, pages with validators are asked for
	// conditionally and not downloaded again.
	if len(first.cursor) == 0 {
		t.Fatal("no checkpoint cursor")
	}
	second := mustSync(t, c, cfg, first.cursor)
	same("second sync with cursor", second)
	notModified := 0
	for _, r := range s.requests() {
		switch r.path {
		case "/plain.html", "/robots.txt", "/download":
			continue
		}
		if r.ifNoneMatch == "" && r.ifModifiedSince == "" {
			t.Errorf("%s requested without a condition", r.path)
		}
		if r.status == http.StatusNotModified {
			notModified++
		}
	}
	if notModified != len(first.items)-1 {
		t.Errorf("%d answers 304, want %d", notModified, len(first.items)-1)
	}

	// A changed page gets a new version; the others keep theirs.
	s.set("/b.html", &sitePage{body: htmlPage("Page B, revised", ""), etag: `"b2"`})
	s.set("/plain.html", &sitePage{body: htmlPage("No validators, revised", "")})
	s.set("/lm.html", &sitePage{body: htmlPage("Dated, revised", ""), lastModified: lm.Add(time.Hour)})
	third := mustSync(t, c, cfg, second.cursor)
	changed := map[string]bool{s.url("/b.html"): true, s.url("/plain.html"): true, s.url("/lm.html"): true}
	for id, it := range first.items {
		switch v := third.items[id].Version; {
		case changed[id] && v == it.Version:
			t.Errorf("%s changed but kept version %q", id, v)
		case !changed[id] && v != it.Version:
			t.Errorf("%s unchanged but version %q became %q", id, it.Version, v)
		}
	}
	if body, _ := fetchAll(t, c, cfg, third.items[s.url("/b.html")]); !strings.Contains(body, "Page B, revised") {
		t.Error("fetch of the changed page returned the old content")
	}

	// A deleted page (404) is gone from the listing; the sync succeeds.
	s.remove("/sub/d.html")
	fourth := mustSync(t, c, cfg, third.cursor)
	if _, ok := fourth.items[s.url("/sub/d.html")]; ok {
		t.Error("deleted page still listed")
	}
	if len(fourth.items) != len(first.items)-1 {
		t.Errorf("%d items after a deletion, want %d", len(fourth.items), len(first.items)-1)
	}

	// Fetching an item that is gone says so.
	_, err := c.Fetch(context.Background(), connector.FetchRequest{Config: cfg, Item: first.items[s.url("/sub/d.html")]})
	if !errors.Is(err, plugins.ErrNotFound) {
		t.Errorf("fetch of a deleted page: %v, want plugins.ErrNotFound", err)
	}
	// Fetch stays on the source's hosts.
	_, err = c.Fetch(context.Background(), connector.FetchRequest{Config: cfg, Item: connector.Item{ID: "http://elsewhere.example/x", Name: "x.html"}})
	if !errors.Is(err, plugins.ErrInvalidArgument) {
		t.Errorf("fetch of another host's page: %v, want plugins.ErrInvalidArgument", err)
	}
}

func TestCanonicalAndRedirects(t *testing.T) {
	other := newSite(t) // another host (port): out of scope
	other.page("/", "Other")
	s := newSite(t)
	s.page("/", "Home", "/old", "/p?utm=1", "/p", "/offcanon", "/away", "/dup1", "/dup2")
	s.set("/old", &sitePage{status: http.StatusMovedPermanently, location: "/new"})
	s.page("/new", "New")
	s.set("/p?utm=1", &sitePage{body: htmlPage("P", `<link rel="canonical" href="/p">`), etag: `"p"`})
	s.set("/p", &sitePage{body: htmlPage("P", `<link rel="canonical" href="/p">`), etag: `"p"`})
	s.set("/offcanon", &sitePage{body: htmlPage("Mirror", `<link rel="canonical" href="https://elsewhere.example/real">`), etag: `"o"`})
	s.set("/away", &sitePage{status: http.StatusFound, location: other.url("/")})
	s.set("/dup1", &sitePage{body: htmlPage("Dup", `<link rel="canonical" href="/dup">`), etag: `"d1"`})
	s.set("/dup2", &sitePage{body: htmlPage("Dup", `<link rel="canonical" href="/dup">`), etag: `"d2"`})
	c := newConnector(t)
	cfg := config(t, map[string]any{"startUrls": []string{s.url("/")}})

	run := mustSync(t, c, cfg, nil)
	wantIDs(t, run, s.url("/"), s.url("/new"), s.url("/p"), s.url("/offcanon"), s.url("/dup"))
	if len(other.requests()) != 0 {
		t.Error("a redirect to another host was followed with sameHost")
	}
	p := run.items[s.url("/p")]
	if p.Metadata["fetchUrl"] != s.url("/p?utm=1") || p.URL != s.url("/p") {
		t.Errorf("canonical item: url %q, fetchUrl %v", p.URL, p.Metadata["fetchUrl"])
	}
	if d := run.items[s.url("/dup")]; d.Metadata["fetchUrl"] != s.url("/dup1") {
		t.Errorf("two pages with one canonical URL: listed from %v, want the first, /dup1", d.Metadata["fetchUrl"])
	}
	if n := run.items[s.url("/new")]; n.Metadata["fetchUrl"] != s.url("/new") || n.Metadata["title"] != "New" {
		t.Errorf("redirected item %+v", n)
	}
	for _, it := range run.items {
		if body, _ := fetchAll(t, c, cfg, it); !strings.Contains(body, "<title>") {
			t.Errorf("fetch %s: %q", it.ID, body)
		}
	}

	// A start URL that redirects is listed under the target.
	run = mustSync(t, c, config(t, map[string]any{"startUrls": []string{s.url("/old")}, "maxDepth": 0}), nil)
	wantIDs(t, run, s.url("/new"))

	// A start URL that redirects off the crawl's hosts fails the sync.
	run = runSync(t, c, config(t, map[string]any{"startUrls": []string{s.url("/away")}}), nil)
	if run.err == nil || !strings.Contains(run.err.Error(), "redirected off the crawl's scope") {
		t.Errorf("start URL redirecting to another host: %v", run.err)
	}
	// Without sameHost the redirect is followed.
	run = mustSync(t, c, config(t, map[string]any{"startUrls": []string{s.url("/away")}, "sameHost": false}), nil)
	wantIDs(t, run, other.url("/"))
}

func TestRobots(t *testing.T) {
	s := newSite(t)
	s.setRobots("User-agent: *\nDisallow: /private/\n\nUser-agent: otherbot\nDisallow: /\n")
	s.page("/", "Home", "/private/x.html", "/public.html", "/noindex.html", "/nofollow.html", "/xrobots.html", "/to-private")
	s.page("/private/x.html", "Private")
	s.page("/public.html", "Public")
	s.set("/noindex.html", &sitePage{body: htmlPage("No index", `<meta name="robots" content="noindex">`, "/via-noindex.html")})
	s.page("/via-noindex.html", "Via no index")
	s.set("/nofollow.html", &sitePage{body: htmlPage("No follow", `<META NAME="ROBOTS" CONTENT="nofollow">`, "/hidden.html")})
	s.page("/hidden.html", "Hidden")
	s.set("/xrobots.html", &sitePage{body: htmlPage("Header", ""), header: map[string]string{"X-Robots-Tag": "noindex"}})
	s.set("/to-private", &sitePage{status: http.StatusFound, location: "/private/y.html"})
	s.page("/private/y.html", "Private too")
	c := newConnector(t)

	run := mustSync(t, c, config(t, map[string]any{"startUrls": []string{s.url("/")}}), nil)
	wantIDs(t, run, s.url("/"), s.url("/public.html"), s.url("/nofollow.html"), s.url("/via-noindex.html"))
	got := paths(s.requests())
	for _, p := range []string{"/private/x.html", "/private/y.html", "/hidden.html"} {
		if got[p] != 0 {
			t.Errorf("%s was requested despite robots", p)
		}
	}
	if got["/robots.txt"] != 1 {
		t.Errorf("robots.txt read %d times, want once", got["/robots.txt"])
	}

	// respectRobots false ignores robots.txt and robots meta tags.
	run = mustSync(t, c, config(t, map[string]any{"startUrls": []string{s.url("/")}, "respectRobots": false}), nil)
	wantIDs(t, run, s.url("/"), s.url("/public.html"), s.url("/nofollow.html"), s.url("/via-noindex.html"),
		s.url("/private/x.html"), s.url("/private/y.html"), s.url("/noindex.html"), s.url("/hidden.html"), s.url("/xrobots.html"))
	if got := paths(s.requests()); got["/robots.txt"] != 0 {
		t.Error("robots.txt read with respectRobots false")
	}

	// The user agent picks the robots.txt group, and a start URL that
	// robots.txt forbids fails the sync rather than list nothing.
	run = runSync(t, c, config(t, map[string]any{"startUrls": []string{s.url("/")}, "userAgent": "OtherBot/2.0"}), nil)
	if run.err == nil || !strings.Contains(run.err.Error(), "disallowed by robots.txt") || len(run.items) != 0 {
		t.Errorf("start URL disallowed for the user agent: %d items, error %v", len(run.items), run.err)
	}
	for _, r := range s.requests() {
		if r.userAgent != "OtherBot/2.0" {
			t.Errorf("request %s with User-Agent %q", r.path, r.userAgent)
		}
	}

	// A robots.txt that cannot be read (5xx) fails the sync: it is not
	// taken as "nothing allowed", which would make the host delete all.
	s.set("/robots.txt", &sitePage{status: http.StatusInternalServerError, body: "oops"})
	s.setRobots("")
	run = runSync(t, c, config(t, map[string]any{"startUrls": []string{s.url("/")}}), nil)
	var ce *webcrawl.CrawlError
	if !errors.As(run.err, &ce) || !strings.Contains(run.err.Error(), "robots.txt") {
		t.Errorf("robots.txt answering 500: %v", run.err)
	}
}

func TestCrawlDelay(t *testing.T) {
	s := newSite(t)
	s.setRobots("User-agent: *\nCrawl-delay: 0.4\n")
	s.page("/", "Home", "/1", "/2", "/3")
	for _, p := range []string{"/1", "/2", "/3"} {
		s.page(p, "Page "+p)
	}
	run := mustSync(t, newConnector(t), config(t, map[string]any{"startUrls": []string{s.url("/")}}), nil)
	if len(run.items) != 4 {
		t.Fatalf("%d items", len(run.items))
	}
	var pages []time.Time
	for _, r := range s.requests() {
		if r.path != "/robots.txt" {
			pages = append(pages, r.at)
		}
	}
	for i := 1; i < len(pages); i++ {
		if gap := pages[i].Sub(pages[i-1]); gap < 350*time.Millisecond {
			t.Errorf("requests %d and %d %v apart; robots.txt asks for 0.4s", i-1, i, gap)
		}
	}
}

func TestSitemaps(t *testing.T) {
	s := newSite(t)
	s.page("/", "Home", "/linked.html")
	s.page("/linked.html", "Linked")
	for _, p := range []string{"/s1.html", "/s2.html", "/s3.html", "/caf%C3%A9.html"} {
		s.page(p, "Sitemap page "+p)
	}
	s.set("/sitemap-index.xml", &sitePage{contentType: "application/xml", body: `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>` + s.url("/sm1.xml.gz") + `</loc><lastmod>2026-01-01</lastmod></sitemap>
  <sitemap><loc>` + s.url("/sm2.xml") + `</loc></sitemap>
  <sitemap><loc>http://elsewhere.example/sitemap.xml</loc></sitemap>
</sitemapindex>`})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url><loc>` + s.url("/s1.html") + `</loc><image:image><image:loc>` + s.url("/pic.jpg") + `</image:loc></image:image></url>
  <url><loc>
     ` + s.url("/s2.html") + `
  </loc><changefreq>daily</changefreq></url>
</urlset>`))
	_ = zw.Close()
	s.set("/sm1.xml.gz", &sitePage{contentType: "application/gzip", body: gz.String()})
	// An ISO-8859-1 sitemap: the é in the comment is one byte.
	s.set("/sm2.xml", &sitePage{contentType: "text/xml", body: "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<!-- caf\xe9 -->\n" +
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>` + s.url("/s3.html") + `</loc></url>
  <url><loc>` + s.url("/caf%C3%A9.html") + `</loc></url>
  <url><loc>` + s.url("/missing.html") + `</loc></url>
  <url><loc>http://elsewhere.example/page.html</loc></url>
</urlset>`})
	c := newConnector(t)
	cfg := config(t, map[string]any{"startUrls": []string{s.url("/")}, "sitemapUrls": []string{s.url("/sitemap-index.xml")}, "maxDepth": 0})

	run := mustSync(t, c, cfg, nil)
	wantIDs(t, run, s.url("/"), s.url("/s1.html"), s.url("/s2.html"), s.url("/s3.html"), s.url("/caf%C3%A9.html"))
	got := paths(s.requests())
	if got["/linked.html"] != 0 || got["/pic.jpg"] != 0 {
		t.Errorf("requests beyond depth 0 or to image entries: %v", got)
	}
	if got["/missing.html"] != 1 {
		t.Error("the missing sitemap entry was not tried")
	}
	if n := run.items[s.url("/caf%C3%A9.html")].Name; n != "café.html" {
		t.Errorf("name of an escaped path: %q", n)
	}

	// A sitemap that cannot be read fails the sync.
	s.remove("/sm2.xml")
	run = runSync(t, c, cfg, nil)
	var ce *webcrawl.CrawlError
	if !errors.As(run.err, &ce) || !strings.Contains(run.err.Error(), "sitemap "+s.url("/sm2.xml")) {
		t.Errorf("unreadable sitemap: %v", run.err)
	}
	if len(run.items) != 3 {
		t.Errorf("%d items listed before the error, want 3 (the others still listed)", len(run.items))
	}
}

func TestLimits(t *testing.T) {
	s := newSite(t)
	s.page("/", "Home", "/c00")
	for i := range 5 {
		s.page("/c"+strconvI(i), "Chain "+strconvI(i), "/c"+strconvI(i+1))
	}
	wide := make([]string, 20)
	for i := range wide {
		wide[i] = "/w" + strconvI(i)
		s.page(wide[i], "Wide "+strconvI(i))
	}
	s.page("/wide", "Wide", wide...)
	c := newConnector(t)

	run := mustSync(t, c, config(t, map[string]any{"startUrls": []string{s.url("/")}, "maxDepth": 2}), nil)
	wantIDs(t, run, s.url("/"), s.url("/c00"), s.url("/c01"))
	if got := paths(s.requests()); got["/c02"] != 0 {
		t.Error("a page past maxDepth was requested")
	}
	run = mustSync(t, c, config(t, map[string]any{"startUrls": []string{s.url("/")}, "maxDepth": 0}), nil)
	wantIDs(t, run, s.url("/"))
	s.requests()

	// maxPages bounds the requests and always cuts the same pages.
	cfg := config(t, map[string]any{"startUrls": []string{s.url("/wide")}, "maxPages": 6})
	var first []string
	for range 5 {
		run := mustSync(t, c, cfg, nil)
		if len(run.items) != 6 {
			t.Fatalf("%d items with maxPages 6", len(run.items))
		}
		if first == nil {
			first = run.order
		} else if !slices.Equal(first, run.order) {
			t.Errorf("maxPages cut %q, then %q", first, run.order)
		}
		pages := 0
		for p, n := range paths(s.requests()) {
			if p != "/robots.txt" {
				pages += n
			}
		}
		if pages > 6 {
			t.Errorf("%d pages requested with maxPages 6", pages)
		}
	}
	if want := []string{s.url("/wide"), s.url("/w00"), s.url("/w01"), s.url("/w02"), s.url("/w03"), s.url("/w04")}; !slices.Equal(first, want) {
		t.Errorf("maxPages listed %q, want the first links in order %q", first, want)
	}
}

func strconvI(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

func TestIncludeExclude(t *testing.T) {
	s := newSite(t)
	s.page("/", "Home", "/docs/a", "/docs/b", "/blog/x", "/docs/private/z")
	s.page("/docs/a", "A")
	s.page("/docs/b", "B")
	s.page("/blog/x", "Blog", "/docs/c")
	s.page("/docs/c", "C")
	s.page("/docs/private/z", "Z")
	c := newConnector(t)
	cfg := config(t, map[string]any{"startUrls": []string{s.url("/")}, "include": []string{"/docs/"}, "exclude": []string{"/private/"}})

	run := mustSync(t, c, cfg, nil)
	wantIDs(t, run, s.url("/docs/a"), s.url("/docs/b"), s.url("/docs/c"))
	got := paths(s.requests())
	if got["/docs/private/z"] != 0 {
		t.Error("an excluded page was requested")
	}
	if got["/blog/x"] != 1 {
		t.Error("a page outside include was not crawled for its links")
	}
}

func TestRateLimit(t *testing.T) {
	s := newSite(t)
	links := []string{"/1", "/2", "/3", "/4", "/5", "/6", "/7"}
	s.page("/", "Home", links...)
	for _, l := range links {
		s.page(l, "Page "+l)
	}
	const rps = 4
	start := time.Now()
	run := mustSync(t, newConnector(t, webcrawl.WithConcurrency(4)), config(t, map[string]any{"startUrls": []string{s.url("/")}, "requestsPerSecond": rps}), nil)
	elapsed := time.Since(start)
	if len(run.items) != 8 {
		t.Fatalf("%d items", len(run.items))
	}
	reqs := s.requests()
	if len(reqs) != 9 { // robots.txt and 8 pages
		t.Errorf("%d requests, want 9", len(reqs))
	}
	// 9 requests at 4 per second take at least 2s; count those that fall
	// within any one second rather than timing each gap.
	if elapsed < 1800*time.Millisecond {
		t.Errorf("9 requests at %d per second took %v", rps, elapsed)
	}
	for i := range reqs {
		n := 0
		for _, r := range reqs[i:] {
			if r.at.Sub(reqs[i].at) < time.Second {
				n++
			}
		}
		if n > rps+1 {
			t.Errorf("%d requests within one second from request %d", n, i)
		}
	}
}

func TestFailedPages(t *testing.T) {
	s := newSite(t)
	s.page("/", "Home", "/ok.html", "/broken.html", "/flaky.html")
	s.page("/ok.html", "OK")
	s.set("/broken.html", &sitePage{status: http.StatusInternalServerError, body: "down"})
	s.set("/flaky.html", &sitePage{body: htmlPage("Flaky", ""), failures: 1})
	c := newConnector(t)
	cfg := config(t, map[string]any{"startUrls": []string{s.url("/")}})

	run := runSync(t, c, cfg, nil)
	wantIDs(t, run, s.url("/"), s.url("/ok.html"), s.url("/flaky.html"))
	var ce *webcrawl.CrawlError
	if !errors.As(run.err, &ce) || len(ce.Errs) != 1 || !strings.Contains(run.err.Error(), s.url("/broken.html")) ||
		!strings.Contains(run.err.Error(), "deletes nothing") {
		t.Errorf("sync with a broken page: %v", run.err)
	}
	if run.cursor != nil {
		t.Error("a failed sync sent a checkpoint")
	}
	if got := paths(s.requests()); got["/flaky.html"] != 2 {
		t.Errorf("/flaky.html requested %d times, want 2 (a 503, then a retry)", got["/flaky.html"])
	}

	// A start URL that is not there fails the sync too.
	run = runSync(t, c, config(t, map[string]any{"startUrls": []string{s.url("/nothing-here")}}), nil)
	if run.err == nil || !strings.Contains(run.err.Error(), "start URL "+s.url("/nothing-here")+": HTTP 404") {
		t.Errorf("missing start URL: %v", run.err)
	}
}

func TestCheckHealth(t *testing.T) {
	s := newSite(t)
	s.page("/", "Home")
	c := newConnector(t)
	ctx := context.Background()
	h, err := c.CheckHealth(ctx, config(t, map[string]any{"startUrls": []string{s.url("/")}}))
	if err != nil || h.Status != connector.StatusOK {
		t.Errorf("CheckHealth of a running site: %+v, %v", h, err)
	}
	h, err = c.CheckHealth(ctx, config(t, map[string]any{"startUrls": []string{s.url("/"), s.url("/gone")}}))
	if err != nil || h.Status != connector.StatusDegraded || !strings.Contains(h.Message, "404") {
		t.Errorf("CheckHealth with a missing start URL: %+v, %v", h, err)
	}

	down := newSite(t)
	downURL := down.url("/")
	down.srv.Close()
	h, err = c.CheckHealth(ctx, config(t, map[string]any{"startUrls": []string{downURL}}))
	if err != nil || h.Status != connector.StatusDown || !strings.Contains(h.Message, "connection refused") {
		t.Errorf("CheckHealth of a stopped server: %+v, %v", h, err)
	}

	_, err = c.CheckHealth(ctx, json.RawMessage(`{"startUrls": []}`))
	if !errors.Is(err, connector.ErrInvalidConfig) {
		t.Errorf("CheckHealth of an invalid configuration: %v", err)
	}
}

// TestPrivateNetworks checks that loopback and private addresses are
// refused without allowPrivateNetworks: literal ones by Validate, names
// resolving to them and redirects to them when dialled.
func TestPrivateNetworks(t *testing.T) {
	s := newSite(t)
	s.page("/", "Home")
	c := newConnector(t)
	ctx := context.Background()
	port := s.srv.Listener.Addr().String()
	port = port[strings.LastIndexByte(port, ':')+1:]
	const allow = `"allowPrivateNetworks": true`

	// 127.0.0.1 itself.
	literal := config(t, map[string]any{"startUrls": []string{s.url("/")}, "allowPrivateNetworks": nil})
	for name, err := range map[string]error{
		"Validate": c.Validate(ctx, literal),
		"Sync":     runSync(t, c, literal, nil).err,
	} {
		if !errors.Is(err, connector.ErrInvalidConfig) || !strings.Contains(err.Error(), "127.0.0.1") ||
			!strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), allow) {
			t.Errorf("%s of a crawl of 127.0.0.1: %v", name, err)
		}
	}

	// A name that resolves to a loopback address is refused when dialled.
	byName := config(t, map[string]any{"startUrls": []string{"http://localhost:" + port + "/"}, "allowPrivateNetworks": nil})
	run := runSync(t, c, byName, nil)
	if !errors.Is(run.err, webcrawl.ErrPrivateAddress) || !strings.Contains(run.err.Error(), "loopback address") ||
		!strings.Contains(run.err.Error(), allow) || len(run.items) != 0 {
		t.Errorf("sync of http://localhost: %d items, error %v", len(run.items), run.err)
	}
	h, err := c.CheckHealth(ctx, byName)
	if err != nil || h.Status != connector.StatusDown || !strings.Contains(h.Message, allow) {
		t.Errorf("CheckHealth of http://localhost: %+v, %v", h, err)
	}
	it := connector.Item{ID: "http://localhost:" + port + "/", Name: "index.html"}
	if _, err := c.Fetch(ctx, connector.FetchRequest{Config: byName, Item: it}); !errors.Is(err, webcrawl.ErrPrivateAddress) {
		t.Errorf("Fetch from http://localhost: %v", err)
	}
	if n := len(s.requests()); n != 0 {
		t.Errorf("the loopback site got %d requests", n)
	}
	// With allowPrivateNetworks the same crawl works.
	run = mustSync(t, c, config(t, map[string]any{"startUrls": []string{"http://localhost:" + port + "/"}}), nil)
	wantIDs(t, run, "http://localhost:"+port+"/")

	// A redirect from an allowed address to a private one is refused. Here
	// 127.0.0.1 stands for a public site (WithAllowedNetworks) and
	// 127.0.0.2 for an internal one.
	internal := newSiteOn(t, "127.0.0.2:0")
	internal.page("/secret", "Internal")
	s.set("/jump", &sitePage{status: http.StatusFound, location: internal.url("/secret")})
	s.page("/links", "Links", "/jump", internal.url("/secret"))
	guarded := newConnector(t, webcrawl.WithAllowedNetworks(netip.MustParsePrefix("127.0.0.1/32")))
	cfg := config(t, map[string]any{"startUrls": []string{s.url("/links")}, "sameHost": false, "allowPrivateNetworks": nil})
	if err := guarded.Validate(ctx, cfg); err != nil {
		t.Fatalf("Validate with 127.0.0.1 allowed: %v", err)
	}
	run = runSync(t, guarded, cfg, nil)
	wantIDs(t, run, s.url("/links"))
	var ce *webcrawl.CrawlError
	if !errors.As(run.err, &ce) || len(ce.Errs) != 2 || !errors.Is(run.err, webcrawl.ErrPrivateAddress) ||
		!strings.Contains(run.err.Error(), "127.0.0.2 is a loopback address") {
		t.Errorf("redirect and link to 127.0.0.2: %v", run.err)
	}
	if n := len(internal.requests()); n != 0 {
		t.Errorf("the internal site got %d requests", n)
	}
	// With allowPrivateNetworks, it is reached.
	run = mustSync(t, guarded, config(t, map[string]any{"startUrls": []string{s.url("/links")}, "sameHost": false}), nil)
	wantIDs(t, run, s.url("/links"), internal.url("/secret"))
}

func TestStopEarly(t *testing.T) {
	s := newSite(t)
	links := make([]string, 50)
	for i := range links {
		links[i] = "/p" + strconvI(i)
		s.page(links[i], "P")
	}
	s.page("/", "Home", links...)
	c := newConnector(t)
	cfg := config(t, map[string]any{"startUrls": []string{s.url("/")}, "requestsPerSecond": 50})
	n := 0
	for ev, err := range c.Sync(context.Background(), connector.SyncRequest{Config: cfg}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == connector.EventUpsert {
			n++
			if n == 3 {
				break
			}
		}
	}
	time.Sleep(200 * time.Millisecond)
	before := len(s.requests())
	time.Sleep(300 * time.Millisecond)
	if after := len(s.requests()); after != 0 {
		t.Errorf("%d requests after the consumer stopped (%d before)", after, before)
	}
}
