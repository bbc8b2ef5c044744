package filecloud_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/connectors/filecloud"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/plugintest"
)

const testBucket = "docs"

// s3Fixture runs versitygw with a bucket whose prefix "library" is the
// source; keys beside it must never be listed.
func s3Fixture(t *testing.T) (fixture, *s3Server) {
	t.Helper()
	g := startS3(t)
	g.createBucket(t, testBucket)
	for rel, data := range initialFiles() {
		ct := ""
		switch path.Ext(rel) {
		case ".pdf":
			// What uploads without a type get: the extension must win.
			ct = "application/octet-stream"
		case ".txt":
			ct = "text/plain; charset=utf-8"
		}
		g.put(t, testBucket, "library/"+rel, data, ct)
	}
	g.put(t, testBucket, "outside.txt", []byte("beside the prefix\n"), "")
	g.put(t, testBucket, "library-other/x.md", []byte("shares the prefix's letters, not its folder\n"), "")
	g.put(t, testBucket, "library/empty-folder/", nil, "") // a console's folder marker
	f := fixture{
		base: map[string]any{
			"provider": "s3", "url": g.endpoint, "bucket": testBucket, "prefix": "library",
			"accessKeyId": s3Access, "secretAccessKey": s3Secret,
		},
		secretKey: "secretAccessKey",
		put: func(t *testing.T, rel string, data []byte) {
			g.put(t, testBucket, "library/"+rel, data, "")
		},
		remove:    func(t *testing.T, rel string) { g.remove(t, testBucket, "library/"+rel) },
		urlPrefix: g.endpoint + "/" + testBucket + "/library/",
	}
	return f, g
}

func TestS3Conformance(t *testing.T) {
	f, _ := s3Fixture(t)
	c := plugintest.StartConnector(t, filecloud.New())
	plugintest.RunConnectorSuite(t, c,
		plugintest.WithConfig(f.config()),
		plugintest.WithInvalidConfigs(invalidConfigs()...),
		plugintest.WithMinItems(len(initialFiles())),
		plugintest.WithOperationTimeout(30*time.Second))
}

func TestS3Behaviour(t *testing.T) {
	f, _ := s3Fixture(t)
	runBehaviour(t, f)
}

func TestS3BucketAndPrefix(t *testing.T) {
	f, g := s3Fixture(t)
	c := plugintest.StartConnector(t, filecloud.New())
	ctx := context.Background()

	// "library" and "library/" are the same folder.
	if got := ids(syncOK(t, c, f.config("prefix", "library/"))); len(got) != len(initialFiles()) {
		t.Errorf("prefix library/: listed %q", got)
	}
	// No prefix: the whole bucket, without folder markers.
	all := syncOK(t, c, f.config("prefix", nil))
	if len(all) != len(initialFiles())+2 {
		t.Errorf("whole bucket: listed %q", ids(all))
	}
	for _, id := range []string{"outside.txt", "library-other/x.md", "library/guide/intro.md"} {
		if _, ok := all[id]; !ok {
			t.Errorf("whole bucket: %q not listed", id)
		}
	}
	if it := all["library/guide/intro.md"]; it.Metadata["key"] != "library/guide/intro.md" || it.Metadata["bucket"] != testBucket {
		t.Errorf("metadata %v", it.Metadata)
	}

	// The server's type where it says something, else the extension's.
	items := syncOK(t, c, f.config())
	if _, content := fetchAll(t, c, f.config(), items["report.pdf"]); content.ContentType != "application/pdf" {
		t.Errorf("fetch report.pdf (stored as octet-stream): content type %q", content.ContentType)
	}
	if _, content := fetchAll(t, c, f.config(), items["notes.txt"]); content.ContentType != "text/plain; charset=utf-8" {
		t.Errorf("fetch notes.txt: content type %q", content.ContentType)
	}

	// A bucket that does not exist fails the sync and the health check.
	missing := f.config("bucket", "no-such-bucket")
	if l := syncOnce(t, c, missing); !errors.Is(l.err, plugins.ErrNotFound) || !strings.Contains(l.err.Error(), "bucket does not exist") {
		t.Errorf("sync of a missing bucket: %v", l.err)
	}
	if h, err := c.CheckHealth(ctx, missing); err != nil || h.Status != connector.StatusDown || !strings.Contains(h.Message, "does not exist") {
		t.Errorf("health of a missing bucket: %+v, %v", h, err)
	}

	// An unknown access key is a credentials problem too.
	if l := syncOnce(t, c, f.config("accessKeyId", "nobody")); !errors.Is(l.err, plugins.ErrUnauthenticated) {
		t.Errorf("sync with an unknown access key: %v; want ErrUnauthenticated", l.err)
	}
	// Anonymous requests to a private bucket are refused.
	if h, err := c.CheckHealth(ctx, f.config("accessKeyId", nil, "secretAccessKey", nil)); err != nil || h.Status != connector.StatusDown {
		t.Errorf("anonymous health check of a private bucket: %+v, %v", h, err)
	}

	// Many objects: the listing pages (1000 keys a page) and stays complete.
	// They are written straight into the gateway's directory, which is
	// quicker than a thousand PUTs and leaves them without a stored ETag:
	// their versions fall back to size and modification time.
	const n = 1001
	manyDir := filepath.Join(g.dir, testBucket, "many")
	must(t, os.MkdirAll(manyDir, 0o755))
	for i := range n {
		must(t, os.WriteFile(filepath.Join(manyDir, fmt.Sprintf("%04d.txt", i)), []byte(fmt.Sprint(i)), 0o644))
	}
	many := syncOK(t, c, f.config("prefix", "many"))
	if len(many) != n {
		t.Errorf("prefix many/: listed %d objects, want %d", len(many), n)
	}
	it := many["0042.txt"]
	t.Logf("an object without a stored ETag: version %q", it.Version)
	if it.Version == "" {
		t.Errorf("no version for %+v", it)
	}
	if data, _ := fetchAll(t, c, f.config("prefix", "many"), it); string(data) != "42" {
		t.Errorf("fetched %q", data)
	}
	writeFile(t, filepath.Join(g.dir, testBucket), "many/0042.txt", []byte("forty-two"))
	if again := syncOK(t, c, f.config("prefix", "many")); again["0042.txt"].Version == it.Version ||
		again["0041.txt"].Version != many["0041.txt"].Version {
		t.Errorf("versions after a change on disk: %q -> %q (changed), %q -> %q (unchanged)",
			it.Version, again["0042.txt"].Version, many["0041.txt"].Version, again["0041.txt"].Version)
	}
}
