package sources_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/connectors/docsuite"
	"github.com/docindex/docindex/connectors/filecloud"
	"github.com/docindex/docindex/connectors/git"
	"github.com/docindex/docindex/connectors/webcrawl"
	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/docindextest"
)

// The documents of the git and filecloud tests: one word of each is in no other.
const (
	readme      = "# Handbook\n\nAlbatross flights cross the southern ocean for weeks.\n"
	beavers     = "# Rivers\n\nBeavers build dams across slow rivers.\n"
	beaversNext = "# Rivers\n\nBadgers dig setts under old hedges by the river.\n"
	gannets     = "# Cliffs\n\nGannets dive steeply for mackerel.\n"
)

// animals is the life cycle of a source holding README.md, docs/beavers.md (changed) and
// docs/gannets.md (removed).
func animals(incremental bool, change, remove func(t *testing.T)) lifecycle {
	return lifecycle{
		items: 3, find: "albatross", findIn: "README.md", incremental: incremental,
		change: change, changedName: "beavers.md", oldWord: "dams", newWord: "badgers",
		remove: remove, removedName: "gannets.md", removedWord: "gannets",
	}
}

// TestWebcrawl crawls the tutorial of Debian's PostgreSQL manual, served by a static file server
// on loopback: Last-Modified dates are the pages' versions, a changed page gets a later one and a
// removed page answers 404.
func TestWebcrawl(t *testing.T) {
	t.Parallel()
	dir, pages := copyManual(t, "tutorial")
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A static site without directory listings: the manual's links to index.html (which
		// the file server redirects to "/") must find nothing here.
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t, docindextest.Connectors{"webcrawl": webcrawl.New(webcrawl.WithLogger(testLogger()))})
	ctx := context.Background()
	cid := e.coll.ID.String()

	t.Run("loopback refused without allowPrivateNetworks", func(t *testing.T) {
		// An address in the config is refused when the source is created...
		_, err := e.svc.CreateSource(ctx, e.owner, docindex.SourceInput{Name: "private", Type: "webcrawl",
			Config: []byte(`{"startUrls": ["` + srv.URL + `/tutorial.html"]}`), CollectionID: &cid})
		if !errors.Is(err, docindex.ErrInvalid) || !strings.Contains(err.Error(), "allowPrivateNetworks") {
			t.Errorf("create with a loopback start URL: %v; want an invalid-request error naming allowPrivateNetworks", err)
		}
		// ...a host name that resolves to loopback when the crawl connects.
		local := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
		src := e.createSource(t, "webcrawl", map[string]any{"startUrls": []string{local + "/tutorial.html"}})
		r := e.syncWait(t, src.ID)
		if r.Status != "failed" || r.Error == nil || !strings.Contains(*r.Error, "allowPrivateNetworks") {
			t.Errorf("sync of a host on loopback: %s, %v; want failed naming allowPrivateNetworks", r.Status, r.Error)
		}
		if n := e.count(t, "SELECT count(*) FROM docindex.files WHERE source_id = ?", src.ID); n != 0 {
			t.Errorf("a refused crawl left %d files", n)
		}
		if _, err := e.svc.DeleteSource(ctx, e.owner, src.ID, true); err != nil {
			t.Fatal(err)
		}
	})

	// tutorial.html links every page of the tutorial; the links out of it (index.html, ...)
	// answer 404 here and list nothing.
	src := e.createSource(t, "webcrawl", map[string]any{
		"startUrls": []string{srv.URL + "/tutorial.html"}, "maxDepth": 1, "requestsPerSecond": 200,
		"allowPrivateNetworks": true,
	})
	views := filepath.Join(dir, "tutorial-views.html")
	e.run(t, src, lifecycle{
		items: pages, find: "depname", findIn: "tutorial-window.html",
		change: func(t *testing.T) {
			b, err := os.ReadFile(views)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "tutorial-views.html", []byte(strings.ReplaceAll(string(b), "myview", "quokkaview")))
		},
		changedName: "tutorial-views.html", oldWord: "myview", newWord: "quokkaview",
		remove: func(t *testing.T) {
			if err := os.Remove(filepath.Join(dir, "tutorial-inheritance.html")); err != nil {
				t.Fatal(err)
			}
		},
		removedName: "tutorial-inheritance.html", removedWord: "capitals",
	})
}

// TestGit syncs a repository served by git http-backend behind basic authentication: the token
// is sealed in the database and reaches the connector.
func TestGit(t *testing.T) {
	t.Parallel()
	const token = "git-token-integration-5e1f0c"
	srv := startGitServer(t, "bot", token)
	r := srv.newRepo(t, "handbook")
	r.write("README.md", readme)
	r.write("docs/beavers.md", beavers)
	r.write("docs/gannets.md", gannets)
	r.commit("handbook")

	conn := git.New(git.WithCacheDir(t.TempDir()), git.WithLogger(testLogger()))
	t.Cleanup(func() { _ = conn.Close() })
	e := newEnv(t, docindextest.Connectors{"git": conn})
	src := e.createSource(t, "git", map[string]any{"url": r.url, "username": "bot", "token": token}, token)
	e.run(t, src, animals(true,
		func(t *testing.T) { r.write("docs/beavers.md", beaversNext); r.commit("badgers") },
		func(t *testing.T) { r.remove("docs/gannets.md"); r.commit("no gannets") }))
	e.checkSealed(t, src.ID, token)
}

