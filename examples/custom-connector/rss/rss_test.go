package rss_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"example.com/rssconnector/rss"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/plugintest"
)

// feedServer serves the test feeds on loopback the way real servers do:
// with an ETag, answering 304 to a matching If-None-Match, and basic
// authentication on /private/.
type feedServer struct {
	*httptest.Server
	gets atomic.Int64
}

func newFeedServer(t *testing.T) *feedServer {
	s := &feedServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.gets.Add(1)
		path := strings.TrimPrefix(r.URL.Path, "/private")
		if path != r.URL.Path {
			if u, p, ok := r.BasicAuth(); !ok || u != "reader" || p != "s3cret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="feeds"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		data, err := os.ReadFile("testdata" + path)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		etag := fmt.Sprintf(`"%x"`, len(data))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.Write(data)
	}))
	t.Cleanup(s.Close)
	return s
}

func cfg(url string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"url":%q}`, url))
}

func TestConformanceRSS(t *testing.T) {
	srv := newFeedServer(t)
	c := plugintest.StartConnector(t, rss.New())
	plugintest.RunConnectorSuite(t, c,
		plugintest.WithConfig(cfg(srv.URL+"/feed.xml")),
		plugintest.WithInvalidConfigs(
			json.RawMessage(`{}`),
			json.RawMessage(`{"url":"ftp://example.com/feed"}`),
			json.RawMessage(`{"url":"https://example.com/feed","maxItems":-1}`),
			json.RawMessage(`{"url":"https://example.com/feed","password":"p"}`),
			json.RawMessage(`{"url":"https://example.com/feed","colour":"red"}`)),
		plugintest.WithMinItems(3))
}

func TestConformanceAtomWithAuth(t *testing.T) {
	srv := newFeedServer(t)
	c := plugintest.StartConnector(t, rss.New())
	plugintest.RunConnectorSuite(t, c,
		plugintest.WithConfig(json.RawMessage(fmt.Sprintf(`{"url":%q,"username":"reader","password":"s3cret"}`, srv.URL+"/private/atom.xml"))),
		plugintest.WithMinItems(2))
}

func sync(t *testing.T, c connector.Connector, config json.RawMessage, cur []byte) (items []connector.Item, next []byte) {
	t.Helper()
	for ev, err := range c.Sync(context.Background(), connector.SyncRequest{Config: config, Cursor: cur}) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case connector.EventUpsert:
			items = append(items, ev.Item)
		case connector.EventCheckpoint:
			next = ev.Cursor
		case connector.EventSnapshot, connector.EventDelete:
			t.Errorf("unexpected %v: a feed is a window, nothing is deleted", ev.Kind)
		}
	}
	return items, next
}

func TestEntriesBecomeItems(t *testing.T) {
	srv := newFeedServer(t)
	c := plugintest.StartConnector(t, rss.New())
	items, _ := sync(t, c, cfg(srv.URL+"/feed.xml"), nil)
	if len(items) != 3 {
		t.Fatalf("%d items", len(items))
	}
	first := items[0]
	if first.ID != "post-3" || first.Name != "running-plugins-as-processes.html" || first.URL != "https://blog.example.com/plugins" ||
		!first.ModifiedAt.Equal(time.Date(2026, 11, 10, 9, 30, 0, 0, time.UTC)) || first.Metadata["author"] != "Ada" ||
		first.Metadata["feed"] != "Example Engineering Blog" || first.Version == "" || int64(len(first.Inline)) != first.Size {
		t.Errorf("first item = %+v", first)
	}
	// content:encoded wins over description, and stays HTML.
	if !strings.Contains(string(first.Inline), "<b>process</b>") || strings.Contains(string(first.Inline), "Short summary") {
		t.Errorf("content = %s", first.Inline)
	}
	if items[2].ID != "https://blog.example.com/no-guid" {
		t.Errorf("an item without guid is known by its link: %q", items[2].ID)
	}

	atom, _ := sync(t, c, cfg(srv.URL+"/atom.xml"), nil)
	if len(atom) != 2 || atom[0].URL != "https://releases.example.com/2.0" || !strings.Contains(string(atom[0].Inline), "<em>plugins</em>") ||
		!strings.Contains(string(atom[1].Inline), "Bug fixes &amp; small improvements.") {
		t.Errorf("atom items = %+v", atom)
	}

	few, _ := sync(t, c, json.RawMessage(fmt.Sprintf(`{"url":%q,"maxItems":1}`, srv.URL+"/feed.xml")), nil)
	if len(few) != 1 {
		t.Errorf("maxItems 1: %d items", len(few))
	}
}

func TestUnchangedFeedSendsNothing(t *testing.T) {
	srv := newFeedServer(t)
	c := plugintest.StartConnector(t, rss.New())
	items, cur := sync(t, c, cfg(srv.URL+"/feed.xml"), nil)
	if len(items) != 3 || len(cur) == 0 {
		t.Fatalf("first sync: %d items, cursor %q", len(items), cur)
	}
	again, cur2 := sync(t, c, cfg(srv.URL+"/feed.xml"), cur)
	if len(again) != 0 || string(cur2) != string(cur) {
		t.Errorf("sync of an unchanged feed: %d items, cursor %q", len(again), cur2)
	}
}

func TestProblemsAreReported(t *testing.T) {
	srv := newFeedServer(t)
	c := plugintest.StartConnector(t, rss.New())
	ctx := context.Background()

	h, err := c.CheckHealth(ctx, cfg(srv.URL+"/missing.xml"))
	if err != nil || h.Status != connector.StatusDown || !strings.Contains(h.Message, "404") {
		t.Errorf("missing feed: %+v %v", h, err)
	}
	h, err = c.CheckHealth(ctx, cfg(srv.URL+"/feed.xml"))
	if err != nil || h.Status != connector.StatusOK || !strings.Contains(h.Message, "3 entries") {
		t.Errorf("healthy feed: %+v %v", h, err)
	}
	for _, err := range c.Sync(ctx, connector.SyncRequest{Config: cfg(srv.URL + "/private/atom.xml")}) {
		if !errors.Is(err, plugins.ErrUnauthenticated) {
			t.Errorf("feed behind authentication: %v", err)
		}
	}
	for _, err := range c.Sync(ctx, connector.SyncRequest{Config: cfg(srv.URL + "/notes.txt")}) {
		if err == nil || !strings.Contains(err.Error(), "not XML") {
			t.Errorf("not a feed: %v", err)
		}
	}
}
