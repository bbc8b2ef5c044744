package git_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docindex/docindex/connectors/git"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/plugintest"
)

const webTemplate = "https://git.example.com/team/handbook/blob/{commit}/{path}"

// fakePDF is enough of a PDF to be typed as one: binary, with NUL bytes.
const fakePDF = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n\x00\x01\x02trailer\n%%EOF\n"

// handbook fills a repository with files of every kind the connector
// treats differently, and commits them.
func handbook(r *repo) string {
	r.write("README.md", "# Handbook\n\nHow we work.\n")
	r.write("docs/guide.md", "# Guide\n\nVersion one.\n")
	r.write("docs/old.md", "# Old\n\nTo be deleted.\n")
	r.write("docs/drafts/wip.md", "# Work in progress\n")
	r.write("docs/with space.md", "# A name with a space\n")
	r.write("src/main.go", "package main\n\nfunc main() {}\n")
	r.write("notes.txt", "plain notes\n")
	r.write("manual.pdf", fakePDF)
	r.write("run.sh", "#!/bin/sh\necho hello\n")
	r.write("vendor/lib/lib.go", "package lib\n")
	// Skipped: an image, a binary with an unknown extension, an LFS pointer
	// and a symlink.
	r.write("logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	r.write("firmware.hex", "\x7fELF\x00\x00\x01")
	r.write("big-asset.txt", "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")
	if err := os.Symlink("README.md", filepath.Join(r.work, "link.md")); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(r.work, "run.sh"), 0o755); err != nil {
		r.t.Fatal(err)
	}
	// A submodule (a gitlink): no content of its own here. Its empty
	// directory keeps `git add -A` from dropping it.
	if err := os.MkdirAll(filepath.Join(r.work, "themes", "base"), 0o755); err != nil {
		r.t.Fatal(err)
	}
	r.git("update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,themes/base")
	return r.commit("handbook")
}

var handbookIDs = []string{
	"README.md", "docs/drafts/wip.md", "docs/guide.md", "docs/old.md", "docs/with space.md",
	"manual.pdf", "notes.txt", "run.sh", "src/main.go", "vendor/lib/lib.go",
}

func TestConformance(t *testing.T) {
	srv := startServer(t, nil)
	r := srv.newRepo(t, "handbook")
	handbook(r)
	c := plugintest.StartConnector(t, newConnector(t))
	plugintest.RunConnectorSuite(t, c,
		plugintest.WithConfig(r.config(map[string]any{"webUrlTemplate": webTemplate})),
		plugintest.WithMinItems(len(handbookIDs)),
		plugintest.WithFetchLimit(len(handbookIDs)),
		plugintest.WithInvalidConfigs(invalidConfigs()...),
	)
}

func invalidConfigs() []json.RawMessage {
	var out []json.RawMessage
	for _, c := range badConfigs {
		out = append(out, json.RawMessage(c.config))
	}
	return out
}

var badConfigs = []struct {
	config string
	field  string
}{
	{`{}`, "/url"},
	{`{"url": ""}`, "/url"},
	{`{"url": "git@github.com:team/handbook.git"}`, "/url"},
	{`{"url": "ssh://git.example.com/handbook.git"}`, "/url"},
	{`{"url": "file:///etc"}`, "/url"},
	{`{"url": "https://"}`, "/url"},
	{`{"url": "https://user:hunter2@git.example.com/h.git"}`, "/url"},
	{`{"url": "https://git.example.com/h.git", "branch": "a..b"}`, "/branch"},
	{`{"url": "https://git.example.com/h.git", "branch": "bad name"}`, "/branch"},
	{`{"url": "https://git.example.com/h.git", "include": ["docs/[a"]}`, "/include/0"},
	{`{"url": "https://git.example.com/h.git", "exclude": ["ok", "a**b"]}`, "/exclude/1"},
	{`{"url": "https://git.example.com/h.git", "exclude": [""]}`, "/exclude/0"},
	{`{"url": "https://git.example.com/h.git", "username": "alice"}`, "/token"},
	{`{"url": "https://git.example.com/h.git", "webUrlTemplate": "https://x/{path}/{sha}"}`, "/webUrlTemplate"},
	{`{"url": "https://git.example.com/h.git", "webUrlTemplate": "https://x/{commit}"}`, "/webUrlTemplate"},
	{`{"url": "https://git.example.com/h.git", "webUrlTemplate": "/relative/{path}"}`, "/webUrlTemplate"},
	{`{"url": "https://git.example.com/h.git", "maxFileSize": 0}`, "/maxFileSize"},
	{`{"url": "https://git.example.com/h.git", "maxFileSize": "big"}`, "/maxFileSize"},
	{`{"url": "https://git.example.com/h.git", "brnach": "main"}`, ""},
	{`{"url": 42}`, "/url"},
}

