package webcrawl_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docindex/docindex/connectors/webcrawl"
)

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// copyManual copies the PostgreSQL manual into a directory the test may
// change.
func copyManual(t *testing.T) (string, int) {
	t.Helper()
	servePGManual(t) // fails with the install hint when the manual is missing
	dir := t.TempDir()
	entries, err := os.ReadDir(pgManual)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(pgManual, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
		// Keep the modification times, which are the pages' versions.
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(dir, e.Name()), info.ModTime(), info.ModTime()); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), ".html") {
			n++
		}
	}
	return dir, n
}

// TestPGManual crawls the whole PostgreSQL manual (about 1,170 pages) as
// served by net/http's file server: everything is listed and fetchable, a
// second sync sends conditional requests only and lists the same versions,
// a changed page gets a new version and a deleted one disappears.
func TestPGManual(t *testing.T) {
	dir, pages := copyManual(t)
	var requests, notModified atomic.Int64
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		rec := &statusWriter{ResponseWriter: w}
		files.ServeHTTP(rec, r)
		if rec.status == http.StatusNotModified {
			notModified.Add(1)
		}
	}))
	t.Cleanup(srv.Close)
	c := newConnector(t, webcrawl.WithConcurrency(4))
	cfg := config(t, map[string]any{"startUrls": []string{srv.URL + "/index.html"}, "maxDepth": 3, "maxPages": 2000})

	start := time.Now()
	first := mustSync(t, c, cfg, nil)
	t.Logf("first crawl: %d pages in %v", len(first.items), time.Since(start))
	if len(first.items) != pages {
		t.Fatalf("listed %d pages; the manual has %d", len(first.items), pages)
	}
	for id, it := range first.items {
		u, err := url.Parse(id)
		if err != nil || !strings.HasPrefix(id, srv.URL+"/") {
			t.Fatalf("item ID %q", id)
		}
		name := path.Base(u.Path)
		if u.Path == "/" { // the file server answers /index.html with a redirect to /
			name = "index.html"
		}
		if it.Name != name || it.ContentType != "text/html; charset=utf-8" || !strings.HasPrefix(it.Version, "modified:") {
			t.Errorf("item %s: name %q, type %q, version %q", id, it.Name, it.ContentType, it.Version)
		}
		if it.Metadata["title"] == nil || it.Metadata["title"] == "" {
			t.Errorf("item %s has no title", id)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("item %s is no file of the manual", id)
		}
	}
	select1 := first.items[srv.URL+"/sql-select.html"]
	if select1.Metadata["title"] != "SELECT" {
		t.Errorf("title of sql-select.html: %v", select1.Metadata["title"])
	}
	body, _ := fetchAll(t, c, cfg, select1)
	disk, _ := os.ReadFile(filepath.Join(dir, "sql-select.html"))
	if body != string(disk) {
		t.Error("fetched sql-select.html differs from the file")
	}

	// Unchanged: conditional requests, every page answered 304.
	requests.Store(0)
	notModified.Store(0)
	second := mustSync(t, c, cfg, first.cursor)
	if len(second.items) != pages {
		t.Fatalf("second crawl listed %d pages", len(second.items))
	}
	for id, it := range first.items {
		if second.items[id].Version != it.Version {
			t.Errorf("%s: version %q, then %q", id, it.Version, second.items[id].Version)
		}
	}
	if n := notModified.Load(); n != int64(pages) {
		t.Errorf("%d of %d requests answered 304, want %d", n, requests.Load(), pages)
	}

	// A changed page and a deleted one.
	changed := filepath.Join(dir, "sql-select.html")
	if err := os.WriteFile(changed, append(disk, []byte("<!-- revised -->\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(changed, later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "sql-vacuum.html")); err != nil {
		t.Fatal(err)
	}
	third := mustSync(t, c, cfg, second.cursor)
	if len(third.items) != pages-1 {
		t.Errorf("after a deletion %d pages listed, want %d", len(third.items), pages-1)
	}
	if _, ok := third.items[srv.URL+"/sql-vacuum.html"]; ok {
		t.Error("the deleted page is still listed")
	}
	for id, it := range first.items {
		v, ok := third.items[id]
		switch {
		case !ok:
		case id == select1.ID && v.Version == it.Version:
			t.Errorf("the changed page kept version %q", v.Version)
		case id != select1.ID && v.Version != it.Version:
			t.Errorf("%s: version %q became %q without a change", id, it.Version, v.Version)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if h, err := c.CheckHealth(ctx, cfg); err != nil || h.Status != "ok" {
		t.Errorf("CheckHealth: %+v, %v", h, err)
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