// TestFilecloud syncs a WebDAV folder (rclone serve webdav) and an S3 bucket (versitygw).
func TestFilecloud(t *testing.T) {
	t.Parallel()
	conns := docindextest.Connectors{"filecloud": filecloud.New(filecloud.WithLogger(testLogger()))}

	t.Run("webdav", func(t *testing.T) {
		t.Parallel()
		const pass = "dav-password-integration-93d7aa"
		dir := t.TempDir()
		writeFile(t, dir, "README.md", []byte(readme))
		writeFile(t, dir, "docs/beavers.md", []byte(beavers))
		writeFile(t, dir, "docs/gannets.md", []byte(gannets))
		base := startWebDAV(t, dir, "alice", pass)
		e := newEnv(t, conns)
		src := e.createSource(t, "filecloud", map[string]any{"provider": "webdav", "url": base,
			"username": "alice", "password": pass}, pass)
		e.run(t, src, animals(false,
			func(t *testing.T) { writeFile(t, dir, "docs/beavers.md", []byte(beaversNext)) },
			func(t *testing.T) {
				if err := os.Remove(filepath.Join(dir, "docs", "gannets.md")); err != nil {
					t.Fatal(err)
				}
			}))
		e.checkSealed(t, src.ID, pass)
	})

	t.Run("s3", func(t *testing.T) {
		t.Parallel()
		const access, secret = "docindex-integration", "s3-secret-integration-c41d62"
		g := startS3(t, access, secret)
		g.createBucket(t, "handbook")
		g.put(t, "handbook", "docs/README.md", readme)
		g.put(t, "handbook", "docs/beavers.md", beavers)
		g.put(t, "handbook", "docs/gannets.md", gannets)
		g.put(t, "handbook", "elsewhere/outside.md", "Ospreys are outside the prefix.\n")
		e := newEnv(t, conns)
		src := e.createSource(t, "filecloud", map[string]any{"provider": "s3", "url": g.endpoint,
			"bucket": "handbook", "prefix": "docs/", "accessKeyId": access, "secretAccessKey": secret}, secret)
		e.run(t, src, animals(false,
			// New content, new ETag (the object's MD5).
			func(t *testing.T) { g.put(t, "handbook", "docs/beavers.md", beaversNext) },
			func(t *testing.T) { g.remove(t, "handbook", "docs/gannets.md") }))
		if got := e.search(t, "ospreys"); len(got) != 0 {
			t.Errorf("an object outside the prefix was indexed: %v", got)
		}
		e.checkSealed(t, src.ID, secret)
	})
}

// TestDocsuiteMediaWiki syncs a MediaWiki (Debian's package, under php -S) read with a bot
// password: its pages are items, an edit is a new revision, a deleted page goes.
func TestDocsuiteMediaWiki(t *testing.T) {
	t.Parallel()
	wiki := startWiki(t)
	editor := newWikiClient(t, wiki, wikiEditorLogin, wikiEditorPass)
	editor.edit("Albatross", "Albatross flights cross the southern ocean for weeks.")
	editor.edit("Beaver", "Beavers build dams across slow rivers.")
	editor.edit("Gannet", "Gannets dive steeply for mackerel.")
	// Recent changes have one-second timestamps and the connector re-reads the second its cursor
	// was taken in (so no edit of that second is lost; re-read pages are skipped by revision).
	// Waiting past it keeps these edits out of the incremental sync the test expects to be empty.
	time.Sleep(1100 * time.Millisecond)

	e := newEnv(t, docindextest.Connectors{"docsuite": docsuite.New(docsuite.WithLogger(testLogger()))})
	src := e.createSource(t, "docsuite", map[string]any{"flavor": "mediawiki", "baseUrl": wiki,
		"username": wikiReaderLogin, "apiToken": wikiReaderPass}, wikiReaderPass)
	e.run(t, src, lifecycle{
		// The three pages and the Main Page the installer writes.
		items: 4, find: "albatross", findIn: "Albatross.html", incremental: true,
		change: func(t *testing.T) { editor.edit("Beaver", "Badgers dig setts under old hedges by the river.") },
		// Not "beavers": the page's title, Beaver, stays in its HTML.
		changedName: "Beaver.html", oldWord: "dams", newWord: "badgers",
		remove:      func(t *testing.T) { editor.delete("Gannet") },
		removedName: "Gannet.html", removedWord: "gannets",
	})
	e.checkSealed(t, src.ID, wikiReaderPass)
}
