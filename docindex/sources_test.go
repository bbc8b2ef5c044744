package docindex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/store"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

// memConnector is a connector over an in-memory set of documents, so the reconciliation logic is
// tested without a network. The four real connectors have their own tests against real servers.
type memConnector struct {
	typ   string
	mu    sync.Mutex
	docs  map[string]memDoc
	calls int // Fetch calls
}

type memDoc struct {
	text   string
	access *connector.Access
}

func (m *memConnector) Describe(context.Context) (connector.Description, error) {
	caps := []connector.Capability{connector.CapSchedule, connector.CapACL}
	if m.typ == "docsuite" {
		caps = []connector.Capability{connector.CapACL}
	}
	return connector.Description{Type: m.typ, Version: "1.0.0", DisplayName: "memory", Capabilities: caps,
		ConfigSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},"token":{"type":"string","writeOnly":true},"depth":{"type":"integer","minimum":0}},"required":["url"]}`)}, nil
}

func (m *memConnector) Validate(_ context.Context, cfg json.RawMessage) error {
	var c struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal(cfg, &c)
	if c.URL == "" {
		ve := &connector.ValidationError{}
		ve.Add("url", "is required")
		return ve.Err()
	}
	return nil
}

func (m *memConnector) CheckHealth(context.Context, json.RawMessage) (connector.Health, error) {
	return connector.Health{Status: connector.StatusOK}, nil
}

func version(text string) string {
	return strings.ToLower(uuid.NewSHA1(uuid.Nil, []byte(text)).String()[:8])
}

func (m *memConnector) Sync(_ context.Context, _ connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		m.mu.Lock()
		ids := make([]string, 0, len(m.docs))
		for id := range m.docs {
			ids = append(ids, id)
		}
		docs := m.docs
		m.mu.Unlock()
		sort.Strings(ids)
		if !yield(connector.Snapshot(), nil) {
			return
		}
		for _, id := range ids {
			d := docs[id]
			it := connector.Item{ID: id, Version: version(d.text), Name: id + ".md", ContentType: "text/markdown",
				URL: "mem://" + id, Access: d.access}
			if !yield(connector.Upsert(it), nil) {
				return
			}
		}
	}
}

func (m *memConnector) Fetch(_ context.Context, req connector.FetchRequest) (*connector.Content, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	d, ok := m.docs[req.Item.ID]
	if !ok {
		return nil, errors.New("gone")
	}
	return &connector.Content{ContentType: "text/markdown", Size: int64(len(d.text)), Body: io.NopCloser(strings.NewReader(d.text))}, nil
}

type syncEnv struct {
	svc   *docindex.Service
	conn  *memConnector
	owner *access.Principal
	coll  *store.Collection
}

func newSyncEnv(t *testing.T) *syncEnv {
	t.Helper()
	ctx := context.Background()
	db := docindextest.NewDB(t)
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	conn := &memConnector{typ: "git", docs: map[string]memDoc{}}
	svc, err := docindex.New(db, docindex.WithEmbedders(hash.New()), docindex.WithBlobStore(blobs),
		docindex.WithLogger(testLogger()), docindex.WithSecretKey("test key"),
		docindex.WithConnectors(docindextest.Connectors{"git": conn, "docsuite": &memConnector{typ: "docsuite"}}))
	if err != nil {
		t.Fatal(err)
	}
	p := ownerPrincipal(t, svc)
	c, err := svc.CreateCollection(ctx, p, docindex.CollectionInput{Name: "synced"})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	pool := worker.New(svc.Queue(), svc, worker.WithWorkers(2), worker.WithPoll(50*time.Millisecond))
	go func() { _ = pool.Run(runCtx) }()
	return &syncEnv{svc: svc, conn: conn, owner: p, coll: c}
}

// syncNow runs a sync and waits for it and the jobs it queued.
func (e *syncEnv) syncNow(t *testing.T, id uuid.UUID) *store.SyncRun {
	t.Helper()
	ctx := context.Background()
	run, err := e.svc.StartSync(ctx, e.owner, id)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := e.svc.GetSyncRun(ctx, e.owner, id, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		var busy int
		if err := e.svc.DB().QueryRowContext(ctx, "SELECT count(*) FROM docindex.jobs WHERE status IN ('queued','running')").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if r.Status != "running" && busy == 0 {
			if r.Status != "completed" {
				t.Fatalf("sync %s: %v %s", r.Status, r.Error, r.Errors)
			}
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("sync did not finish: %+v", r)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

func (e *syncEnv) search(t *testing.T, p *access.Principal, q string) []string {
	t.Helper()
	res, err := e.svc.Search(context.Background(), p, e.coll.ID, docindex.SearchInput{Query: q, Mode: "fulltext"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res {
		names = append(names, r.FileName)
	}
	return names
}

func TestSyncReconciles(t *testing.T) {
	ctx := context.Background()
	e := newSyncEnv(t)
	e.conn.docs = map[string]memDoc{
		"alpha": {text: "# Alpha\n\nAlbatross flights cross the ocean."},
		"beta":  {text: "# Beta\n\nBeavers build dams in rivers."},
		"gamma": {text: "# Gamma\n\nGannets dive for fish."},
	}
	cid := e.coll.ID.String()
	src, err := e.svc.CreateSource(ctx, e.owner, docindex.SourceInput{Name: "mem", Type: "git",
		Config: json.RawMessage(`{"url": "mem://repo", "token": "s3cr3t-token"}`), CollectionID: &cid})
	if err != nil {
		t.Fatal(err)
	}

	r := e.syncNow(t, src.ID)
	if r.Created != 3 || r.Skipped != 0 || r.Deleted != 0 || !r.FullListing {
		t.Fatalf("first sync: %+v", r)
	}
	if got := e.search(t, e.owner, "beavers"); len(got) != 1 || got[0] != "beta.md" {
		t.Fatalf("search after first sync: %v", got)
	}
	var chunksBefore int
	if err := e.svc.DB().QueryRowContext(ctx, "SELECT count(*) FROM docindex.jobs").Scan(&chunksBefore); err != nil {
		t.Fatal(err)
	}

	// No change: nothing fetched, nothing re-embedded.
	fetches := e.conn.calls
	r = e.syncNow(t, src.ID)
	if r.Created != 0 || r.Updated != 0 || r.Skipped != 3 || e.conn.calls != fetches {
		t.Fatalf("unchanged sync: %+v, %d fetches", r, e.conn.calls-fetches)
	}
	var jobs int
	if err := e.svc.DB().QueryRowContext(ctx, "SELECT count(*) FROM docindex.jobs").Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs != chunksBefore {
		t.Fatalf("an unchanged sync queued %d jobs", jobs-chunksBefore)
	}

	// A change is reindexed; a deletion disappears from search.
	e.conn.mu.Lock()
	e.conn.docs["beta"] = memDoc{text: "# Beta\n\nBadgers dig setts under hedges."}
	delete(e.conn.docs, "gamma")
	e.conn.mu.Unlock()
	r = e.syncNow(t, src.ID)
	if r.Updated != 1 || r.Deleted != 1 || r.Skipped != 1 {
		t.Fatalf("changed sync: %+v", r)
	}
	if got := e.search(t, e.owner, "badgers"); len(got) != 1 || got[0] != "beta.md" {
		t.Fatalf("changed item not reindexed: %v", got)
	}
	if got := e.search(t, e.owner, "beavers"); len(got) != 0 {
		t.Fatalf("old content still found: %v", got)
	}
	if got := e.search(t, e.owner, "gannets"); len(got) != 0 {
		t.Fatalf("deleted item still found: %v", got)
	}
	runs, err := e.svc.ListSyncRuns(ctx, e.owner, src.ID, 0)
	if err != nil || len(runs) != 3 {
		t.Fatalf("sync history: %d runs, %v", len(runs), err)
	}
}

func TestSourceSecretsAreSealedAndMasked(t *testing.T) {
	ctx := context.Background()
	e := newSyncEnv(t)
	src, err := e.svc.CreateSource(ctx, e.owner, docindex.SourceInput{Name: "mem", Type: "git",
		Config: json.RawMessage(`{"url": "mem://repo", "token": "s3cr3t-token"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(src.MaskedConfig, []byte("s3cr3t")) || !bytes.Contains(src.MaskedConfig, []byte(docindex.Mask)) {
		t.Fatalf("response config %s", src.MaskedConfig)
	}
	var n int
	if err := e.svc.DB().QueryRowContext(ctx, "SELECT count(*) FROM docindex.sources WHERE config::text LIKE '%s3cr3t%' OR encode(secrets, 'escape') LIKE '%s3cr3t%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("secret in clear text in the database (%d, %v)", n, err)
	}
	// Updating with the mask keeps the secret; the connector still gets the real one.
	upd, err := e.svc.UpdateSource(ctx, e.owner, src.ID, docindex.SourceUpdate{Config: json.RawMessage(`{"url": "mem://other", "token": "********"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(upd.MaskedConfig, []byte("mem://other")) || bytes.Contains(upd.MaskedConfig, []byte("s3cr3t")) {
		t.Fatalf("updated config %s", upd.MaskedConfig)
	}
	list, err := e.svc.ListSources(ctx, e.owner, "")
	if err != nil || len(list) != 1 || bytes.Contains(list[0].MaskedConfig, []byte("s3cr3t")) {
		t.Fatalf("list: %v %v", list, err)
	}
	// Validation by the connector, the schedule rule for docsuite.
	for name, in := range map[string]docindex.SourceInput{
		"missing url":       {Name: "x", Type: "git", Config: json.RawMessage(`{}`)},
		"unknown type":      {Name: "x", Type: "ftp", Config: json.RawMessage(`{"url":"u"}`)},
		"missing name":      {Type: "git", Config: json.RawMessage(`{"url":"u"}`)},
		"docsuite schedule": {Name: "x", Type: "docsuite", Config: json.RawMessage(`{"url":"u"}`), SyncSchedule: ptr("daily")},
		"bad schedule":      {Name: "x", Type: "git", Config: json.RawMessage(`{"url":"u"}`), SyncSchedule: ptr("monthly")},
		"not installed":     {Name: "x", Type: "filecloud", Config: json.RawMessage(`{"url":"u"}`)},
		"unloaded plugin":   {Name: "x", Type: "rss", Config: json.RawMessage(`{"url":"u"}`)},
		"against schema":    {Name: "x", Type: "git", Config: json.RawMessage(`{"url":"u","depth":-1}`)},
	} {
		if _, err := e.svc.CreateSource(ctx, e.owner, in); !errors.Is(err, docindex.ErrInvalid) {
			t.Errorf("%s: %v, want an invalid-request error", name, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestSearchHonoursAccessLists(t *testing.T) {
	ctx := context.Background()
	e := newSyncEnv(t)
	e.conn.docs = map[string]memDoc{
		"open":    {text: "Puffins nest on open cliffs.", access: &connector.Access{Public: true}},
		"team":    {text: "Puffins winter at sea with the team.", access: &connector.Access{Groups: []string{"birders"}}},
		"private": {text: "Puffins private notes of Ann.", access: &connector.Access{Users: []string{"Ann@Example.com"}}},
	}
	// The collection is public, so anyone may search it; the access lists decide what they see.
	if _, err := e.svc.UpdateCollection(ctx, e.owner, e.coll.ID, docindex.CollectionUpdate{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.CreateShare(ctx, e.owner, e.coll.ID, docindex.ShareInput{Type: "public", Role: "viewer"}); err != nil {
		t.Fatal(err)
	}
	cid := e.coll.ID.String()
	src, err := e.svc.CreateSource(ctx, e.owner, docindex.SourceInput{Name: "mem", Type: "git",
		Config: json.RawMessage(`{"url": "mem://repo"}`), CollectionID: &cid})
	if err != nil {
		t.Fatal(err)
	}
	e.syncNow(t, src.ID)
	for who, want := range map[string][]string{
		"stranger": {"open.md"},
		"birder":   {"open.md", "team.md"},
		"ann":      {"open.md", "private.md"},
	} {
		p := map[string]*access.Principal{
			"stranger": {UserID: uuid.New(), Email: "stranger@example.com"},
			"birder":   {UserID: uuid.New(), Email: "b@example.com", Groups: []string{"birders"}},
			"ann":      {UserID: uuid.New(), Email: "ann@example.com"},
		}[who]
		got := e.search(t, p, "puffins")
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s sees %v, want %v", who, got, want)
		}
	}
	_ = queue.StatusQueued
}

// A sync whose process died (its run still says running, but its heartbeat stopped) no longer
// blocks its source: the next start reaps it as failed and runs.
func TestDeadSyncFreesItsSource(t *testing.T) {
	ctx := context.Background()
	e := newSyncEnv(t)
	e.conn.docs = map[string]memDoc{"a": {text: "Ospreys fish in lakes."}}
	cid := e.coll.ID.String()
	src, err := e.svc.CreateSource(ctx, e.owner, docindex.SourceInput{Name: "mem", Type: "git",
		Config: json.RawMessage(`{"url": "mem://repo"}`), CollectionID: &cid})
	if err != nil {
		t.Fatal(err)
	}
	// A run of a crashed process: running, heartbeat two minutes old.
	if _, err := e.svc.DB().ExecContext(ctx, `INSERT INTO docindex.sync_runs (source_id, trigger, holder, heartbeat_at)
		VALUES (?, 'manual', 'crashed-host', now() - interval '2 minutes')`, src.ID); err != nil {
		t.Fatal(err)
	}
	// A live run (fresh heartbeat) does block a second one.
	if _, err := e.svc.DB().ExecContext(ctx, `UPDATE docindex.sync_runs SET heartbeat_at = now() WHERE holder = 'crashed-host'`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.StartSync(ctx, e.owner, src.ID); !errors.Is(err, docindex.ErrConflict) {
		t.Fatalf("second sync beside a live one: %v, want a conflict", err)
	}
	if _, err := e.svc.DB().ExecContext(ctx, `UPDATE docindex.sync_runs SET heartbeat_at = now() - interval '2 minutes' WHERE holder = 'crashed-host'`); err != nil {
		t.Fatal(err)
	}
	r := e.syncNow(t, src.ID)
	if r.Created != 1 {
		t.Fatalf("sync after the dead one: %+v", r)
	}
	var status, msg string
	if err := e.svc.DB().QueryRowContext(ctx, "SELECT status, error FROM docindex.sync_runs WHERE holder = 'crashed-host'").Scan(&status, &msg); err != nil {
		t.Fatal(err)
	}
	if status != "failed" || !strings.Contains(msg, "died") {
		t.Fatalf("dead run: %s %q", status, msg)
	}
}
