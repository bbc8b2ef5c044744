package blob

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirStore(t *testing.T) {
	testStore(t, func(t *testing.T) Store {
		s, err := NewDir(filepath.Join(t.TempDir(), "created", "on", "open"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestDirStoreThroughURL(t *testing.T) {
	testStore(t, func(t *testing.T) Store {
		s, err := Open(context.Background(), "file://"+t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestDirLayout: a key is a file under the directory, and nothing is written
// outside it.
func TestDirLayout(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "blobs")
	s, err := NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(ctx, "files/42/report.txt", strings.NewReader("hello"), ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "files", "42", "report.txt"))
	if err != nil || string(b) != "hello" {
		t.Errorf("file on disk: %q, %v", b, err)
	}
	for _, key := range []string{"../escaped", "a/../../escaped"} {
		if _, err := s.Put(ctx, key, strings.NewReader("x"), ""); err == nil {
			t.Errorf("Put %q accepted", key)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "escaped")); !os.IsNotExist(err) {
		t.Errorf("a file was written outside the store: %v", err)
	}
	// No temporary files are left behind, after success or failure.
	_, _ = s.Put(ctx, "files/42/broken", errReader{os.ErrClosed}, "")
	entries, _ := os.ReadDir(filepath.Join(dir, "files", "42"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "report.txt,report.txt.attrs" {
		t.Errorf("directory holds %v", names)
	}
	// Deleting the last blob of a directory removes the directory, never the top-level one.
	for _, key := range []string{"files/43/a", "files/43/b"} {
		if _, err := s.Put(ctx, key, strings.NewReader("x"), ""); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(dir, rel))
		return err == nil
	}
	for _, step := range []struct {
		del  string
		gone string
		kept []string
	}{
		{"files/42/report.txt", "files/42", []string{"files", "files/43"}},
		{"files/43/a", "", []string{"files/43", "files/43/b"}},
		{"files/43/b", "files/43", []string{"files"}},
	} {
		if err := s.Delete(ctx, step.del); err != nil {
			t.Fatal(err)
		}
		if step.gone != "" && exists(step.gone) {
			t.Errorf("after deleting %s: %s is still there", step.del, step.gone)
		}
		for _, k := range step.kept {
			if !exists(k) {
				t.Errorf("after deleting %s: %s is gone", step.del, k)
			}
		}
	}
}

// TestContentType: the given type is kept, and an empty one is sniffed.
func TestContentType(t *testing.T) {
	ctx := context.Background()
	s, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct{ key, content, given, want string }{
		{"given", "plain words", "text/markdown", "text/markdown"},
		{"pdf", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "", "application/pdf"},
		{"html", "<!DOCTYPE html><html><body>hi</body></html>", "", "text/html; charset=utf-8"},
	} {
		if _, err := s.Put(ctx, tc.key, strings.NewReader(tc.content), tc.given); err != nil {
			t.Fatal(err)
		}
		attrs, err := s.(*store).bucket.Attributes(ctx, tc.key)
		if err != nil {
			t.Fatal(err)
		}
		if attrs.ContentType != tc.want {
			t.Errorf("%s: content type %q, want %q", tc.key, attrs.ContentType, tc.want)
		}
	}
}

func TestOpenRejects(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"", "no scheme"},
		{"/var/lib/blobs", "no scheme"},
		{"ftp://host/dir", `unsupported scheme "ftp"`},
		{"file://relative/dir", `host "relative"`},
		{"file:relative", "not absolute"},
		{"file:///tmp/x?mode=fast", "parameters are not supported"},
		{"s3://", "no bucket"},
		{"s3://bucket?access_key_id=AKIA", "go together"},
		{"s3://bucket?use_path_style=maybe", "use_path_style"},
		{"s3://bucket?region=us-east-1&colour=blue", `unknown query parameter "colour"`},
		{"s3://bucket/../up?region=us-east-1&access_key_id=k&secret_access_key=TOPSECRET&endpoint=http://127.0.0.1:1", "bucket not accessible"},
	} {
		_, err := Open(context.Background(), tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q): %v, want an error saying %q", tc.url, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("Open(%q): the error shows the secret: %v", tc.url, err)
		}
	}
}