func TestValidate(t *testing.T) {
	c := newConnector(t)
	for _, tc := range badConfigs {
		err := c.Validate(t.Context(), json.RawMessage(tc.config))
		var ve *connector.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, connector.ErrInvalidConfig) {
			t.Errorf("Validate(%s) = %v; want a *connector.ValidationError", tc.config, err)
			continue
		}
		found := false
		for _, p := range ve.Problems {
			found = found || p.Field == tc.field
		}
		if !found {
			t.Errorf("Validate(%s) = %v; want a problem with field %q", tc.config, err, tc.field)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Validate(%s): the password appears in %q", tc.config, err)
		}
	}
	for _, good := range []string{
		`{"url": "https://git.example.com/h.git"}`,
		`{"url": "http://127.0.0.1:8080/h.git", "branch": "refs/heads/release/1.0", "include": ["docs", "*.md", "/README.md", "docs/**/*.md"], "exclude": ["**/testdata/**"], "username": "bot", "token": "t0k", "webUrlTemplate": "https://x/{branch}/{commit}/{path}?blob={blob}", "maxFileSize": 1000}`,
		`{"url": "https://git.example.com/h.git", "token": "only-a-token"}`,
	} {
		if err := c.Validate(t.Context(), json.RawMessage(good)); err != nil {
			t.Errorf("Validate(%s) = %v; want nil", good, err)
		}
	}
}

func TestDescribe(t *testing.T) {
	d, err := newConnector(t).Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d.Type != "git" || !d.Has(connector.CapSchedule) || !d.Has(connector.CapIncremental) || d.Has(connector.CapACL) {
		t.Errorf("description %+v: want type git with schedule and incremental, without acl", d)
	}
	secrets, err := connector.SecretFields(d.ConfigSchema)
	if err != nil || len(secrets) != 1 || secrets[0] != "/token" {
		t.Errorf("secret fields %v (%v), want [/token]", secrets, err)
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(d.ConfigSchema, &schema); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"url", "branch", "include", "exclude", "username", "token", "webUrlTemplate", "maxFileSize"} {
		p, ok := schema.Properties[key]
		if !ok {
			t.Errorf("schema lacks %q", key)
			continue
		}
		if s, _ := p["description"].(string); s == "" {
			t.Errorf("schema key %q has no description", key)
		}
	}
	if schema.Properties["maxFileSize"]["default"] != float64(git.DefaultMaxFileSize) {
		t.Errorf("maxFileSize default %v, want %d", schema.Properties["maxFileSize"]["default"], git.DefaultMaxFileSize)
	}
	if len(schema.Required) != 1 || schema.Required[0] != "url" {
		t.Errorf("required %v, want [url]", schema.Required)
	}
}

