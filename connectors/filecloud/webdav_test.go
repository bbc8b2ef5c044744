package filecloud_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/connectors/filecloud"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/plugintest"
)

// davFixture serves a directory with rclone: the source's root is its
// folder "library"; files beside it must never be listed.
func davFixture(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	lib := filepath.Join(dir, "library")
	for rel, data := range initialFiles() {
		writeFile(t, lib, rel, data)
	}
	writeFile(t, dir, "outside.txt", []byte("beside the root\n"))
	writeFile(t, dir, "library-other/x.md", []byte("a sibling of the root\n"))
	must(t, os.MkdirAll(filepath.Join(lib, "empty-folder"), 0o755))
	base := startWebDAV(t, dir)
	return fixture{
		base: map[string]any{
			"provider": "webdav", "url": base, "root": "/library",
			"username": davUser, "password": davPassword,
		},
		secretKey: "password",
		put:       func(t *testing.T, rel string, data []byte) { writeFile(t, lib, rel, data) },
		remove: func(t *testing.T, rel string) {
			must(t, os.Remove(filepath.Join(lib, filepath.FromSlash(rel))))
		},
		urlPrefix: base + "library/",
	}
}

func TestWebDAVConformance(t *testing.T) {
	f := davFixture(t)
	c := plugintest.StartConnector(t, filecloud.New())
	plugintest.RunConnectorSuite(t, c,
		plugintest.WithConfig(f.config()),
		plugintest.WithInvalidConfigs(invalidConfigs()...),
		plugintest.WithMinItems(len(initialFiles())),
		plugintest.WithOperationTimeout(30*time.Second))
}

func TestWebDAVBehaviour(t *testing.T) {
	runBehaviour(t, davFixture(t))
}

func TestWebDAVRoot(t *testing.T) {
	f := davFixture(t)
	c := plugintest.StartConnector(t, filecloud.New())
	ctx := context.Background()

	// A root without its leading slash, or with a trailing one, is the
	// same folder.
	for _, root := range []string{"library", "/library/", "/library//"} {
		if got := ids(syncOK(t, c, f.config("root", root))); len(got) != len(initialFiles()) {
			t.Errorf("root %q: listed %q", root, got)
		}
	}
	// The whole server: everything, with ids from the server's root.
	all := syncOK(t, c, f.config("root", nil))
	for _, id := range []string{"outside.txt", "library-other/x.md", "library/guide/intro.md"} {
		if _, ok := all[id]; !ok {
			t.Errorf("root /: %q not listed (got %q)", id, ids(all))
		}
	}
	// A subfolder as the root.
	if got := ids(syncOK(t, c, f.config("root", "/library/guide/deep"))); strings.Join(got, ",") != "nested/page.md" {
		t.Errorf("root /library/guide/deep: listed %q", got)
	}

	// A root that does not exist fails the sync (it must not look like an
	// empty source, whose files the host would delete).
	missing := f.config("root", "/no-such-folder")
	if l := syncOnce(t, c, missing); !errors.Is(l.err, plugins.ErrNotFound) {
		t.Errorf("sync of a missing root: %v; want ErrNotFound", l.err)
	}
	if h, err := c.CheckHealth(ctx, missing); err != nil || h.Status != connector.StatusDown {
		t.Errorf("health of a missing root: %+v, %v", h, err)
	}
	// A file as the root.
	if h, err := c.CheckHealth(ctx, f.config("root", "/outside.txt")); err != nil || h.Status != connector.StatusDown ||
		!strings.Contains(h.Message, "not a folder") {
		t.Errorf("health of a file as the root: %+v, %v", h, err)
	}
	// Ids that would leave the root are refused.
	for _, id := range []string{"../outside.txt", "guide/../../outside.txt", "/outside.txt"} {
		_, err := c.Fetch(ctx, connector.FetchRequest{Config: f.config(), Item: connector.Item{ID: id, Name: "x.txt"}})
		if !errors.Is(err, plugins.ErrNotFound) {
			t.Errorf("fetch %q: %v; want ErrNotFound", id, err)
		}
	}
}

// TestWebDAVCutListingFailsTheSync puts a proxy in front of rclone that
// cuts one folder's PROPFIND answer short but ends the response cleanly.
// The WebDAV client would take the half as the whole; the connector must
// fail the sync instead, or the host would delete the files it missed.
func TestWebDAVCutListingFailsTheSync(t *testing.T) {
	f := davFixture(t)
	target, err := url.Parse(f.base["url"].(string))
	must(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != "PROPFIND" || resp.Request.URL.Path != "/library/guide/" || resp.StatusCode != http.StatusMultiStatus {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		half := body[:len(body)/2]
		// Cut at the end of an element, so that what remains parses.
		half = half[:bytes.LastIndex(half, []byte("</D:response>"))+len("</D:response>")]
		resp.Body = io.NopCloser(bytes.NewReader(half))
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)

	c := plugintest.StartConnector(t, filecloud.New())
	l := syncOnce(t, c, f.config("url", srv.URL+"/"))
	if l.err == nil || !strings.Contains(l.err.Error(), "ended early") {
		t.Fatalf("sync through a proxy that cuts a listing: %v (listed %q); want an error", l.err, ids(l.items))
	}
	// The same source straight from rclone syncs fine.
	if got := syncOK(t, c, f.config()); len(got) != len(initialFiles()) {
		t.Errorf("direct sync listed %q", ids(got))
	}
}

// TestWebDAVWithoutCredentials: a server that wants them refuses a
// configuration without any.
func TestWebDAVWithoutCredentials(t *testing.T) {
	f := davFixture(t)
	c := plugintest.StartConnector(t, filecloud.New())
	cfg := f.config("username", nil, "password", nil)
	if l := syncOnce(t, c, cfg); !errors.Is(l.err, plugins.ErrUnauthenticated) {
		t.Errorf("sync without credentials: %v; want ErrUnauthenticated", l.err)
	}
	if h, err := c.CheckHealth(context.Background(), cfg); err != nil || h.Status != connector.StatusDown {
		t.Errorf("health without credentials: %+v, %v", h, err)
	}
}

// TestWebDAVEscapedBaseURL: a base URL with escaped characters (Nextcloud
// puts the user name in it, "alice%40example.com", "Alice%20Smith") reaches
// the same folder, and a URL that is no WebDAV folder is a clear "down".
func TestWebDAVEscapedBaseURL(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "Alice Smith@home/docs/a b.md", []byte("# A B\n"))
	base := startWebDAV(t, dir)
	c := plugintest.StartConnector(t, filecloud.New())
	cfg := json.RawMessage(`{"provider":"webdav","url":"` + base + `Alice%20Smith%40home/","root":"docs",
		"username":"` + davUser + `","password":"` + davPassword + `"}`)
	items := syncOK(t, c, cfg)
	it, ok := items["a b.md"]
	if !ok || len(items) != 1 {
		t.Fatalf("listed %q", ids(items))
	}
	if want := base + "Alice%20Smith@home/docs/a%20b.md"; it.URL != want {
		t.Errorf("URL %q, want %q", it.URL, want)
	}
	if data, _ := fetchAll(t, c, cfg, it); string(data) != "# A B\n" {
		t.Errorf("fetched %q", data)
	}

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>a web page</body></html>")
	}))
	t.Cleanup(page.Close)
	h, err := c.CheckHealth(context.Background(), json.RawMessage(`{"provider":"webdav","url":"`+page.URL+`/"}`))
	if err != nil || h.Status != connector.StatusDown || !strings.Contains(h.Message, "no WebDAV folder") {
		t.Errorf("health of a web page: %+v, %v", h, err)
	}
}
