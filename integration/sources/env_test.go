package sources_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/store"
	"github.com/docindex/docindex/docindex/vectorstore"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

// countingEmbedder is the hash embedder with a count of the texts it embedded: an unchanged
// sync must not embed anything again.
type countingEmbedder struct {
	embedder.Embedder
	texts atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, model, texts)
}

// env is a service on a fresh database with the given connectors, a worker pool indexing what
// syncs queue, and one collection owned by owner.
type env struct {
	svc   *docindex.Service
	emb   *countingEmbedder
	owner *access.Principal
	coll  *store.Collection
}

func testLogger() *slog.Logger {
	if os.Getenv("DOCINDEX_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func newEnv(t *testing.T, conns docindex.Connectors) *env {
	t.Helper()
	ctx := context.Background()
	db := docindextest.NewDB(t)
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	emb := &countingEmbedder{Embedder: hash.New()}
	svc, err := docindex.New(db, docindex.WithEmbedders(emb), docindex.WithBlobStore(blobs),
		docindex.WithLogger(testLogger()), docindex.WithSecretKey("integration sources secret key"),
		docindex.WithConnectors(conns))
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.EnsureUser(ctx, "owner@example.com", "Owner", false)
	if err != nil {
		t.Fatal(err)
	}
	p := &access.Principal{UserID: u.ID, Email: u.Email}
	c, err := svc.CreateCollection(ctx, p, docindex.CollectionInput{Name: "synced"})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	pool := worker.New(svc.Queue(), svc, worker.WithWorkers(2), worker.WithPoll(50*time.Millisecond),
		worker.WithLogger(testLogger()))
	go func() { defer close(done); _ = pool.Run(runCtx) }()
	// Stop the pool before the database goes (cleanups run last registered first).
	t.Cleanup(func() { stop(); <-done })
	return &env{svc: svc, emb: emb, owner: p, coll: c}
}

// createSource creates a source feeding the collection and checks that none of secrets shows
// in the response or in clear text in the sources table.
func (e *env) createSource(t *testing.T, typ string, cfg any, secrets ...string) *docindex.SourceView {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cid := e.coll.ID.String()
	src, err := e.svc.CreateSource(context.Background(), e.owner, docindex.SourceInput{Name: typ + " source",
		Type: typ, Config: raw, CollectionID: &cid})
	if err != nil {
		t.Fatalf("create %s source: %v", typ, err)
	}
	for _, s := range secrets {
		if bytes.Contains(src.MaskedConfig, []byte(s)) {
			t.Errorf("the created source shows a secret: %s", src.MaskedConfig)
		}
	}
	if len(secrets) > 0 && !bytes.Contains(src.MaskedConfig, []byte(docindex.Mask)) {
		t.Errorf("the created source shows no masked secret: %s", src.MaskedConfig)
	}
	e.checkSealed(t, src.ID, secrets...)
	return src
}

// checkSealed reads the source's row as PostgreSQL prints it, and its two settings columns as
// stored, and looks for each secret in clear text (and, in the row text, as the hex PostgreSQL
// prints bytea in).
func (e *env) checkSealed(t *testing.T, id uuid.UUID, secrets ...string) {
	t.Helper()
	var row, cfg string
	var sealed []byte
	err := e.svc.DB().QueryRowContext(context.Background(),
		"SELECT s::text, s.config::text, coalesce(s.secrets, ''::bytea) FROM docindex.sources s WHERE s.id = ?", id).
		Scan(&row, &cfg, &sealed)
	if err != nil {
		t.Fatalf("read the source row: %v", err)
	}
	if len(secrets) > 0 && len(sealed) == 0 {
		t.Errorf("the source has secrets but stores none sealed")
	}
	for _, s := range secrets {
		if strings.Contains(row, s) || strings.Contains(row, hex.EncodeToString([]byte(s))) ||
			strings.Contains(cfg, s) || bytes.Contains(sealed, []byte(s)) {
			t.Errorf("secret %q in clear text in docindex.sources", s)
		}
	}
}

// syncNow runs a sync of the source and waits for it and the jobs it queued; it fails the test
// unless the sync completes without item errors.
func (e *env) syncNow(t *testing.T, id uuid.UUID) *store.SyncRun {
	t.Helper()
	r := e.syncWait(t, id)
	if r.Status != "completed" || r.Failed != 0 {
		msg := ""
		if r.Error != nil {
			msg = *r.Error
		}
		t.Fatalf("sync %s (%d failed): %s %s", r.Status, r.Failed, msg, r.Errors)
	}
	return r
}

// syncWait runs a sync of the source and waits for it and the jobs it queued, whatever its end.
func (e *env) syncWait(t *testing.T, id uuid.UUID) *store.SyncRun {
	t.Helper()
	ctx := context.Background()
	run, err := e.svc.StartSync(ctx, e.owner, id)
	if err != nil {
		t.Fatalf("start sync: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := e.svc.GetSyncRun(ctx, e.owner, id, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != "running" && e.busyJobs(t) == 0 {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("sync did not finish in 60s: %+v (%d jobs busy)", r, e.busyJobs(t))
		}
		time.Sleep(40 * time.Millisecond)
	}
}

func (e *env) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := e.svc.DB().QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// fileNames lists the names of a source's files, for failure messages.
func (e *env) fileNames(t *testing.T, sourceID uuid.UUID) []string {
	t.Helper()
	var names []string
	err := e.svc.DB().NewSelect().Table("docindex.files").Column("name").Where("source_id = ?", sourceID).
		OrderExpr("name").Scan(context.Background(), &names)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// chunks is a FROM item (alias it) of every chunk of the collection, merged or not.
func (e *env) chunks() string { return vectorstore.Relation(e.coll.ID) }

// chunkIDs is a fingerprint of the collection's chunks: their ids, in order.
func (e *env) chunkIDs(t *testing.T) string {
	t.Helper()
	var ids string
	if err := e.svc.DB().QueryRowContext(context.Background(),
		"SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM "+e.chunks()+" k").Scan(&ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

func (e *env) busyJobs(t *testing.T) int {
	return e.count(t, "SELECT count(*) FROM docindex.jobs WHERE status IN ('queued', 'running')")
}

func (e *env) jobs(t *testing.T) int { return e.count(t, "SELECT count(*) FROM docindex.jobs") }

// hit is a search result reduced to what the tests compare.
type hit struct {
	file uuid.UUID
	name string
}

// search returns the files whose chunks match q by full text, best first, each once.
func (e *env) search(t *testing.T, q string) []hit {
	t.Helper()
	res, err := e.svc.Search(context.Background(), e.owner, e.coll.ID, docindex.SearchInput{Query: q, Mode: "fulltext", TopK: 50})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var out []hit
	for _, r := range res {
		h := hit{file: r.FileID, name: r.FileName}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// searchOne returns the one file that q finds, failing unless it is named name.
func (e *env) searchOne(t *testing.T, q, name string) hit {
	t.Helper()
	got := e.search(t, q)
	if len(got) != 1 || got[0].name != name {
		t.Fatalf("search %q found %v, want only %s", q, got, name)
	}
	return got[0]
}

// lifecycle is what one source type's test arranges on its server: the items it starts with,
// words that find them, and the change and deletion it makes between syncs.
type lifecycle struct {
	// items is how many items the first sync lists.
	items int
	// find is a word only the item named findIn holds.
	find, findIn string
	// incremental: an unchanged sync lists nothing at all (the connector sends the changes
	// since its cursor); otherwise it lists every item again and each must be skipped.
	incremental bool

	// change rewrites the item named changedName: oldWord leaves it, newWord comes in.
	change           func(t *testing.T)
	changedName      string
	oldWord, newWord string

	// remove deletes the item that removedWord alone finds, named removedName.
	remove      func(t *testing.T)
	removedName string
	removedWord string
}

// run syncs the source four times: first everything is created and indexed; with no change
// nothing is fetched into a new job or embedded again; a change is reindexed in place; a deletion
// disappears from search with its file row.
func (e *env) run(t *testing.T, src *docindex.SourceView, lc lifecycle) {
	t.Helper()
	id := src.ID

	// 1. Everything is created and indexed.
	r := e.syncNow(t, id)
	if r.Created != lc.items || r.Updated != 0 || r.Deleted != 0 || r.Skipped != 0 {
		t.Fatalf("first sync: created %d, updated %d, deleted %d, skipped %d; want %d created; files %v",
			r.Created, r.Updated, r.Deleted, r.Skipped, lc.items, e.fileNames(t, id))
	}
	if n := e.count(t, "SELECT count(*) FROM docindex.files WHERE source_id = ?", id); n != lc.items {
		t.Fatalf("%d files after the first sync, want %d", n, lc.items)
	}
	if n := e.count(t, "SELECT count(*) FROM docindex.files WHERE source_id = ? AND status NOT IN ('indexed', 'indexed_with_warning')", id); n != 0 {
		t.Fatalf("%d files not indexed after the first sync", n)
	}
	if n := e.count(t, "SELECT count(*) FROM docindex.files f WHERE f.source_id = ? AND NOT EXISTS (SELECT 1 FROM "+e.chunks()+" c WHERE c.file_id = f.id)", id); n != 0 {
		t.Fatalf("%d files without chunks after the first sync", n)
	}
	e.searchOne(t, lc.find, lc.findIn)

	// 2. No change: nothing queued, nothing embedded again, every listed item skipped.
	jobs, embedded, chunks := e.jobs(t), e.emb.texts.Load(), e.chunkIDs(t)
	r = e.syncNow(t, id)
	if r.Created != 0 || r.Updated != 0 || r.Deleted != 0 || r.Skipped != r.Seen {
		t.Fatalf("unchanged sync: seen %d, created %d, updated %d, deleted %d, skipped %d",
			r.Seen, r.Created, r.Updated, r.Deleted, r.Skipped)
	}
	if lc.incremental && r.Seen != 0 || !lc.incremental && r.Seen != lc.items {
		t.Errorf("unchanged sync saw %d items (incremental %v, %d items)", r.Seen, lc.incremental, lc.items)
	}
	if n := e.jobs(t); n != jobs {
		t.Fatalf("an unchanged sync queued %d jobs", n-jobs)
	}
	if n := e.emb.texts.Load(); n != embedded {
		t.Fatalf("an unchanged sync embedded %d texts", n-embedded)
	}
	if e.chunkIDs(t) != chunks {
		t.Fatal("an unchanged sync replaced chunks")
	}

	// 3. A changed item is reindexed in place: its new text is found, its old text is not.
	old := e.searchOne(t, lc.oldWord, lc.changedName)
	lc.change(t)
	r = e.syncNow(t, id)
	if r.Updated != 1 || r.Created != 0 || r.Deleted != 0 {
		t.Fatalf("sync after a change: created %d, updated %d, deleted %d, skipped %d; want 1 updated",
			r.Created, r.Updated, r.Deleted, r.Skipped)
	}
	if got := e.searchOne(t, lc.newWord, lc.changedName); got.file != old.file {
		t.Errorf("the changed item became file %s, was %s", got.file, old.file)
	}
	if got := e.search(t, lc.oldWord); len(got) != 0 {
		t.Errorf("old text %q still found in %v", lc.oldWord, got)
	}
	if e.emb.texts.Load() == embedded {
		t.Error("the changed item was not embedded again")
	}

	// 4. A deleted item disappears from search, and its file row goes.
	gone := e.searchOne(t, lc.removedWord, lc.removedName)
	lc.remove(t)
	r = e.syncNow(t, id)
	if r.Deleted != 1 || r.Created != 0 || r.Updated != 0 {
		t.Fatalf("sync after a deletion: created %d, updated %d, deleted %d; want 1 deleted", r.Created, r.Updated, r.Deleted)
	}
	if got := e.search(t, lc.removedWord); len(got) != 0 {
		t.Errorf("deleted item still found: %v", got)
	}
	if n := e.count(t, "SELECT count(*) FROM docindex.files WHERE id = ?", gone.file); n != 0 {
		t.Errorf("the deleted item's file row is still there")
	}
	if n := e.count(t, "SELECT count(*) FROM "+e.chunks()+" k WHERE file_id = ?", gone.file); n != 0 {
		t.Errorf("the deleted item left %d chunks", n)
	}
	if n := e.count(t, "SELECT count(*) FROM docindex.files WHERE source_id = ?", id); n != lc.items-1 {
		t.Errorf("%d files after the deletion, want %d", n, lc.items-1)
	}
	e.searchOne(t, lc.newWord, lc.changedName)

	runs, err := e.svc.ListSyncRuns(context.Background(), e.owner, id, 0)
	if err != nil || len(runs) != 4 {
		t.Errorf("sync history: %d runs, %v; want 4", len(runs), err)
	}
}