// TestSync follows a repository through its life: a first listing, an
// unchanged second one, changes sent as a diff, a full listing after them,
// and the same diff from a fresh process.
func TestSync(t *testing.T) {
	srv := startServer(t, nil)
	r := srv.newRepo(t, "handbook")
	first := handbook(r)
	// A branch off the first commit, which the main branch never sees.
	r.git("checkout", "--quiet", "-b", "feature")
	r.write("feature.md", "# Feature\n")
	r.commit("feature")
	r.git("checkout", "--quiet", "main")

	cfg := r.config(map[string]any{"webUrlTemplate": webTemplate})
	c := newConnector(t)

	one := doSync(t, c, cfg, nil)
	if !one.snapshot {
		t.Error("a sync without a cursor sent no Snapshot")
	}
	wantIDs(t, "first sync", one.ids(), handbookIDs...)
	for id, it := range one.upserts {
		if it.Version != r.blob(first, id) {
			t.Errorf("%s: version %q, want its blob hash %s", id, it.Version, r.blob(first, id))
		}
		if it.Name != filepath.Base(id) || it.Path != id {
			t.Errorf("%s: name %q path %q", id, it.Name, it.Path)
		}
		if it.Metadata["path"] != id || it.Metadata["commit"] != first || it.Metadata["branch"] != "main" || it.Metadata["repository"] != r.url {
			t.Errorf("%s: metadata %v", id, it.Metadata)
		}
		if it.URL == "" || it.Metadata["webUrl"] != it.URL {
			t.Errorf("%s: URL %q, metadata webUrl %v", id, it.URL, it.Metadata["webUrl"])
		}
		want, err := os.ReadFile(filepath.Join(r.work, filepath.FromSlash(id)))
		if err != nil {
			t.Fatal(err)
		}
		if it.Size != int64(len(want)) {
			t.Errorf("%s: size %d, want %d", id, it.Size, len(want))
		}
		got, content := fetch(t, c, cfg, it)
		if got != string(want) {
			t.Errorf("Fetch %s = %q, want %q", id, got, want)
		}
		if content.Version != it.Version || content.Size != it.Size || content.ContentType != it.ContentType {
			t.Errorf("Fetch %s: content %+v does not match item %+v", id, content, it)
		}
	}
	for id, ct := range map[string]string{
		"README.md": "text/markdown", "src/main.go": "text/plain", "manual.pdf": "application/pdf", "run.sh": "text/plain",
	} {
		if got := one.upserts[id].ContentType; got != ct {
			t.Errorf("%s: content type %q, want %q", id, got, ct)
		}
	}
	if got, want := one.upserts["docs/with space.md"].URL, "https://git.example.com/team/handbook/blob/"+first+"/docs/with%20space.md"; got != want {
		t.Errorf("web URL %q, want %q", got, want)
	}

	t.Run("unchanged", func(t *testing.T) {
		two := doSync(t, c, cfg, nil)
		wantIDs(t, "second sync", two.ids(), handbookIDs...)
		for id, it := range one.upserts {
			if two.upserts[id].Version != it.Version {
				t.Errorf("%s: version %q, then %q, without a change", id, it.Version, two.upserts[id].Version)
			}
		}
		inc := doSync(t, c, cfg, one.cursor)
		if inc.snapshot || len(inc.upserts) != 0 || len(inc.deletes) != 0 {
			t.Errorf("sync from the cursor of an unchanged branch: snapshot %v, upserts %v, deletes %v", inc.snapshot, inc.ids(), inc.deletes)
		}
		if !bytes.Equal(inc.cursor, one.cursor) {
			t.Errorf("cursor %s, then %s, without a change", one.cursor, inc.cursor)
		}
	})

	// Modify, add, delete, rename, and turn a text file binary.
	r.write("docs/guide.md", "# Guide\n\nVersion two.\n")
	r.write("docs/new.md", "# New\n")
	r.git("rm", "--quiet", "docs/old.md")
	r.git("mv", "src/main.go", "src/app.go")
	r.write("notes.txt", "now\x00binary")
	r.git("update-index", "--cacheinfo", "160000,2222222222222222222222222222222222222222,themes/base")
	second := r.commit("changes")
	afterIDs := []string{
		"README.md", "docs/drafts/wip.md", "docs/guide.md", "docs/new.md", "docs/with space.md",
		"manual.pdf", "run.sh", "src/app.go", "vendor/lib/lib.go",
	}
	checkDiff := func(t *testing.T, res syncResult) {
		t.Helper()
		if res.snapshot {
			t.Error("an incremental sync sent a Snapshot")
		}
		wantIDs(t, "upserts", res.ids(), "docs/guide.md", "docs/new.md", "src/app.go")
		wantIDs(t, "deletes", res.deletes, "docs/old.md", "notes.txt", "src/main.go")
		if v := res.upserts["docs/guide.md"].Version; v != r.blob(second, "docs/guide.md") || v == one.upserts["docs/guide.md"].Version {
			t.Errorf("changed guide: version %q (was %q)", v, one.upserts["docs/guide.md"].Version)
		}
		if v := res.upserts["src/app.go"].Version; v != one.upserts["src/main.go"].Version {
			t.Errorf("renamed file: version %q, want the unchanged blob %q", v, one.upserts["src/main.go"].Version)
		}
		if res.upserts["docs/new.md"].Metadata["commit"] != second {
			t.Errorf("metadata commit %v, want %s", res.upserts["docs/new.md"].Metadata["commit"], second)
		}
	}

	var inc syncResult
	t.Run("incremental", func(t *testing.T) {
		inc = doSync(t, c, cfg, one.cursor)
		checkDiff(t, inc)
		if got, _ := fetch(t, c, cfg, inc.upserts["docs/guide.md"]); got != "# Guide\n\nVersion two.\n" {
			t.Errorf("changed guide: %q", got)
		}
		// The host may ask for an item by the version it holds: still there.
		if got, _ := fetch(t, c, cfg, one.upserts["docs/guide.md"]); got != "# Guide\n\nVersion one.\n" {
			t.Errorf("old version of the guide: %q", got)
		}
		// A deleted file is gone for a Fetch without a version.
		_, err := c.Fetch(t.Context(), connector.FetchRequest{Config: cfg, Item: connector.Item{ID: "docs/old.md", Name: "old.md"}})
		if !errors.Is(err, plugins.ErrNotFound) {
			t.Errorf("Fetch of a deleted file: %v, want plugins.ErrNotFound", err)
		}
	})

	t.Run("full after change", func(t *testing.T) {
		full := doSync(t, c, cfg, nil)
		if !full.snapshot {
			t.Error("no Snapshot")
		}
		wantIDs(t, "full listing", full.ids(), afterIDs...)
		if !bytes.Equal(full.cursor, inc.cursor) {
			t.Errorf("full and incremental syncs of one commit: cursors %s and %s", full.cursor, inc.cursor)
		}
	})

	t.Run("fresh process, server without commits by hash", func(t *testing.T) {
		res := doSync(t, newConnector(t), cfg, one.cursor)
		if !res.snapshot {
			t.Error("the old commit cannot be fetched, yet no full listing (Snapshot)")
		}
		wantIDs(t, "fallback listing", res.ids(), afterIDs...)
	})

	t.Run("fresh process, server with commits by hash", func(t *testing.T) {
		r.serverGit("config", "uploadpack.allowReachableSHA1InWant", "true")
		defer r.serverGit("config", "--unset", "uploadpack.allowReachableSHA1InWant")
		checkDiff(t, doSync(t, newConnector(t), cfg, one.cursor))
	})

	t.Run("other branch", func(t *testing.T) {
		res := doSync(t, c, r.config(map[string]any{"branch": "feature"}), nil)
		wantIDs(t, "feature branch", res.ids(), append([]string{"feature.md"}, handbookIDs...)...)
		if res.upserts["feature.md"].Metadata["branch"] != "feature" {
			t.Errorf("metadata %v", res.upserts["feature.md"].Metadata)
		}
		if res.upserts["feature.md"].URL != "" {
			t.Errorf("URL %q without a template", res.upserts["feature.md"].URL)
		}
	})

	t.Run("remote HEAD decides the default branch", func(t *testing.T) {
		r.serverGit("symbolic-ref", "HEAD", "refs/heads/feature")
		defer r.serverGit("symbolic-ref", "HEAD", "refs/heads/main")
		res := doSync(t, c, cfg, nil)
		if _, ok := res.upserts["feature.md"]; !ok {
			t.Errorf("with HEAD at feature, listed %v", res.ids())
		}
	})

	t.Run("force push", func(t *testing.T) {
		r.serverGit("config", "uploadpack.allowReachableSHA1InWant", "true")
		defer r.serverGit("config", "--unset", "uploadpack.allowReachableSHA1InWant")
		// Rewrite main: back to the first commit, plus a change. The second
		// commit is now unreachable.
		r.git("reset", "--quiet", "--hard", first)
		r.write("README.md", "# Handbook\n\nRewritten.\n")
		r.commit("rewrite")
		r.serverGit("gc", "--quiet", "--prune=now")

		// A fresh process cannot get the old commit: full listing.
		res := doSync(t, newConnector(t), cfg, inc.cursor)
		if !res.snapshot {
			t.Error("after a force push, a fresh process sent no full listing")
		}
		wantIDs(t, "listing after a force push", res.ids(), handbookIDs...)

		// The process that synced the old commit still has its tree: the
		// diff between the trees is right whatever the history says.
		res = doSync(t, c, cfg, inc.cursor)
		if res.snapshot {
			t.Error("the mirror holds the old tree, yet a full listing")
		}
		wantIDs(t, "upserts after a force push", res.ids(), "README.md", "docs/guide.md", "docs/old.md", "notes.txt", "src/main.go")
		wantIDs(t, "deletes after a force push", res.deletes, "docs/new.md", "src/app.go")
	})
}

