package httpapi_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/plugintest"
)

// Secret values used by the tests. They share a marker so that one scan of every response body
// (and of the sources table) proves that no secret is ever shown or stored in clear text.
const (
	secretMarker  = "s3cr3t"
	tokenOne      = "s3cr3t-token-one"
	tokenTwo      = "s3cr3t-token-two"
	webhookSecret = "s3cr3t-webhook-0123456789"
	mask          = "********"
)

// memConnector is a connector over an in-memory set of markdown documents. It honours the
// connector contract (TestMemConnectorConformance runs the SDK's conformance suite on it), and
// the tests reach it through the SDK's gRPC boundary as the server reaches a plugin. Knobs let a
// test hold a sync open (gate), make an item unreadable (broken) or the source unreachable
// (down).
type memConnector struct {
	typ  string
	caps []connector.Capability

	mu        sync.Mutex
	docs      map[string]string // id -> markdown
	broken    map[string]bool   // listed, but Fetch fails
	down      bool              // Sync fails at once
	gate      chan struct{}     // when set, Sync waits for it after the snapshot
	started   chan struct{}     // when set, receives a value as each Sync begins
	validated []memConfig       // every configuration Validate accepted
	synced    []memConfig       // the configuration of every Sync
	fetches   int
}

type memConfig struct {
	URL           string `json:"url"`
	Token         string `json:"token,omitempty"`
	WebhookSecret string `json:"webhookSecret,omitempty"`
}

const memSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["url"],
  "properties": {
    "url": {"type": "string", "description": "mem://<name>"},
    "token": {"type": "string", "writeOnly": true},
    "webhookSecret": {"type": "string", "writeOnly": true, "minLength": 16}
  }
}`

func newMemConnector(typ string, caps ...connector.Capability) *memConnector {
	return &memConnector{typ: typ, caps: caps, docs: map[string]string{}, broken: map[string]bool{}}
}

func (m *memConnector) Describe(context.Context) (connector.Description, error) {
	return connector.Description{Type: m.typ, Version: "1.2.3", DisplayName: "In-memory " + m.typ,
		Description: "Markdown documents held in memory, for tests.", Capabilities: m.caps,
		ConfigSchema: json.RawMessage(memSchema)}, nil
}

func parseMemConfig(raw json.RawMessage) (memConfig, error) {
	var c memConfig
	if err := connector.DecodeConfig(raw, &c); err != nil {
		return c, err
	}
	var v connector.ValidationError
	if c.URL == "" {
		v.Add("/url", "is required")
	} else if !strings.HasPrefix(c.URL, "mem://") {
		v.Add("/url", "must be a mem:// URL")
	}
	if c.WebhookSecret != "" && len(c.WebhookSecret) < 16 {
		v.Add("/webhookSecret", "must be at least 16 characters")
	}
	return c, v.Err()
}

func (m *memConnector) Validate(_ context.Context, raw json.RawMessage) error {
	c, err := parseMemConfig(raw)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.validated = append(m.validated, c)
	m.mu.Unlock()
	return nil
}

func (m *memConnector) CheckHealth(_ context.Context, raw json.RawMessage) (connector.Health, error) {
	if _, err := parseMemConfig(raw); err != nil {
		return connector.Health{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return connector.Health{Status: connector.StatusDown, Message: "the source is down"}, nil
	}
	return connector.Health{Status: connector.StatusOK}, nil
}

// docVersion is a content version, as an ETag would be.
func docVersion(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

func (m *memConnector) item(id, text string) connector.Item {
	it := connector.Item{ID: id, Version: docVersion(text), Name: id + ".md", Path: "docs/" + id + ".md",
		URL: "mem://docs/" + id, ContentType: "text/markdown", Size: int64(len(text)),
		Metadata: map[string]any{"title": id}}
	if slices.Contains(m.caps, connector.CapACL) {
		it.Access = &connector.Access{Public: true}
	}
	return it
}

func (m *memConnector) Sync(ctx context.Context, req connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		cfg, err := parseMemConfig(req.Config)
		if err != nil {
			yield(connector.Event{}, err)
			return
		}
		m.mu.Lock()
		m.synced = append(m.synced, cfg)
		down, gate, started := m.down, m.gate, m.started
		items := make([]connector.Item, 0, len(m.docs))
		for id, text := range m.docs {
			items = append(items, m.item(id, text))
		}
		m.mu.Unlock()
		sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
		if started != nil {
			select { // never block a sync on a test that stopped listening
			case started <- struct{}{}:
			default:
			}
		}
		if down {
			yield(connector.Event{}, errors.New("mem://: the source does not answer"))
			return
		}
		if !yield(connector.Snapshot(), nil) {
			return
		}
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				yield(connector.Event{}, ctx.Err())
				return
			}
		}
		for _, it := range items {
			if ctx.Err() != nil {
				yield(connector.Event{}, ctx.Err())
				return
			}
			if !yield(connector.Upsert(it), nil) {
				return
			}
		}
	}
}

func (m *memConnector) Fetch(_ context.Context, req connector.FetchRequest) (*connector.Content, error) {
	if _, err := parseMemConfig(req.Config); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fetches++
	text, ok := m.docs[req.Item.ID]
	if !ok {
		return nil, fmt.Errorf("mem: item %q: %w", req.Item.ID, plugins.ErrNotFound)
	}
	if m.broken[req.Item.ID] {
		return nil, fmt.Errorf("mem: item %q: %w", req.Item.ID, plugins.ErrPermissionDenied)
	}
	return &connector.Content{ContentType: "text/markdown", Size: int64(len(text)), Version: docVersion(text),
		Body: io.NopCloser(strings.NewReader(text))}, nil
}

func (m *memConnector) set(f func(m *memConnector)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m)
}

func (m *memConnector) lastValidated(t *testing.T) memConfig {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.validated) == 0 {
		t.Fatal("the connector validated no configuration")
	}
	return m.validated[len(m.validated)-1]
}

func (m *memConnector) lastSynced(t *testing.T) memConfig {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.synced) == 0 {
		t.Fatal("the connector ran no sync")
	}
	return m.synced[len(m.synced)-1]
}

// TestMemConnectorConformance holds the test connector to the SDK's conformance suite, so the
// server tests below exercise it against a connector that behaves like a real plugin.
func TestMemConnectorConformance(t *testing.T) {
	invalid := plugintest.WithInvalidConfigs(json.RawMessage(`{}`), json.RawMessage(`{"url": "http://x"}`),
		json.RawMessage(`{"url": "mem://x", "other": 1}`), json.RawMessage(`{"url": "mem://x", "webhookSecret": "short"}`))
	t.Run("git", func(t *testing.T) {
		c := newMemConnector("git", connector.CapSchedule)
		c.docs = map[string]string{"alpha": "# Alpha\n\nAlbatross.", "beta": "# Beta\n\nBeaver."}
		plugintest.RunConnectorSuite(t, plugintest.StartConnector(t, c), invalid, plugintest.WithMinItems(2),
			plugintest.WithConfig(json.RawMessage(`{"url": "mem://repo", "token": "t"}`)))
	})
	t.Run("docsuite", func(t *testing.T) {
		d := newMemConnector("docsuite", connector.CapACL)
		d.docs = map[string]string{"page": "# Page\n\nText."}
		plugintest.RunConnectorSuite(t, plugintest.StartConnector(t, d), invalid,
			plugintest.WithConfig(json.RawMessage(`{"url": "mem://wiki", "webhookSecret": "0123456789abcdef"}`)))
	})
}

// sourceEnv is a server with three in-memory connectors (git and webcrawl may be scheduled,
// docsuite may not) behind the SDK's gRPC boundary, and a secret key. Every exchange is checked
// against openapi.yaml, and at the end of the test every response body and the sources table
// are scanned for the clear value of a secret.
type sourceEnv struct {
	*docindextest.Server
	git, webcrawl, docsuite *memConnector
}

func newSourceEnv(t *testing.T, opts ...docindex.Option) *sourceEnv {
	t.Helper()
	e := &sourceEnv{git: newMemConnector("git", connector.CapSchedule),
		webcrawl: newMemConnector("webcrawl", connector.CapSchedule),
		docsuite: newMemConnector("docsuite", connector.CapACL)}
	conns := docindextest.Connectors{}
	for _, c := range []*memConnector{e.git, e.webcrawl, e.docsuite} {
		conns[c.typ] = plugintest.StartConnector(t, c)
	}
	e.Server = newIndexServer(t, append([]docindex.Option{docindex.WithConnectors(conns)}, opts...)...)
	check := e.Check
	var mu sync.Mutex
	var bodies []string
	e.Check = func(req *http.Request, status int, h http.Header, body []byte) error {
		mu.Lock()
		bodies = append(bodies, req.Method+" "+req.URL.Path+" -> "+string(body))
		mu.Unlock()
		return check(req, status, h, body)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range bodies {
			if strings.Contains(b, secretMarker) {
				t.Errorf("a response shows a secret in clear text: %s", b)
			}
		}
		var n int
		err := e.DB.QueryRowContext(context.Background(), `SELECT
			(SELECT count(*) FROM docindex.sources WHERE config::text LIKE '%'||?||'%'
				OR position(convert_to(?, 'UTF8') IN coalesce(secrets, '')) > 0) +
			(SELECT count(*) FROM docindex.sync_runs WHERE errors::text LIKE '%'||?||'%' OR error LIKE '%'||?||'%')`,
			secretMarker, secretMarker, secretMarker, secretMarker).Scan(&n)
		if err != nil {
			t.Errorf("scan the database: %v", err)
		} else if n != 0 {
			t.Errorf("%d sources or sync runs hold a secret in clear text", n)
		}
	})
	return e
}

// create posts a source and returns it, failing unless it answers 201.
func (e *sourceEnv) create(t *testing.T, token string, body map[string]any) map[string]any {
	t.Helper()
	r := e.Do("POST", "/api/sources", token, body)
	wantStatus(t, r, http.StatusCreated)
	return r.Map(t)
}

func (e *sourceEnv) get(t *testing.T, token, id string) map[string]any {
	t.Helper()
	r := e.Do("GET", "/api/sources/"+id, token, nil)
	wantStatus(t, r, http.StatusOK)
	return r.Map(t)
}

func (e *sourceEnv) update(t *testing.T, token, id string, body any) map[string]any {
	t.Helper()
	r := e.Do("PUT", "/api/sources/"+id, token, body)
	wantStatus(t, r, http.StatusOK)
	return r.Map(t)
}

func (e *sourceEnv) list(t *testing.T, token, query string) []map[string]any {
	t.Helper()
	r := e.Do("GET", "/api/sources"+query, token, nil)
	wantStatus(t, r, http.StatusOK)
	if !bytes.HasPrefix(bytes.TrimSpace(r.Body), []byte("[")) {
		t.Fatalf("the list is not a bare array: %s", r.Body)
	}
	var out []map[string]any
	r.JSON(t, &out)
	return out
}

func (e *sourceEnv) runs(t *testing.T, token, id, query string) []map[string]any {
	t.Helper()
	r := e.Do("GET", "/api/sources/"+id+"/syncs"+query, token, nil)
	wantStatus(t, r, http.StatusOK)
	var body struct {
		Syncs []map[string]any `json:"syncs"`
	}
	r.JSON(t, &body)
	return body.Syncs
}

// sync starts a sync and returns its run as the POST answered it.
func (e *sourceEnv) sync(t *testing.T, token, id string) map[string]any {
	t.Helper()
	r := e.Do("POST", "/api/sources/"+id+"/sync", token, nil)
	wantStatus(t, r, http.StatusOK)
	return r.Map(t)
}

// waitRun waits until the newest run of the source is finished and there are n runs, then until
// the jobs it queued have run, and returns it.
func (e *sourceEnv) waitRun(t *testing.T, token, id string, n int) map[string]any {
	t.Helper()
	var run map[string]any
	eventually(t, fmt.Sprintf("run %d of source %s to finish", n, id), func() bool {
		runs := e.runs(t, token, id, "")
		if len(runs) != n {
			return false
		}
		run = runs[0]
		return run["status"] != "running"
	})
	e.WaitIdle(30 * time.Second)
	return run
}

// syncNow runs a complete sync and returns its finished run, which must have completed.
func (e *sourceEnv) syncNow(t *testing.T, token, id string) map[string]any {
	t.Helper()
	n := len(e.runs(t, token, id, ""))
	started := e.sync(t, token, id)
	run := e.waitRun(t, token, id, n+1)
	if run["id"] != started["id"] {
		t.Fatalf("the newest run is %v, not the one started (%v)", run["id"], started["id"])
	}
	if run["status"] != "completed" {
		t.Fatalf("sync %s: %v", run["status"], run)
	}
	return run
}

// counts returns the counters of a run as "seen/created/updated/deleted/skipped/failed".
// field returns m with key set to v, or removed when v is absent.
func field(m map[string]any, key string, v any) map[string]any {
	if v == absent {
		delete(m, key)
	} else {
		m[key] = v
	}
	return m
}

var absent = new(int)

func counts(run map[string]any) string {
	var parts []string
	for _, k := range []string{"seen", "created", "updated", "deleted", "skipped", "failed"} {
		parts = append(parts, fmt.Sprint(run[k]))
	}
	return strings.Join(parts, "/")
}

func ids(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		out = append(out, it["id"].(string))
	}
	sort.Strings(out)
	return out
}

func sorted(s ...string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

func config(t *testing.T, src map[string]any) map[string]any {
	t.Helper()
	c, ok := src["config"].(map[string]any)
	if !ok {
		t.Fatalf("source without a config object: %v", src)
	}
	return c
}

// sourceFiles lists the files of a collection as GET /files shows them, by name.
func sourceFiles(t *testing.T, e *sourceEnv, token, collectionID string) map[string]map[string]any {
	t.Helper()
	r := e.Do("GET", "/files?collectionId="+collectionID, token, nil)
	wantStatus(t, r, http.StatusOK)
	var body struct {
		Files []map[string]any `json:"files"`
	}
	r.JSON(t, &body)
	out := map[string]map[string]any{}
	for _, f := range body.Files {
		out[f["name"].(string)] = f
	}
	return out
}

func searchNames(t *testing.T, e *sourceEnv, token, collectionID, query string) []string {
	t.Helper()
	r := e.Do("POST", "/api/collections/"+collectionID+"/search", token, map[string]any{"query": query, "mode": "fulltext"})
	wantStatus(t, r, http.StatusOK)
	var body struct {
		Results []struct {
			FileName string `json:"fileName"`
		} `json:"results"`
	}
	r.JSON(t, &body)
	var out []string
	for _, res := range body.Results {
		if !slices.Contains(out, res.FileName) {
			out = append(out, res.FileName)
		}
	}
	sort.Strings(out)
	return out
}

func TestCreateSource(t *testing.T) {
	e := newSourceEnv(t)
	coll, tok := sharedCollection(t, e.Server, "handbook")
	own := tok["owner"]
	dataset := createCollection(t, e.Server, own, map[string]any{"name": "numbers", "type": "dataset", "datasetMode": "imported"})["id"].(string)

	src := e.create(t, own, map[string]any{"name": " Team docs ", "type": "git", "collectionId": coll,
		"syncSchedule": "daily", "config": map[string]any{"url": "mem://team", "token": tokenOne}})
	want := map[string]any{"name": "Team docs", "sourceType": "git", "enabled": true, "syncSchedule": "daily",
		"collectionId": coll, "createdBy": e.UserRow(owner.Email).ID.String(), "lastSyncAt": nil}
	for k, v := range want {
		if src[k] != v {
			t.Errorf("%s = %v, want %v", k, src[k], v)
		}
	}
	if c := config(t, src); c["url"] != "mem://team" || c["token"] != mask || len(c) != 2 {
		t.Errorf("config %v, want the url and the masked token", c)
	}
	if got := e.git.lastValidated(t); got.Token != tokenOne {
		t.Errorf("the connector validated %+v, want the clear token", got)
	}
	if got := e.get(t, own, src["id"].(string)); got["name"] != "Team docs" || config(t, got)["token"] != mask {
		t.Errorf("get: %v", got)
	}

	// Defaults: enabled, no schedule, no collection; a docsuite source without a schedule.
	bare := e.create(t, own, map[string]any{"name": "bare", "type": "webcrawl", "config": map[string]any{"url": "mem://site"}})
	if bare["enabled"] != true || bare["syncSchedule"] != nil || bare["collectionId"] != nil {
		t.Errorf("defaults: %v", bare)
	}
	off := e.create(t, own, map[string]any{"name": "off", "type": "docsuite", "enabled": false, "syncSchedule": "",
		"collectionId": coll, "config": map[string]any{"url": "mem://wiki", "webhookSecret": webhookSecret}})
	if off["enabled"] != false || off["syncSchedule"] != nil || config(t, off)["webhookSecret"] != mask {
		t.Errorf("docsuite source: %v", off)
	}
	// A collection admin may attach a source to the collection.
	e.create(t, tok["shared admin"], map[string]any{"name": "admin's", "type": "git", "collectionId": coll, "config": map[string]any{"url": "mem://a"}})

	valid := func() map[string]any {
		return map[string]any{"name": "x", "type": "git", "config": map[string]any{"url": "mem://x"}}
	}
	for _, tc := range []struct {
		name   string
		token  string
		body   any
		status int
	}{
		// Part 7: missing or invalid name or type, syncSchedule for docsuite.
		{"missing name", own, field(valid(), "name", absent), 400},
		{"blank name", own, field(valid(), "name", "   "), 400},
		{"name not a string", own, field(valid(), "name", 7), 400},
		{"missing type", own, field(valid(), "type", absent), 400},
		{"unknown type", own, field(valid(), "type", "ftp"), 400},
		{"type without an installed connector", own, field(valid(), "type", "filecloud"), 400},
		{"docsuite with a schedule", own, field(field(valid(), "type", "docsuite"), "syncSchedule", "daily"), 400},
		// The connector refuses the configuration.
		{"config without the required url", own, field(valid(), "config", map[string]any{}), 400},
		{"config with an invalid url", own, field(valid(), "config", map[string]any{"url": "http://x"}), 400},
		{"config with an unknown key", own, field(valid(), "config", map[string]any{"url": "mem://x", "urll": "y"}), 400},
		{"config not an object", own, field(valid(), "config", []any{"mem://x"}), 400},
		{"short webhook secret", own, field(field(valid(), "type", "docsuite"), "config", map[string]any{"url": "mem://x", "webhookSecret": "s3cr3t"}), 400},
		{"bad schedule", own, field(valid(), "syncSchedule", "monthly"), 400},
		{"malformed collectionId", own, field(valid(), "collectionId", "not-a-uuid"), 400},
		{"dataset collection", own, field(valid(), "collectionId", dataset), 400},
		{"malformed JSON", own, `{"name": "x",`, 400},
		{"no body", own, nil, 400},
		// Attaching needs owner or admin on the collection; Not found instead of Forbidden.
		{"unknown collection", own, field(valid(), "collectionId", "00000000-0000-4000-8000-000000000000"), 404},
		{"collection of which the caller is a viewer", tok["viewer"], field(valid(), "collectionId", coll), 404},
		{"collection the caller cannot see", tok["outsider"], field(valid(), "collectionId", coll), 404},
		{"read-only API key", tok["read-only key"], valid(), 403},
		{"no token", "", valid(), 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, e.Do("POST", "/api/sources", tc.token, tc.body), tc.status)
		})
	}
	if n := count(t, e.Server, "docindex.sources"); n != 4 {
		t.Errorf("%d sources stored, want the 4 created", n)
	}
}

func TestSourceSecretNeedsServerKey(t *testing.T) {
	e := newSourceEnv(t, docindex.WithSecretKey(""))
	own := e.Token(owner)
	r := e.Do("POST", "/api/sources", own, map[string]any{"name": "x", "type": "git", "config": map[string]any{"url": "mem://x", "token": tokenOne}})
	wantStatus(t, r, http.StatusBadRequest)
	if !strings.Contains(r.Map(t)["error"].(string), "DOCINDEX_SECRET_KEY") {
		t.Errorf("the refusal does not say what is missing: %s", r.Body)
	}
	// Without a secret the source is stored.
	e.create(t, own, map[string]any{"name": "x", "type": "git", "config": map[string]any{"url": "mem://x"}})
}

func TestListSources(t *testing.T) {
	e := newSourceEnv(t)
	coll, tok := sharedCollection(t, e.Server, "handbook")
	mem := e.Token(member)
	a := e.create(t, tok["owner"], map[string]any{"name": "a", "type": "git", "collectionId": coll, "config": map[string]any{"url": "mem://a", "token": tokenOne}})
	b := e.create(t, tok["shared admin"], map[string]any{"name": "b", "type": "webcrawl", "collectionId": coll, "config": map[string]any{"url": "mem://b"}})
	c := e.create(t, mem, map[string]any{"name": "c", "type": "git", "config": map[string]any{"url": "mem://c"}})
	aID, bID, cID := a["id"].(string), b["id"].(string), c["id"].(string)

	for who, want := range map[string][]string{
		"owner":        {aID, bID},      // owner of the collection they feed
		"shared admin": {aID, bID},      // admin of it
		"viewer":       {aID, bID},      // viewer of it
		"global admin": {aID, bID, cID}, // everything
		"outsider":     nil,             // nothing
	} {
		if got := ids(e.list(t, tok[who], "")); !slices.Equal(got, sorted(want...)) {
			t.Errorf("%s sees %v, want %v", who, got, sorted(want...))
		}
	}
	if got := ids(e.list(t, mem, "")); !slices.Equal(got, []string{cID}) {
		t.Errorf("the creator of a detached source sees %v, want only it", got)
	}
	if r := e.Do("GET", "/api/sources", tok["outsider"], nil); strings.TrimSpace(string(r.Body)) != "[]" {
		t.Errorf("an empty list is %s, want []", r.Body)
	}

	// The type filter.
	if got := ids(e.list(t, tok["owner"], "?type=webcrawl")); !slices.Equal(got, []string{bID}) {
		t.Errorf("type=webcrawl: %v", got)
	}
	if got := ids(e.list(t, tok["global admin"], "?type=git")); !slices.Equal(got, sorted(aID, cID)) {
		t.Errorf("type=git: %v", got)
	}
	if got := e.list(t, tok["owner"], "?type=docsuite"); len(got) != 0 {
		t.Errorf("type=docsuite: %v", got)
	}
	wantStatus(t, e.Do("GET", "/api/sources?type=ftp", tok["owner"], nil), http.StatusBadRequest)

	// List items: newest first, syncInProgress, createdByEmail, masked config.
	items := e.list(t, tok["viewer"], "")
	if items[0]["id"] != bID {
		t.Errorf("not newest first: %v", ids(items))
	}
	for _, it := range items {
		wantEmail := map[any]string{aID: owner.Email, bID: coAdmin.Email}[it["id"]]
		if it["createdByEmail"] != wantEmail || it["syncInProgress"] != false {
			t.Errorf("item %v: createdByEmail %v, syncInProgress %v", it["name"], it["createdByEmail"], it["syncInProgress"])
		}
		if it["id"] == aID && config(t, it)["token"] != mask {
			t.Errorf("list config %v", it["config"])
		}
	}

	// Get follows the same visibility.
	e.get(t, tok["viewer"], aID)
	e.get(t, mem, cID)
	e.get(t, tok["global admin"], cID)
	for name, tc := range map[string]struct {
		token, id string
		status    int
	}{
		"outsider":           {tok["outsider"], aID, 404},
		"owner, not creator": {tok["owner"], cID, 404},
		"unknown":            {tok["owner"], "00000000-0000-4000-8000-000000000000", 404},
		"malformed":          {tok["owner"], "nope", 400},
	} {
		r := e.Do("GET", "/api/sources/"+tc.id, tc.token, nil)
		wantStatus(t, r, tc.status)
		if tc.status == 404 && r.Map(t)["error"] != "Source not found" {
			t.Errorf("%s: %s", name, r.Body)
		}
	}
}

func TestUpdateSource(t *testing.T) {
	e := newSourceEnv(t)
	coll, tok := sharedCollection(t, e.Server, "handbook")
	other := createCollection(t, e.Server, tok["owner"], map[string]any{"name": "other"})["id"].(string)
	own := tok["owner"]
	src := e.create(t, own, map[string]any{"name": "docs", "type": "git", "collectionId": coll, "syncSchedule": "daily",
		"config": map[string]any{"url": "mem://docs", "token": tokenOne}})
	id := src["id"].(string)
	path := "/api/sources/" + id

	// syncSchedule: absent or null leaves it, a value sets it, "" clears it.
	for _, step := range []struct {
		body any
		want any
	}{
		{map[string]any{"name": "renamed"}, "daily"},
		{map[string]any{"syncSchedule": nil}, "daily"},
		{map[string]any{"syncSchedule": "weekly"}, "weekly"},
		{map[string]any{}, "weekly"},
		{map[string]any{"syncSchedule": ""}, nil},
		{map[string]any{"syncSchedule": nil}, nil},
		{map[string]any{"syncSchedule": "hourly"}, "hourly"},
	} {
		got := e.update(t, own, id, step.body)
		if got["syncSchedule"] != step.want {
			t.Errorf("after %v: syncSchedule %v, want %v", step.body, got["syncSchedule"], step.want)
		}
	}
	got := e.get(t, own, id)
	if got["name"] != "renamed" || got["collectionId"] != coll || got["enabled"] != true || got["sourceType"] != "git" {
		t.Errorf("fields not sent changed: %v", got)
	}
	if got["updatedAt"] == src["updatedAt"] {
		t.Errorf("updatedAt did not move: %v", got["updatedAt"])
	}

	// collectionId: absent leaves it, null detaches, an id attaches; the type does not change.
	if got := e.update(t, own, id, map[string]any{"enabled": false, "type": "webcrawl"}); got["collectionId"] != coll || got["enabled"] != false || got["sourceType"] != "git" {
		t.Errorf("collectionId absent: %v", got)
	}
	if got := e.update(t, own, id, map[string]any{"collectionId": nil}); got["collectionId"] != nil {
		t.Errorf("collectionId null: %v", got["collectionId"])
	}
	if got := e.update(t, own, id, map[string]any{"collectionId": other}); got["collectionId"] != other {
		t.Errorf("collectionId set: %v", got["collectionId"])
	}
	e.update(t, own, id, map[string]any{"collectionId": coll})

	// Secrets: masked; sending the mask back (or leaving the field out) keeps the stored value;
	// a new value replaces it; null removes it.
	read := e.get(t, own, id)
	cfg := config(t, read)
	cfg["url"] = "mem://moved"
	got = e.update(t, own, id, map[string]any{"config": cfg})
	if c := config(t, got); c["url"] != "mem://moved" || c["token"] != mask {
		t.Errorf("config after sending the mask back: %v", c)
	}
	if v := e.git.lastValidated(t); v.Token != tokenOne || v.URL != "mem://moved" {
		t.Errorf("the connector validated %+v, want the kept token", v)
	}
	e.update(t, own, id, map[string]any{"config": map[string]any{"url": "mem://moved"}})
	if v := e.git.lastValidated(t); v.Token != tokenOne {
		t.Errorf("a secret left out was not kept: %+v", v)
	}
	got = e.update(t, own, id, map[string]any{"config": map[string]any{"url": "mem://moved", "token": tokenTwo}})
	if config(t, got)["token"] != mask {
		t.Errorf("new secret shown: %v", got["config"])
	}
	if v := e.git.lastValidated(t); v.Token != tokenTwo {
		t.Errorf("a new secret did not replace the old one: %+v", v)
	}
	e.update(t, own, id, map[string]any{"enabled": true})
	e.syncNow(t, own, id)
	if v := e.git.lastSynced(t); v.Token != tokenTwo || v.URL != "mem://moved" {
		t.Errorf("the sync got the configuration %+v", v)
	}
	got = e.update(t, own, id, map[string]any{"config": map[string]any{"url": "mem://moved", "token": nil}})
	if _, has := config(t, got)["token"]; has {
		t.Errorf("a removed secret is still shown: %v", got["config"])
	}
	if v := e.git.lastValidated(t); v.Token != "" {
		t.Errorf("a removed secret reached the connector: %+v", v)
	}

	// Who may change it: its creator, owner or admin of its collection, a global admin.
	e.update(t, tok["shared admin"], id, map[string]any{"name": "by the collection admin"})
	e.update(t, tok["global admin"], id, map[string]any{"name": "by root"})
	mine := e.create(t, tok["viewer"], map[string]any{"name": "viewer's", "type": "git", "config": map[string]any{"url": "mem://v"}})
	e.update(t, tok["viewer"], mine["id"].(string), map[string]any{"name": "still the viewer's"})

	dsrc := e.create(t, own, map[string]any{"name": "wiki", "type": "docsuite", "collectionId": coll, "config": map[string]any{"url": "mem://wiki"}})
	for _, tc := range []struct {
		name   string
		token  string
		path   string
		body   any
		status int
	}{
		{"unknown source", own, "/api/sources/00000000-0000-4000-8000-000000000000", map[string]any{"name": "x"}, 404},
		{"source the caller cannot see", tok["outsider"], path, map[string]any{"name": "x"}, 404},
		{"viewer of the fed collection", tok["viewer"], path, map[string]any{"name": "x"}, 403},
		{"read-only API key", tok["read-only key"], path, map[string]any{"name": "x"}, 403},
		{"malformed id", own, "/api/sources/nope", map[string]any{"name": "x"}, 400},
		{"blank name", own, path, map[string]any{"name": ""}, 400},
		{"bad schedule", own, path, map[string]any{"syncSchedule": "monthly"}, 400},
		{"schedule for docsuite", own, "/api/sources/" + dsrc["id"].(string), map[string]any{"syncSchedule": "daily"}, 400},
		{"invalid config", own, path, map[string]any{"config": map[string]any{"url": "ftp://x"}}, 400},
		{"config without the url", own, path, map[string]any{"config": map[string]any{"token": mask}}, 400},
		{"config not an object", own, path, map[string]any{"config": "mem://x"}, 400},
		{"malformed collectionId", own, path, map[string]any{"collectionId": "nope"}, 400},
		{"enabled not a boolean", own, path, map[string]any{"enabled": "yes"}, 400},
		{"malformed JSON", own, path, "{", 400},
		{"collection the caller only views", tok["viewer"], "/api/sources/" + mine["id"].(string), map[string]any{"collectionId": coll}, 404},
		{"unknown collection", own, path, map[string]any{"collectionId": "00000000-0000-4000-8000-000000000000"}, 404},
		{"no token", "", path, map[string]any{"name": "x"}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("PUT", tc.path, tc.token, tc.body)
			wantStatus(t, r, tc.status)
			if tc.status == 404 && strings.Contains(tc.name, "source") && r.Map(t)["error"] != "Source not found" {
				t.Errorf("404 message %s", r.Body)
			}
		})
	}
	if got := e.get(t, own, id); got["name"] != "by root" || got["syncSchedule"] != "hourly" || got["collectionId"] != coll || config(t, got)["url"] != "mem://moved" {
		t.Errorf("a refused update changed the source: %v", got)
	}
}

func TestDeleteSource(t *testing.T) {
	e := newSourceEnv(t)
	e.StartWorkers(nil)
	coll, tok := sharedCollection(t, e.Server, "handbook")
	own := tok["owner"]
	e.git.docs = map[string]string{"g1": "# G1\n\nGranite quarries.", "g2": "# G2\n\nGneiss folds."}
	e.webcrawl.docs = map[string]string{"w1": "# W1\n\nWillow catkins."}
	keep := e.create(t, own, map[string]any{"name": "keep files", "type": "webcrawl", "collectionId": coll, "config": map[string]any{"url": "mem://w"}})
	drop := e.create(t, own, map[string]any{"name": "drop files", "type": "git", "collectionId": coll, "config": map[string]any{"url": "mem://g", "token": tokenOne}})
	e.syncNow(t, own, keep["id"].(string))
	e.syncNow(t, own, drop["id"].(string))
	if files := sourceFiles(t, e, own, coll); len(files) != 3 {
		t.Fatalf("after the syncs the collection holds %d files, want 3", len(files))
	}

	for _, tc := range []struct {
		name, token, query string
		status             int
	}{
		{"viewer of the fed collection", tok["viewer"], "", 403},
		{"outsider", tok["outsider"], "", 404},
		{"read-only API key", tok["read-only key"], "", 403},
		{"bad deleteFiles", own, "?deleteFiles=maybe", 400},
	} {
		wantStatus(t, e.Do("DELETE", "/api/sources/"+drop["id"].(string)+tc.query, tc.token, nil), tc.status)
	}
	wantStatus(t, e.Do("DELETE", "/api/sources/00000000-0000-4000-8000-000000000000", own, nil), http.StatusNotFound)
	wantStatus(t, e.Do("DELETE", "/api/sources/nope", own, nil), http.StatusBadRequest)

	// With deleteFiles the source's files go, with their chunks; the others stay.
	r := e.Do("DELETE", "/api/sources/"+drop["id"].(string)+"?deleteFiles=true", tok["shared admin"], nil)
	wantStatus(t, r, http.StatusOK)
	if body := r.Map(t); body["status"] != "deleted" || body["count"] != 2.0 {
		t.Errorf("delete with files: %v", body)
	}
	files := sourceFiles(t, e, own, coll)
	if _, ok := files["w1.md"]; !ok || len(files) != 1 {
		t.Errorf("after deleting with files: %v", files)
	}
	if got := searchNames(t, e, own, coll, "granite"); len(got) != 0 {
		t.Errorf("chunks of deleted files are still found: %v", got)
	}
	wantStatus(t, e.Do("GET", "/api/sources/"+drop["id"].(string), own, nil), http.StatusNotFound)
	wantStatus(t, e.Do("GET", "/api/sources/"+drop["id"].(string)+"/syncs", own, nil), http.StatusNotFound)

	// Without it the files stay in the collection, searchable, and the history goes.
	r = e.Do("DELETE", "/api/sources/"+keep["id"].(string), own, nil)
	wantStatus(t, r, http.StatusOK)
	if body := r.Map(t); body["status"] != "deleted" || body["count"] != 0.0 {
		t.Errorf("delete without files: %v", body)
	}
	if files := sourceFiles(t, e, own, coll); len(files) != 1 {
		t.Errorf("the files of a source deleted without deleteFiles: %v", files)
	}
	if got := searchNames(t, e, own, coll, "willow"); !slices.Equal(got, []string{"w1.md"}) {
		t.Errorf("a kept file is no longer found: %v", got)
	}
	if n := count(t, e.Server, "docindex.sources"); n != 0 {
		t.Errorf("%d sources left", n)
	}
	if n := count(t, e.Server, "docindex.sync_runs"); n != 0 {
		t.Errorf("%d sync runs left", n)
	}
}

func TestSyncSource(t *testing.T) {
	e := newSourceEnv(t)
	e.StartWorkers(nil)
	coll, tok := sharedCollection(t, e.Server, "handbook")
	own := tok["owner"]
	e.git.docs = map[string]string{
		"alpha": "# Alpha\n\nAlbatross flights cross the ocean.",
		"beta":  "# Beta\n\nBeavers build dams in rivers.",
		"gamma": "# Gamma\n\nGannets dive for fish.",
	}
	src := e.create(t, own, map[string]any{"name": "repo", "type": "git", "collectionId": coll,
		"config": map[string]any{"url": "mem://repo", "token": tokenOne}})
	id := src["id"].(string)

	// First sync: everything created and indexed.
	started := e.sync(t, tok["shared admin"], id)
	if started["status"] != "running" || started["trigger"] != "manual" || started["sourceId"] != id ||
		started["finishedAt"] != nil || counts(started) != "0/0/0/0/0/0" {
		t.Errorf("started run: %v", started)
	}
	run := e.waitRun(t, own, id, 1)
	if run["id"] != started["id"] || run["status"] != "completed" || counts(run) != "3/3/0/0/0/0" ||
		run["fullListing"] != true || run["finishedAt"] == nil || run["error"] != nil {
		t.Fatalf("first sync: %v", run)
	}
	if errs, ok := run["errors"].([]any); !ok || len(errs) != 0 {
		t.Errorf("errors of a clean run: %v", run["errors"])
	}
	if got := e.git.lastSynced(t); got.Token != tokenOne {
		t.Errorf("the connector got the configuration %+v, want the clear token", got)
	}
	if got := e.get(t, own, id); got["lastSyncAt"] == nil {
		t.Errorf("lastSyncAt not set: %v", got)
	}
	files := sourceFiles(t, e, tok["viewer"], coll)
	if len(files) != 3 || files["beta.md"]["status"] != "indexed" {
		t.Fatalf("files after the first sync: %v", files)
	}
	if meta, _ := files["beta.md"]["sourceMetadata"].(map[string]any); meta["title"] != "beta" {
		t.Errorf("sourceMetadata %v", files["beta.md"]["sourceMetadata"])
	}
	if got := searchNames(t, e, tok["viewer"], coll, "beavers"); !slices.Equal(got, []string{"beta.md"}) {
		t.Errorf("search after the first sync: %v", got)
	}

	// No change: everything skipped, nothing fetched.
	fetches := e.git.fetches
	if run := e.syncNow(t, own, id); counts(run) != "3/0/0/0/3/0" || e.git.fetches != fetches {
		t.Errorf("unchanged sync: %s, %d fetches", counts(run), e.git.fetches-fetches)
	}

	// A change, a deletion, an addition and an item that cannot be read.
	e.git.set(func(m *memConnector) {
		m.docs["beta"] = "# Beta\n\nBadgers dig setts under hedges."
		delete(m.docs, "gamma")
		m.docs["delta"] = "# Delta\n\nDolphins ride the bow wave."
		m.docs["epsilon"] = "# Epsilon\n\nEels."
		m.broken["epsilon"] = true
	})
	run = e.syncNow(t, own, id)
	if counts(run) != "4/1/1/1/1/1" {
		t.Errorf("changed sync: %s", counts(run))
	}
	if errs, _ := run["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["item"] != "epsilon" {
		t.Errorf("errors %v", run["errors"])
	}
	if got := searchNames(t, e, own, coll, "badgers"); !slices.Equal(got, []string{"beta.md"}) {
		t.Errorf("changed item not reindexed: %v", got)
	}
	for _, gone := range []string{"beavers", "gannets"} {
		if got := searchNames(t, e, own, coll, gone); len(got) != 0 {
			t.Errorf("%s still found: %v", gone, got)
		}
	}

	// A source that cannot be reached: the run fails, lastSyncAt stays.
	last := e.get(t, own, id)["lastSyncAt"]
	e.git.set(func(m *memConnector) { m.down = true })
	e.sync(t, own, id)
	run = e.waitRun(t, own, id, 4)
	if run["status"] != "failed" || run["error"] == nil || !strings.Contains(run["error"].(string), "does not answer") {
		t.Errorf("run of an unreachable source: %v", run)
	}
	if got := e.get(t, own, id)["lastSyncAt"]; got != last {
		t.Errorf("a failed sync moved lastSyncAt from %v to %v", last, got)
	}
	e.git.set(func(m *memConnector) { m.down = false })

	// History: newest first, limit, visible to whoever sees the source.
	runs := e.runs(t, tok["viewer"], id, "")
	if len(runs) != 4 || runs[0]["status"] != "failed" || runs[3]["id"] != started["id"] {
		t.Errorf("history: %v", runs)
	}
	if runs := e.runs(t, own, id, "?limit=2"); len(runs) != 2 || runs[0]["status"] != "failed" {
		t.Errorf("limit=2: %d runs", len(runs))
	}
	// A long history: the default page is 50 runs, the largest 500.
	if _, err := e.DB.ExecContext(context.Background(), `INSERT INTO docindex.sync_runs
		(source_id, trigger, status, holder, started_at, finished_at)
		SELECT ?, 'schedule', 'completed', 'test', now() - make_interval(days => g), now() - make_interval(days => g)
		FROM generate_series(1, 60) g`, id); err != nil {
		t.Fatal(err)
	}
	for query, want := range map[string]int{"": 50, "?limit=0": 50, "?limit=500": 64, "?limit=100000": 64, "?limit=7": 7} {
		if runs := e.runs(t, own, id, query); len(runs) != want || runs[0]["status"] != "failed" {
			t.Errorf("history%s: %d runs, want %d, newest first", query, len(runs), want)
		}
	}
	wantStatus(t, e.Do("GET", "/api/sources/"+id+"/syncs?limit=many", own, nil), http.StatusBadRequest)
	wantStatus(t, e.Do("GET", "/api/sources/"+id+"/syncs", tok["outsider"], nil), http.StatusNotFound)
	wantStatus(t, e.Do("GET", "/api/sources/nope/syncs", own, nil), http.StatusBadRequest)

	// Who may start a sync, and a source that feeds no collection.
	detached := e.create(t, own, map[string]any{"name": "detached", "type": "git", "config": map[string]any{"url": "mem://d"}})
	for _, tc := range []struct {
		name, token, id string
		status          int
	}{
		{"viewer", tok["viewer"], id, 403},
		{"read-only API key", tok["read-only key"], id, 403},
		{"outsider", tok["outsider"], id, 404},
		{"unknown", own, "00000000-0000-4000-8000-000000000000", 404},
		{"malformed", own, "nope", 400},
		{"no collection", own, detached["id"].(string), 400},
		{"no token", "", id, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, e.Do("POST", "/api/sources/"+tc.id+"/sync", tc.token, nil), tc.status)
		})
	}
	if runs := e.runs(t, own, id, "?limit=500"); len(runs) != 64 {
		t.Errorf("refused syncs left runs: %d", len(runs))
	}
}

func TestSyncConflict(t *testing.T) {
	e := newSourceEnv(t)
	e.StartWorkers(nil)
	coll, tok := sharedCollection(t, e.Server, "handbook")
	own := tok["owner"]
	e.docsuite.docs = map[string]string{"page": "# Page\n\nPelicans glide low."}
	src := e.create(t, own, map[string]any{"name": "wiki", "type": "docsuite", "collectionId": coll,
		"config": map[string]any{"url": "mem://wiki", "webhookSecret": webhookSecret}})
	id := src["id"].(string)
	gate, started := make(chan struct{}), make(chan struct{}, 4)
	e.docsuite.set(func(m *memConnector) { m.gate, m.started = gate, started })
	released := false
	release := func() {
		if !released {
			released = true
			close(gate)
		}
	}
	t.Cleanup(release) // never leave a sync hanging on the gate

	first := e.sync(t, own, id)
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the sync did not reach the connector")
	}
	r := e.Do("POST", "/api/sources/"+id+"/sync", tok["shared admin"], nil)
	wantStatus(t, r, http.StatusConflict)
	items := e.list(t, tok["viewer"], "")
	if len(items) != 1 || items[0]["syncInProgress"] != true {
		t.Errorf("list while syncing: %v", items)
	}
	// A change notification while the sync runs starts nothing.
	if r := e.event(t, id, signed(webhookSecret, "{}")); r.Status != http.StatusAccepted || r.Map(t)["status"] != "running" {
		t.Errorf("event while syncing: %d %s", r.Status, r.Body)
	}
	if runs := e.runs(t, own, id, ""); len(runs) != 1 || runs[0]["status"] != "running" {
		t.Errorf("runs while syncing: %v", runs)
	}

	release()
	run := e.waitRun(t, own, id, 1)
	if run["id"] != first["id"] || run["status"] != "completed" || counts(run) != "1/1/0/0/0/0" {
		t.Errorf("the held sync: %v", run)
	}
	if items := e.list(t, own, ""); items[0]["syncInProgress"] != false {
		t.Errorf("syncInProgress after the sync: %v", items[0])
	}
	// Once it finished, the next one starts.
	e.docsuite.set(func(m *memConnector) { m.gate, m.started = nil, nil })
	e.syncNow(t, own, id)
}

func TestSourceTypes(t *testing.T) {
	e := newSourceEnv(t)
	r := e.Do("GET", "/api/source-types", e.Token(viewer), nil)
	wantStatus(t, r, http.StatusOK)
	var body struct {
		SourceTypes []struct {
			Type, Version, DisplayName, Description string
			Capabilities                            []string
			ConfigSchema                            json.RawMessage
		}
	}
	r.JSON(t, &body)
	var types []string
	for _, st := range body.SourceTypes {
		types = append(types, st.Type)
		if st.Version != "1.2.3" || st.DisplayName != "In-memory "+st.Type || st.Description == "" {
			t.Errorf("%s: %+v", st.Type, st)
		}
		secrets, err := connector.SecretFields(st.ConfigSchema)
		if err != nil || !slices.Equal(secrets, []string{"/token", "/webhookSecret"}) {
			t.Errorf("%s: secret fields %v (%v) of the schema %s", st.Type, secrets, err, st.ConfigSchema)
		}
		wantCaps := map[string][]string{"git": {"schedule"}, "webcrawl": {"schedule"}, "docsuite": {"acl"}}[st.Type]
		if !slices.Equal(st.Capabilities, wantCaps) {
			t.Errorf("%s: capabilities %v, want %v", st.Type, st.Capabilities, wantCaps)
		}
	}
	if !slices.Equal(types, []string{"docsuite", "git", "webcrawl"}) {
		t.Errorf("types %v", types)
	}
	wantStatus(t, e.Do("GET", "/api/source-types", "", nil), http.StatusUnauthorized)

	// A server without connectors lists none.
	bare := newServer(t)
	r = bare.Do("GET", "/api/source-types", bare.Token(viewer), nil)
	wantStatus(t, r, http.StatusOK)
	if strings.TrimSpace(string(r.Body)) != `{"sourceTypes":[]}` {
		t.Errorf("no connectors: %s", r.Body)
	}
}

// eventRequest is a change notification: a body and the headers that authenticate it.
type eventRequest struct {
	body    string
	headers map[string]string
}

func signature(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func signed(secret, body string) eventRequest {
	return eventRequest{body: body, headers: map[string]string{"X-Docindex-Signature": signature(secret, body)}}
}

// event posts a change notification, without a bearer token.
func (e *sourceEnv) event(t *testing.T, id string, ev eventRequest) *docindextest.Response {
	t.Helper()
	req, err := http.NewRequest("POST", e.URL+"/api/sources/"+id+"/events", strings.NewReader(ev.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range ev.headers {
		req.Header.Set(k, v)
	}
	return e.Send(req)
}

func TestSourceEvents(t *testing.T) {
	e := newSourceEnv(t)
	e.StartWorkers(nil)
	coll, tok := sharedCollection(t, e.Server, "handbook")
	own := tok["owner"]
	e.docsuite.docs = map[string]string{"home": "# Home\n\nHerons stand still in the shallows."}
	src := e.create(t, own, map[string]any{"name": "wiki", "type": "docsuite", "collectionId": coll,
		"config": map[string]any{"url": "mem://wiki", "webhookSecret": webhookSecret, "token": tokenOne}})
	id := src["id"].(string)
	body := `{"event": "page_updated", "page": {"id": "home"}}`

	// A valid signature starts a sync, which indexes the change.
	r := e.event(t, id, signed(webhookSecret, body))
	wantStatus(t, r, http.StatusAccepted)
	if r.Map(t)["status"] != "started" {
		t.Fatalf("valid event: %s", r.Body)
	}
	run := e.waitRun(t, own, id, 1)
	if run["trigger"] != "event" || run["status"] != "completed" || counts(run) != "1/1/0/0/0/0" {
		t.Errorf("event run: %v", run)
	}
	if got := searchNames(t, e, own, coll, "herons"); !slices.Equal(got, []string{"home.md"}) {
		t.Errorf("search after the event: %v", got)
	}
	if got := e.docsuite.lastSynced(t); got.WebhookSecret != webhookSecret || got.Token != tokenOne {
		t.Errorf("the connector got %+v", got)
	}

	// The other accepted ways to authenticate: the headers Confluence-style senders sign with,
	// and the secret itself.
	n := 1
	for name, headers := range map[string]map[string]string{
		"X-Hub-Signature-256":       {"X-Hub-Signature-256": signature(webhookSecret, body)},
		"X-Hub-Signature":           {"X-Hub-Signature": signature(webhookSecret, body)},
		"X-Docindex-Secret":         {"X-Docindex-Secret": webhookSecret},
		"X-Docindex-Webhook-Secret": {"X-Docindex-Webhook-Secret": webhookSecret},
	} {
		r := e.event(t, id, eventRequest{body: body, headers: headers})
		wantStatus(t, r, http.StatusAccepted)
		if r.Map(t)["status"] != "started" {
			t.Errorf("%s: %s", name, r.Body)
		}
		n++
		if run := e.waitRun(t, own, id, n); run["status"] != "completed" || run["trigger"] != "event" {
			t.Errorf("%s: run %v", name, run)
		}
	}

	// Refused: a bad signature or secret (401), a source without webhookSecret (403), an
	// unknown source (404), a malformed id (400).
	plain := e.create(t, own, map[string]any{"name": "no hook", "type": "docsuite", "collectionId": coll, "config": map[string]any{"url": "mem://plain"}})
	for _, tc := range []struct {
		name   string
		id     string
		ev     eventRequest
		status int
	}{
		{"no signature", id, eventRequest{body: body}, 401},
		{"wrong key", id, signed("another-secret-0123456789", body), 401},
		{"signature of another body", id, eventRequest{body: body, headers: map[string]string{"X-Docindex-Signature": signature(webhookSecret, "{}")}}, 401},
		{"signature without its prefix", id, eventRequest{body: body, headers: map[string]string{"X-Docindex-Signature": strings.TrimPrefix(signature(webhookSecret, body), "sha256=")}}, 401},
		{"not hex", id, eventRequest{body: body, headers: map[string]string{"X-Docindex-Signature": "sha256=zz"}}, 401},
		{"wrong secret", id, eventRequest{body: body, headers: map[string]string{"X-Docindex-Secret": "s3cr3t-guess"}}, 401},
		{"a bearer token is not enough", id, eventRequest{body: body, headers: map[string]string{"Authorization": "Bearer " + own}}, 401},
		{"no webhookSecret", plain["id"].(string), signed(webhookSecret, body), 403},
		{"unknown source", "00000000-0000-4000-8000-000000000000", signed(webhookSecret, body), 404},
		{"malformed id", "nope", signed(webhookSecret, body), 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, e.event(t, tc.id, tc.ev), tc.status)
		})
	}
	if runs := e.runs(t, own, id, ""); len(runs) != n {
		t.Errorf("refused events started syncs: %d runs, want %d", len(runs), n)
	}

	// A disabled source, or one that feeds no collection, ignores valid events.
	e.update(t, own, id, map[string]any{"enabled": false})
	if r := e.event(t, id, signed(webhookSecret, body)); r.Status != http.StatusAccepted || r.Map(t)["status"] != "ignored" {
		t.Errorf("disabled source: %d %s", r.Status, r.Body)
	}
	e.update(t, own, id, map[string]any{"enabled": true, "collectionId": nil})
	if r := e.event(t, id, signed(webhookSecret, body)); r.Status != http.StatusAccepted || r.Map(t)["status"] != "ignored" {
		t.Errorf("detached source: %d %s", r.Status, r.Body)
	}
	if runs := e.runs(t, own, id, ""); len(runs) != n {
		t.Errorf("ignored events started syncs: %d runs, want %d", len(runs), n)
	}
}
