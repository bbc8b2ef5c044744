package filecloud_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docindex/docindex/connectors/filecloud"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/plugintest"
)

// initialFiles is the content of the source's root (WebDAV) or prefix (S3)
// at the start of a behaviour test.
func initialFiles() map[string][]byte {
	var big bytes.Buffer // several Fetch chunks (256 KiB each) and gRPC messages
	for i := 0; big.Len() < 3<<20; i++ {
		fmt.Fprintf(&big, "%d,row %d,%x\n", i, i, i*7919)
	}
	return map[string][]byte{
		"guide/intro.md":             []byte("# Introduction\n\nWelcome to the guide.\n"),
		"guide/setup.md":             []byte("# Setup\n\nInstall it.\n"),
		"guide/deep/nested/page.md":  []byte("# Deep\n\nFar down.\n"),
		"notes.txt":                  []byte("plain notes\n"),
		"report.pdf":                 []byte("%PDF-1.4\n% not a real PDF, only its name matters here\n"),
		"drafts/wip.md":              []byte("# Work in progress\n"),
		"with space/ümlaut & co.txt": []byte("a name that needs escaping\n"),
		"data/big.csv":               big.Bytes(),
	}
}

// fixture is a source the behaviour tests can change.
type fixture struct {
	base      map[string]any // a valid configuration
	secretKey string         // the configuration key of the secret
	put       func(t *testing.T, rel string, data []byte)
	remove    func(t *testing.T, rel string)
	// urlPrefix starts the web URL of every item.
	urlPrefix string
}

// config returns the base configuration with kv (key, value pairs) set;
// a nil value removes the key.
func (f fixture) config(kv ...any) json.RawMessage {
	m := maps.Clone(f.base)
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(m, kv[i].(string))
		} else {
			m[kv[i].(string)] = kv[i+1]
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func (f fixture) secret() string { return f.base[f.secretKey].(string) }

// logBuffer is a slog destination the tests search for secrets.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// listing is the outcome of one sync.
type listing struct {
	items map[string]connector.Item
	err   error
}

func syncOnce(t *testing.T, c connector.Connector, cfg json.RawMessage) listing {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := listing{items: map[string]connector.Item{}}
	n := 0
	for ev, err := range c.Sync(ctx, connector.SyncRequest{Config: cfg}) {
		if err != nil {
			l.err = err
			break
		}
		n++
		switch ev.Kind {
		case connector.EventSnapshot:
			if n != 1 {
				t.Errorf("snapshot as event %d", n)
			}
		case connector.EventUpsert:
			if _, dup := l.items[ev.Item.ID]; dup {
				t.Errorf("%q listed twice", ev.Item.ID)
			}
			l.items[ev.Item.ID] = ev.Item
		default:
			t.Errorf("unexpected %v event in a full listing", ev.Kind)
		}
	}
	if l.err == nil && n == 0 {
		t.Error("a sync without a snapshot event")
	}
	return l
}

// syncOK syncs and fails the test on an error.
func syncOK(t *testing.T, c connector.Connector, cfg json.RawMessage) map[string]connector.Item {
	t.Helper()
	l := syncOnce(t, c, cfg)
	if l.err != nil {
		t.Fatalf("sync: %v", l.err)
	}
	return l.items
}

func ids(items map[string]connector.Item) []string {
	return slices.Sorted(maps.Keys(items))
}

func fetchAll(t *testing.T, c connector.Connector, cfg json.RawMessage, it connector.Item) ([]byte, *connector.Content) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	content, err := c.Fetch(ctx, connector.FetchRequest{Config: cfg, Item: it})
	if err != nil {
		t.Fatalf("fetch %q: %v", it.ID, err)
	}
	defer content.Body.Close()
	data, err := io.ReadAll(content.Body)
	if err != nil {
		t.Fatalf("fetch %q: read: %v", it.ID, err)
	}
	return data, content
}