func TestFilters(t *testing.T) {
	srv := startServer(t, nil)
	r := srv.newRepo(t, "handbook")
	handbook(r)
	c := newConnector(t)
	for _, tc := range []struct {
		include, exclude []string
		want             []string
	}{
		{include: []string{"*.md"}, want: []string{"README.md", "docs/drafts/wip.md", "docs/guide.md", "docs/old.md", "docs/with space.md"}},
		{include: []string{"/*.md"}, want: []string{"README.md"}},
		{include: []string{"docs"}, exclude: []string{"drafts"}, want: []string{"docs/guide.md", "docs/old.md", "docs/with space.md"}},
		{include: []string{"docs/**/*.md", "src/"}, exclude: []string{"docs/with*"}, want: []string{"docs/drafts/wip.md", "docs/guide.md", "docs/old.md", "src/main.go"}},
		{exclude: []string{"vendor", "**/*.md", "*.pdf"}, want: []string{"notes.txt", "run.sh", "src/main.go"}},
		{include: []string{"nothing-matches"}, want: nil},
	} {
		cfg := r.config(map[string]any{"include": tc.include, "exclude": tc.exclude})
		res := doSync(t, c, cfg, nil)
		wantIDs(t, "include "+strings.Join(tc.include, ",")+" exclude "+strings.Join(tc.exclude, ","), res.ids(), tc.want...)
	}

	// Fetch refuses what the filters leave out.
	cfg := r.config(map[string]any{"exclude": []string{"vendor"}})
	_, err := c.Fetch(t.Context(), connector.FetchRequest{Config: cfg, Item: connector.Item{ID: "vendor/lib/lib.go", Name: "lib.go"}})
	if !errors.Is(err, plugins.ErrNotFound) {
		t.Errorf("Fetch of an excluded file: %v, want plugins.ErrNotFound", err)
	}

	// A cursor taken under other filters leads to a full listing.
	all := doSync(t, c, r.config(nil), nil)
	narrow := doSync(t, c, cfg, all.cursor)
	if !narrow.snapshot || narrow.upserts["vendor/lib/lib.go"].ID != "" {
		t.Errorf("new filters with an old cursor: snapshot %v, listed %v", narrow.snapshot, narrow.ids())
	}
}

