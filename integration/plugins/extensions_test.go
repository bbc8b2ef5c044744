package plugins_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/pluginhost"
	"github.com/docindex/docindex/docindex/worker"
)

type env struct {
	svc  *docindex.Service
	host *pluginhost.Host
	p    *access.Principal
}

// newEnv starts a plugin host on dir and a service with workers over it.
func newEnv(t *testing.T, dir string) *env {
	t.Helper()
	ctx := context.Background()
	host := pluginhost.New(pluginhost.WithDir(dir))
	if err := host.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc, err := docindex.New(docindextest.NewDB(t), docindex.WithEmbedders(host), docindex.WithBlobStore(blobs),
		docindex.WithConnectors(host))
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.EnsureUser(ctx, "owner@example.com", "", false)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	pool := worker.New(svc.Queue(), svc, worker.WithWorkers(2), worker.WithPoll(50*time.Millisecond))
	go func() { _ = pool.Run(runCtx) }()
	return &env{svc: svc, host: host, p: &access.Principal{UserID: u.ID, Email: u.Email}}
}

func (e *env) waitIndexed(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var indexed int
		if err := e.svc.DB().QueryRowContext(context.Background(), "SELECT count(*) FROM docindex.files WHERE status = 'indexed'").Scan(&indexed); err != nil {
			t.Fatal(err)
		}
		if indexed >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d files indexed", indexed, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The third-party example connector, built from its own module directory and dropped into the
// plugin directory, syncs a feed into a collection.
func TestExampleConnectorSyncsIntoACollection(t *testing.T) {
	ctx := context.Background()
	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	for _, b := range []struct{ out, pkg, in string }{
		{"docindex-connector-rss", ".", filepath.Join(root, "examples/custom-connector")},
		{"docindex-embedder-hash", "./cmd/docindex-embedder-hash", root},
	} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b.out), b.pkg)
		cmd.Dir = b.in
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", b.out, err, out)
		}
	}
	feed, err := os.ReadFile(filepath.Join(root, "examples/custom-connector/rss/testdata/atom.xml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/atom+xml")
		_, _ = w.Write(feed)
	}))
	defer srv.Close()

	e := newEnv(t, dir)
	types, err := e.svc.SourceTypesAvailable(ctx)
	if err != nil || len(types) != 1 || types[0].Type != "rss" {
		t.Fatalf("source types %+v %v", types, err)
	}
	c, err := e.svc.CreateCollection(ctx, e.p, docindex.CollectionInput{Name: "news"})
	if err != nil {
		t.Fatal(err)
	}
	cid := c.ID.String()
	src, err := e.svc.CreateSource(ctx, e.p, docindex.SourceInput{Name: "releases", Type: "rss", CollectionID: &cid,
		Config: json.RawMessage(`{"url": "` + srv.URL + `/feed.xml"}`)})
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.svc.StartSync(ctx, e.p, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.waitIndexed(t, 2)
	r, err := e.svc.GetSyncRun(ctx, e.p, src.ID, run.ID)
	if err != nil || r.Created != 2 {
		t.Fatalf("sync run %+v %v", r, err)
	}
	res, err := e.svc.Search(ctx, e.p, c.ID, docindex.SearchInput{Query: "connectors are now plugins", Mode: "fulltext"})
	if err != nil || len(res) == 0 {
		t.Fatalf("search: %+v %v", res, err)
	}
}

// A search over a collection embedded with GloVe (the real plugin, offline vectors) ranks a
// paraphrase that shares no word with the query above an unrelated passage.
func TestGloveSearchFindsParaphrase(t *testing.T) {
	ctx := context.Background()
	root, _ := filepath.Abs("../..")
	data := filepath.Join(root, ".data/glove/glove-100d.bin")
	if _, err := os.Stat(data); err != nil {
		t.Fatalf("GloVe vectors missing (%v): run scripts/glove.sh (make test does)", err)
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "docindex-embedder-glove"), "./cmd/docindex-embedder-glove")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if err := os.Symlink(data, filepath.Join(dir, "glove-100d.bin")); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, dir)
	c, err := e.svc.CreateCollection(ctx, e.p, docindex.CollectionInput{Name: "semantic", EmbeddingModel: "glove-100d"})
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{
		"paraphrase.txt": "The physician prescribed medicine to cure her illness.",
		"unrelated.txt":  "Stock markets rallied as investors bought shares of banks.",
	}
	for name, text := range docs {
		if _, err := e.svc.UploadFile(ctx, e.p, docindex.Upload{CollectionID: c.ID, Name: name, Body: strings.NewReader(text)}); err != nil {
			t.Fatal(err)
		}
	}
	e.waitIndexed(t, 2)
	res, err := e.svc.Search(ctx, e.p, c.ID, docindex.SearchInput{Query: "doctor gave drugs to treat the disease", Mode: "vector"})
	if err != nil || len(res) != 2 {
		t.Fatalf("search: %+v %v", res, err)
	}
	if res[0].FileName != "paraphrase.txt" || res[0].Score <= res[1].Score {
		t.Fatalf("ranking: %s (%.3f) before %s (%.3f)", res[0].FileName, res[0].Score, res[1].FileName, res[1].Score)
	}
}
