package pluginhost_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// binDir holds the real plugin binaries, built once for the package.
var binDir string

// The plugins the tests run as processes, each built under its directory's
// name.
var testPlugins = []string{
	"github.com/docindex/docindex/cmd/docindex-embedder-hash",
	"github.com/docindex/docindex/cmd/docindex-embedder-glove",
	"github.com/docindex/docindex/cmd/docindex-embedder-openai",
	"github.com/docindex/docindex/cmd/docindex-llm-openai",
	"./testdata/docindex-connector-fixture",
}

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(runHelperHost(dir))
	}
	dir, err := os.MkdirTemp("", "pluginhost-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	if err := buildPlugins(dir); err != nil {
		fmt.Fprintf(os.Stderr, "building the test plugins failed (the go tool must be on PATH): %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildPlugins builds every test plugin with one go command, which shares
// the work between them better than one command each.
func buildPlugins(dir string) error {
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, testPlugins...)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	return nil
}

// pluginDir returns a fresh plugin directory holding the named binaries
// (symlinks to the built ones).
func pluginDir(t testing.TB, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Symlink(filepath.Join(binDir, n), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// recorder is a slog handler that keeps every record, so tests can assert
// on what the host logged, and echoes warnings and errors to the test log.
type recorder struct {
	mu      *sync.Mutex
	records *[]slog.Record
	attrs   []slog.Attr
	t       testing.TB
}

func newRecorder(t testing.TB) *recorder {
	return &recorder{mu: &sync.Mutex{}, records: &[]slog.Record{}, t: t}
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	rec = rec.Clone()
	rec.AddAttrs(r.attrs...)
	r.mu.Lock()
	*r.records = append(*r.records, rec)
	r.mu.Unlock()
	return nil
}

func (r *recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *r
	n.attrs = append(slices.Clone(r.attrs), attrs...)
	return &n
}

func (r *recorder) WithGroup(string) slog.Handler { return r }

// find returns the first record whose message contains msg and whose
// attributes include every key=value of want.
func (r *recorder) find(msg string, want map[string]string) (slog.Record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range *r.records {
		if !strings.Contains(rec.Message, msg) {
			continue
		}
		got := map[string]string{}
		rec.Attrs(func(a slog.Attr) bool {
			got[a.Key] = a.Value.String()
			return true
		})
		ok := true
		for k, v := range want {
			if got[k] != v {
				ok = false
			}
		}
		if ok {
			return rec, true
		}
	}
	return slog.Record{}, false
}

func (r *recorder) dump() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, rec := range *r.records {
		fmt.Fprintf(&b, "%s %s", rec.Level, rec.Message)
		rec.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
			return true
		})
		b.WriteByte('\n')
	}
	return b.String()
}