func TestLargeFiles(t *testing.T) {
	srv := startServer(t, nil)
	r := srv.newRepo(t, "big")
	big := strings.Repeat("all work and no play makes jack a dull boy\n", 80_000) // 3.4 MB
	r.write("big.txt", big)
	r.write("small.txt", "small\n")
	r.commit("big")
	c := newConnector(t)

	res := doSync(t, c, r.config(nil), nil)
	wantIDs(t, "listing", res.ids(), "big.txt", "small.txt")
	got, content := fetch(t, c, r.config(nil), res.upserts["big.txt"])
	if got != big || content.Size != int64(len(big)) {
		t.Errorf("Fetch of a large file: %d bytes (size %d), want %d", len(got), content.Size, len(big))
	}
	// Many readers at once, each streaming its own copy.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			content, err := c.Fetch(t.Context(), connector.FetchRequest{Config: r.config(nil), Item: res.upserts["big.txt"]})
			if err != nil {
				t.Error(err)
				return
			}
			defer content.Body.Close()
			var buf bytes.Buffer
			if _, err := buf.ReadFrom(content.Body); err != nil || buf.String() != big {
				t.Errorf("concurrent Fetch: %d bytes, %v", buf.Len(), err)
			}
		})
	}
	wg.Wait()

	limited := r.config(map[string]any{"maxFileSize": 1 << 20})
	res = doSync(t, c, limited, nil)
	wantIDs(t, "listing with maxFileSize", res.ids(), "small.txt")
	_, err := c.Fetch(t.Context(), connector.FetchRequest{Config: limited, Item: connector.Item{ID: "big.txt", Name: "big.txt"}})
	if !errors.Is(err, plugins.ErrNotFound) {
		t.Errorf("Fetch of a file over maxFileSize: %v, want plugins.ErrNotFound", err)
	}
}

