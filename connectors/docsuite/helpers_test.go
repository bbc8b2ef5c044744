package docsuite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docindex/docindex/plugins/connector"
)

// run is the outcome of one sync.
type run struct {
	events   []connector.Event
	items    map[string]connector.Item
	order    []string // upserted ids in order
	deleted  []string
	snapshot bool
	cursor   []byte
	err      error
}

func (r run) ids() []string {
	ids := make([]string, 0, len(r.items))
	for id := range r.items {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func syncOnce(t *testing.T, c connector.Connector, cfg json.RawMessage, cursor []byte) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := run{items: map[string]connector.Item{}}
	for ev, err := range c.Sync(ctx, connector.SyncRequest{Config: cfg, Cursor: cursor}) {
		if err != nil {
			r.err = err
			break
		}
		r.events = append(r.events, ev)
		switch ev.Kind {
		case connector.EventSnapshot:
			if len(r.events) != 1 {
				t.Errorf("snapshot as event %d", len(r.events))
			}
			r.snapshot = true
		case connector.EventUpsert:
			if _, dup := r.items[ev.Item.ID]; dup {
				t.Errorf("item %s upserted twice", ev.Item.ID)
			}
			r.items[ev.Item.ID] = ev.Item
			r.order = append(r.order, ev.Item.ID)
		case connector.EventDelete:
			r.deleted = append(r.deleted, ev.ID)
		case connector.EventCheckpoint:
			r.cursor = ev.Cursor
		}
	}
	return r
}

// mustSync is syncOnce that fails the test on a sync error.
func mustSync(t *testing.T, c connector.Connector, cfg json.RawMessage, cursor []byte) run {
	t.Helper()
	r := syncOnce(t, c, cfg, cursor)
	if r.err != nil {
		t.Fatalf("sync: %v", r.err)
	}
	return r
}

// fetch reads an item's whole content.
func fetch(t *testing.T, c connector.Connector, cfg json.RawMessage, it connector.Item) (*connector.Content, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	content, err := c.Fetch(ctx, connector.FetchRequest{Config: cfg, Item: it})
	if err != nil {
		return nil, "", err
	}
	defer content.Body.Close()
	data, err := io.ReadAll(content.Body)
	if err != nil {
		return content, "", err
	}
	if content.Size >= 0 && int64(len(data)) != content.Size {
		t.Errorf("fetch %s: %d bytes, size says %d", it.ID, len(data), content.Size)
	}
	return content, string(data), nil
}

func mustFetch(t *testing.T, c connector.Connector, cfg json.RawMessage, it connector.Item) (*connector.Content, string) {
	t.Helper()
	content, body, err := fetch(t, c, cfg, it)
	if err != nil {
		t.Fatalf("fetch %s: %v", it.ID, err)
	}
	return content, body
}

func byTitle(t *testing.T, r run, title string) connector.Item {
	t.Helper()
	for _, it := range r.items {
		if it.Metadata["title"] == title {
			return it
		}
	}
	t.Fatalf("no item titled %q among %v", title, titles(r))
	return connector.Item{}
}

func titles(r run) []string {
	var out []string
	for _, id := range r.order {
		out = append(out, r.items[id].Metadata["title"].(string))
	}
	return out
}

// logBuffer is a logger whose output a test can search.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func assertNoSecret(t *testing.T, what, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s contains a secret (%q…): %s", what, s[:4], text)
		}
	}
}