// runBehaviour changes the source step by step and checks what syncs see.
// The steps build on each other.
func runBehaviour(t *testing.T, f fixture) {
	logs := &logBuffer{}
	c := plugintest.StartConnector(t, filecloud.New(filecloud.WithLogger(slog.New(slog.NewTextHandler(logs, nil)))))
	cfg := f.config()
	files := initialFiles()
	var first map[string]connector.Item

	t.Run("FirstSyncListsEverything", func(t *testing.T) {
		first = syncOK(t, c, cfg)
		if got, want := ids(first), slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
			t.Fatalf("listed %q\nwant     %q", got, want)
		}
		for id, it := range first {
			if it.Version == "" || it.Name == "" || it.Path != id || it.Size != int64(len(files[id])) || it.ModifiedAt.IsZero() {
				t.Errorf("item %q: %+v", id, it)
			}
			if !strings.HasPrefix(it.URL, f.urlPrefix) || it.Metadata["url"] != it.URL || it.Metadata["path"] != id {
				t.Errorf("item %q: URL %q (want it below %q), metadata %v", id, it.URL, f.urlPrefix, it.Metadata)
			}
			data, content := fetchAll(t, c, cfg, it)
			if !bytes.Equal(data, files[id]) {
				t.Errorf("fetch %q: %d bytes that differ from the %d written", id, len(data), len(files[id]))
			}
			if content.Size != -1 && content.Size != int64(len(data)) {
				t.Errorf("fetch %q: size %d for %d bytes", id, content.Size, len(data))
			}
			if content.Version != "" && content.Version != it.Version {
				t.Errorf("fetch %q: version %q, the listing said %q", id, content.Version, it.Version)
			}
		}
		if it := first["with space/ümlaut & co.txt"]; it.Name != "ümlaut & co.txt" || !strings.Contains(it.URL, "with%20space/") {
			t.Errorf("escaped name: %+v", it)
		}
		if ct := first["report.pdf"].ContentType; ct != "application/pdf" {
			t.Errorf("report.pdf: content type %q", ct)
		}
		if ct := first["notes.txt"].ContentType; !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("notes.txt: content type %q", ct)
		}
		if first["guide/deep/nested/page.md"].Name != "page.md" {
			t.Errorf("nested name: %+v", first["guide/deep/nested/page.md"])
		}
	})
	if first == nil {
		t.FailNow()
	}

	t.Run("SecondSyncIsUnchanged", func(t *testing.T) {
		second := syncOK(t, c, cfg)
		if !slices.Equal(ids(second), ids(first)) {
			t.Fatalf("second sync listed %q, first %q", ids(second), ids(first))
		}
		for id, it := range second {
			if it.Version != first[id].Version {
				t.Errorf("%q: version %q then %q without a change", id, first[id].Version, it.Version)
			}
		}
	})

	t.Run("ChangedItemGetsNewVersion", func(t *testing.T) {
		changed := []byte("# Introduction\n\nRewritten, and longer than before.\n")
		f.put(t, "guide/intro.md", changed)
		f.put(t, "guide/new.md", []byte("# New page\n"))
		now := syncOK(t, c, cfg)
		want := append(ids(first), "guide/new.md")
		slices.Sort(want)
		if !slices.Equal(ids(now), want) {
			t.Fatalf("listed %q, want %q", ids(now), want)
		}
		for id, it := range now {
			switch {
			case id == "guide/intro.md":
				if it.Version == first[id].Version {
					t.Errorf("changed %q kept version %q", id, it.Version)
				}
				if data, _ := fetchAll(t, c, cfg, it); !bytes.Equal(data, changed) {
					t.Errorf("fetch of the changed item: %q", data)
				}
			case id == "guide/new.md":
			case it.Version != first[id].Version:
				t.Errorf("unchanged %q: version %q then %q", id, first[id].Version, it.Version)
			}
		}
	})

	t.Run("DeletedItemIsGone", func(t *testing.T) {
		f.remove(t, "notes.txt")
		now := syncOK(t, c, cfg)
		if _, ok := now["notes.txt"]; ok {
			t.Error("a deleted file is still listed")
		}
		if len(now) != len(first) { // one added, one deleted
			t.Errorf("listed %q", ids(now))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Fetch(ctx, connector.FetchRequest{Config: cfg, Item: first["notes.txt"]})
		if !errors.Is(err, plugins.ErrNotFound) {
			t.Errorf("fetch of a deleted item: %v; want ErrNotFound", err)
		}
	})

	t.Run("IncludeExclude", func(t *testing.T) {
		for _, tc := range []struct {
			include, exclude []string
			want             []string
		}{
			{include: []string{"guide/**"}, want: []string{"guide/deep/nested/page.md", "guide/intro.md", "guide/new.md", "guide/setup.md"}},
			{include: []string{"guide"}, want: []string{"guide/deep/nested/page.md", "guide/intro.md", "guide/new.md", "guide/setup.md"}},
			{include: []string{"guide/*.md"}, want: []string{"guide/intro.md", "guide/new.md", "guide/setup.md"}},
			{include: []string{"*.md"}, exclude: []string{"drafts", "deep/"},
				want: []string{"guide/intro.md", "guide/new.md", "guide/setup.md"}},
			{include: []string{"**/*.pdf", "/data/*.csv"}, want: []string{"data/big.csv", "report.pdf"}},
			{exclude: []string{"guide/**", "*.csv", "with space"}, want: []string{"drafts/wip.md", "report.pdf"}},
			{include: []string{"nothing-matches-*"}, want: []string{}},
		} {
			got := ids(syncOK(t, c, f.config("include", tc.include, "exclude", tc.exclude)))
			if !slices.Equal(got, tc.want) {
				t.Errorf("include %q exclude %q: listed %q, want %q", tc.include, tc.exclude, got, tc.want)
			}
		}
		// An excluded file is not part of the source: Fetch refuses it.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Fetch(ctx, connector.FetchRequest{Config: f.config("exclude", []string{"*.pdf"}), Item: first["report.pdf"]})
		if !errors.Is(err, plugins.ErrNotFound) {
			t.Errorf("fetch of an excluded item: %v; want ErrNotFound", err)
		}
	})

	t.Run("WrongSecretIsAClearErrorWithoutTheSecret", func(t *testing.T) {
		wrong := "Wrong-" + f.secret()
		bad := f.config(f.secretKey, wrong)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		l := syncOnce(t, c, bad)
		if !errors.Is(l.err, plugins.ErrUnauthenticated) || !strings.Contains(l.err.Error(), "refused the credentials") {
			t.Errorf("sync with a wrong secret: %v; want ErrUnauthenticated saying the credentials were refused", l.err)
		}
		if len(l.items) != 0 {
			t.Errorf("sync with a wrong secret listed %d items", len(l.items))
		}
		mustNotContain(t, "sync error", fmt.Sprint(l.err), wrong, f.secret())
		t.Logf("sync error: %v", l.err)
		h, err := c.CheckHealth(ctx, bad)
		if err != nil || h.Status != connector.StatusDown || !strings.Contains(h.Message, "credentials") {
			t.Errorf("health with a wrong secret: %+v, %v; want down, naming the credentials", h, err)
		}
		mustNotContain(t, "health message", h.Message, wrong, f.secret())
		_, err = c.Fetch(ctx, connector.FetchRequest{Config: bad, Item: first["report.pdf"]})
		if !errors.Is(err, plugins.ErrUnauthenticated) {
			t.Errorf("fetch with a wrong secret: %v; want ErrUnauthenticated", err)
		}
		mustNotContain(t, "fetch error", fmt.Sprint(err), wrong, f.secret())
	})

	t.Run("UnreachableServerIsDown", func(t *testing.T) {
		dead := "http://" + freeAddr(t) + "/"
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		start := time.Now()
		h, err := c.CheckHealth(ctx, f.config("url", dead))
		if err != nil || h.Status != connector.StatusDown || h.Message == "" {
			t.Errorf("health of a dead port: %+v, %v; want down with a message", h, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("health of a dead port took %s", d)
		}
		mustNotContain(t, "health message", h.Message, f.secret())
		t.Logf("health of a dead port: %s", h.Message)
		h, err = c.CheckHealth(ctx, cfg)
		if err != nil || h.Status != connector.StatusOK {
			t.Errorf("health of the live source: %+v, %v", h, err)
		}
		if l := syncOnce(t, c, f.config("url", dead)); l.err == nil {
			t.Error("sync of a dead port succeeded")
		}
	})

	t.Run("LogsWithoutSecrets", func(t *testing.T) {
		out := logs.String()
		if !strings.Contains(out, "filecloud sync listed") {
			t.Errorf("no sync summary in the log:\n%s", out)
		}
		mustNotContain(t, "the connector's log", out, f.secret())
	})
}