func TestCheckHealth(t *testing.T) {
	srv := startServer(t, nil)
	r := srv.newRepo(t, "handbook")
	handbook(r)
	empty := srv.newRepo(t, "empty")
	c := newConnector(t)

	check := func(cfg json.RawMessage, want connector.HealthStatus, msg string) {
		t.Helper()
		h, err := c.CheckHealth(t.Context(), cfg)
		if err != nil {
			t.Fatalf("CheckHealth(%s): %v", cfg, err)
		}
		if h.Status != want || !strings.Contains(h.Message, msg) {
			t.Errorf("CheckHealth(%s) = %q %q; want %q with %q", cfg, h.Status, h.Message, want, msg)
		}
	}
	check(r.config(nil), connector.StatusOK, "branch main")
	check(r.config(map[string]any{"branch": "nope"}), connector.StatusDown, `"nope"`)
	check(json.RawMessage(`{"url":"`+srv.url+`/missing.git"}`), connector.StatusDown, "not found")
	check(empty.config(nil), connector.StatusDegraded, "no commits")

	// An unreachable server: a port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + l.Addr().String()
	l.Close()
	check(json.RawMessage(`{"url":"`+deadURL+`/handbook.git"}`), connector.StatusDown, "handbook.git")

	if _, err := c.CheckHealth(t.Context(), json.RawMessage(`{"url":"ftp://x"}`)); !errors.Is(err, connector.ErrInvalidConfig) {
		t.Errorf("CheckHealth of an invalid config: %v, want connector.ErrInvalidConfig", err)
	}

	// An empty repository lists nothing, and says so with a Snapshot.
	res, err := trySync(t, c, empty.config(nil), nil)
	if err != nil || !res.snapshot || len(res.upserts) != 0 {
		t.Errorf("sync of an empty repository: %+v, %v", res, err)
	}
	// An unreachable one is an error, not an empty listing.
	if _, err := trySync(t, c, json.RawMessage(`{"url":"`+deadURL+`/handbook.git"}`), nil); err == nil {
		t.Error("sync of an unreachable server succeeded")
	}
}

