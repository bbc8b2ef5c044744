package git_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/connectors/git"
	"github.com/docindex/docindex/plugins/connector"
)

// gitServer serves the bare repositories under root over smart HTTP with
// git's own git-http-backend, run as CGI, on a loopback port.
type gitServer struct {
	root string
	url  string
}

// gitEnv isolates the git command line from the machine's and the user's
// configuration.
func gitEnv(home string) []string {
	return append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+filepath.Join(home, "gitconfig"),
		"HOME="+home,
		"GIT_AUTHOR_NAME=Doc Index", "GIT_AUTHOR_EMAIL=docindex@example.com",
		"GIT_COMMITTER_NAME=Doc Index", "GIT_COMMITTER_EMAIL=docindex@example.com",
		"GIT_TERMINAL_PROMPT=0",
	)
}

// startServer starts git-http-backend behind wrap (nil: no wrapper).
func startServer(t *testing.T, wrap func(http.Handler) http.Handler) *gitServer {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is not installed: run scripts/git-deps.sh (apt-get install git)")
	}
	out, err := exec.Command(gitBin, "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("git-http-backend not found (%v): run scripts/git-deps.sh", err)
	}
	root := t.TempDir()
	var h http.Handler = &cgi.Handler{
		Path: backend,
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=/dev/null",
			"HOME=" + root,
		},
		InheritEnv: []string{"PATH"},
		Stderr:     io.Discard,
	}
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &gitServer{root: root, url: srv.URL}
}

// repo is a bare repository on the server and a working copy that pushes
// to it through the file system.
type repo struct {
	t    *testing.T
	bare string
	work string
	home string
	url  string
}

func (s *gitServer) newRepo(t *testing.T, name string) *repo {
	t.Helper()
	r := &repo{t: t, bare: filepath.Join(s.root, name+".git"), work: t.TempDir(), home: t.TempDir(), url: s.url + "/" + name + ".git"}
	r.run("", "init", "--quiet", "--bare", "--initial-branch=main", r.bare)
	r.run(r.work, "init", "--quiet", "--initial-branch=main")
	r.run(r.work, "remote", "add", "origin", r.bare)
	return r
}

func (r *repo) run(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(r.home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// git runs a git command in the working copy.
func (r *repo) git(args ...string) string { r.t.Helper(); return r.run(r.work, args...) }

// serverGit runs a git command in the bare repository.
func (r *repo) serverGit(args ...string) string { r.t.Helper(); return r.run(r.bare, args...) }

func (r *repo) write(p, content string) {
	r.t.Helper()
	full := filepath.Join(r.work, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// commit commits everything and pushes the current branch; it returns the
// commit hash.
func (r *repo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "--quiet", "-m", msg)
	r.git("push", "--quiet", "--force", "origin", "HEAD")
	return r.git("rev-parse", "HEAD")
}

// blob is the blob hash of path at rev: what an item's Version must be.
func (r *repo) blob(rev, p string) string { r.t.Helper(); return r.git("rev-parse", rev+":"+p) }

// config is a connector configuration for the repository with extra keys.
func (r *repo) config(extra map[string]any) json.RawMessage {
	r.t.Helper()
	m := map[string]any{"url": r.url}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// newConnector returns a connector with its own cache, closed at the end.
func newConnector(t *testing.T, opts ...git.Option) *git.Connector {
	t.Helper()
	c := git.New(append([]git.Option{git.WithCacheDir(t.TempDir())}, opts...)...)
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// syncResult is what one sync sent.
type syncResult struct {
	snapshot bool
	upserts  map[string]connector.Item
	deletes  []string
	cursor   []byte
	events   int
}

func (s syncResult) ids() []string {
	var ids []string
	for id := range s.upserts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// trySync runs a sync and collects its events, checking the order rules
// (Snapshot first, a checkpoint last).
func trySync(t *testing.T, c connector.Connector, cfg json.RawMessage, cursor []byte) (syncResult, error) {
	t.Helper()
	res := syncResult{upserts: map[string]connector.Item{}}
	for ev, err := range c.Sync(ctxT(t), connector.SyncRequest{Config: cfg, Cursor: cursor}) {
		if err != nil {
			return res, err
		}
		res.events++
		if res.cursor != nil {
			t.Errorf("event %v after the checkpoint", ev.Kind)
		}
		switch ev.Kind {
		case connector.EventSnapshot:
			if res.events != 1 {
				t.Errorf("Snapshot as event %d", res.events)
			}
			res.snapshot = true
		case connector.EventUpsert:
			if _, dup := res.upserts[ev.Item.ID]; dup {
				t.Errorf("%s upserted twice", ev.Item.ID)
			}
			res.upserts[ev.Item.ID] = ev.Item
		case connector.EventDelete:
			res.deletes = append(res.deletes, ev.ID)
		case connector.EventCheckpoint:
			res.cursor = ev.Cursor
		}
	}
	slices.Sort(res.deletes)
	return res, nil
}

func doSync(t *testing.T, c connector.Connector, cfg json.RawMessage, cursor []byte) syncResult {
	t.Helper()
	res, err := trySync(t, c, cfg, cursor)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if res.cursor == nil {
		t.Fatal("Sync sent no checkpoint")
	}
	return res
}

func fetch(t *testing.T, c connector.Connector, cfg json.RawMessage, it connector.Item) (string, *connector.Content) {
	t.Helper()
	content, err := c.Fetch(ctxT(t), connector.FetchRequest{Config: cfg, Item: it})
	if err != nil {
		t.Fatalf("Fetch %s: %v", it.ID, err)
	}
	defer content.Body.Close()
	b, err := io.ReadAll(content.Body)
	if err != nil {
		t.Fatalf("Fetch %s: read: %v", it.ID, err)
	}
	return string(b), content
}

func wantIDs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}

// basicAuth demands user and password before passing requests on.
func basicAuth(user, pass string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, ok := r.BasicAuth()
			if !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