func TestBasicAuth(t *testing.T) {
	const token = "s3cret-Token-7f1c"
	srv := startServer(t, basicAuth("alice", token))
	r := srv.newRepo(t, "private")
	handbook(r)
	var logs bytes.Buffer
	var mu sync.Mutex
	c := newConnector(t, git.WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))))

	good := r.config(map[string]any{"username": "alice", "token": token})
	res := doSync(t, c, good, nil)
	wantIDs(t, "authenticated sync", res.ids(), handbookIDs...)
	if got, _ := fetch(t, c, good, res.upserts["README.md"]); !strings.HasPrefix(got, "# Handbook") {
		t.Errorf("Fetch: %q", got)
	}
	if h, err := c.CheckHealth(t.Context(), good); err != nil || h.Status != connector.StatusOK {
		t.Errorf("CheckHealth with good credentials: %+v %v", h, err)
	}

	// Through the gRPC boundary too: what the host sees.
	client := plugintest.StartConnector(t, c)
	for name, cfg := range map[string]json.RawMessage{
		"wrong token": r.config(map[string]any{"username": "alice", "token": "wrong-" + token}),
		"wrong user":  r.config(map[string]any{"username": "mallory", "token": token}),
		"no token":    r.config(nil),
	} {
		for _, conn := range []connector.Connector{c, client} {
			_, err := trySync(t, conn, cfg, nil)
			if !errors.Is(err, plugins.ErrUnauthenticated) {
				t.Errorf("%s: sync error %v, want plugins.ErrUnauthenticated", name, err)
			}
			if err != nil && (strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "401")) {
				t.Errorf("%s: error %q: want HTTP 401 named and no token", name, err)
			}
			h, err := conn.CheckHealth(t.Context(), cfg)
			if err != nil || h.Status != connector.StatusDown || strings.Contains(h.Message, token) || !strings.Contains(h.Message, "401") {
				t.Errorf("%s: CheckHealth = %+v, %v; want down, naming 401, without the token", name, h, err)
			}
			_, err = conn.Fetch(t.Context(), connector.FetchRequest{Config: cfg, Item: connector.Item{ID: "README.md", Name: "README.md"}})
			if !errors.Is(err, plugins.ErrUnauthenticated) || strings.Contains(err.Error(), token) {
				t.Errorf("%s: Fetch error %v, want plugins.ErrUnauthenticated without the token", name, err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), token) {
		t.Errorf("the token appears in the log:\n%s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestMirrorCache checks that the cache keeps at most the configured number
// of repositories and that Close leaves nothing behind.
func TestMirrorCache(t *testing.T) {
	srv := startServer(t, nil)
	a, b := srv.newRepo(t, "a"), srv.newRepo(t, "b")
	a.write("a.md", "# A\n")
	a.commit("a")
	b.write("b.md", "# B\n")
	b.commit("b")

	dir := t.TempDir()
	c := git.New(git.WithCacheDir(dir), git.WithMaxMirrors(1))
	mirrors := func() int {
		t.Helper()
		m, err := filepath.Glob(filepath.Join(dir, "docindex-git-*", "*"))
		if err != nil {
			t.Fatal(err)
		}
		return len(m)
	}
	resA := doSync(t, c, a.config(nil), nil)
	doSync(t, c, a.config(nil), nil)
	if n := mirrors(); n != 1 {
		t.Errorf("%d mirrors after two syncs of one repository, want 1", n)
	}
	doSync(t, c, b.config(nil), nil)
	if n := mirrors(); n != 1 {
		t.Errorf("%d mirrors with WithMaxMirrors(1), want 1", n)
	}
	// The evicted repository is fetched again when needed.
	if got, _ := fetch(t, c, a.config(nil), resA.upserts["a.md"]); got != "# A\n" {
		t.Errorf("Fetch after eviction: %q", got)
	}
	// Other credentials, another mirror: one source never reads through
	// another's credentials.
	doSync(t, c, a.config(map[string]any{"token": "x"}), nil)
	if n := mirrors(); n != 1 {
		t.Errorf("%d mirrors, want 1", n)
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("Close left %v", left)
	}
	if _, err := trySync(t, c, a.config(nil), nil); err == nil {
		t.Error("sync after Close succeeded")
	}
}
