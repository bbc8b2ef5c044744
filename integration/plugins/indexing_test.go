package plugins_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/pluginhost"
	"github.com/docindex/docindex/docindex/worker"
)

// logBuffer is a slog handler target the test can read.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie (state Z) is dead, only not yet reaped.
	fields := strings.Fields(string(data))
	return len(fields) > 2 && fields[2] != "Z"
}

func embedderPID(t *testing.T, h *pluginhost.Host) int {
	t.Helper()
	for _, p := range h.Plugins() {
		if p.Name == "hash" && p.PID > 0 {
			return p.PID
		}
	}
	t.Fatalf("no running hash plugin: %+v", h.Plugins())
	return 0
}

// The embedder plugin is killed while files are being indexed: the host logs it and restarts the
// plugin, every job completes, and closing the host leaves no plugin process behind.
func TestEmbedderKilledDuringIndexing(t *testing.T) {
	ctx := context.Background()
	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "docindex-embedder-hash"), "./cmd/docindex-embedder-hash")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build plugin: %v\n%s", err, out)
	}
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	host := pluginhost.New(pluginhost.WithDir(dir), pluginhost.WithLogger(log))
	if err := host.Start(ctx); err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			host.Close()
		}
	})
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc, err := docindex.New(docindextest.NewDB(t), docindex.WithEmbedders(host), docindex.WithBlobStore(blobs), docindex.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.EnsureUser(ctx, "owner@example.com", "", false)
	if err != nil {
		t.Fatal(err)
	}
	p := &access.Principal{UserID: u.ID, Email: u.Email}
	c, err := svc.CreateCollection(ctx, p, docindex.CollectionInput{Name: "plugged"})
	if err != nil {
		t.Fatal(err)
	}
	if c.EmbeddingModel != "hash-256" {
		t.Fatalf("collection model %q, want the plugin's hash-256", c.EmbeddingModel)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	pool := worker.New(svc.Queue(), svc, worker.WithWorkers(2), worker.WithPoll(50*time.Millisecond))
	go func() { _ = pool.Run(runCtx) }()

	first := embedderPID(t, host)
	const n = 30
	for i := range n {
		text := fmt.Sprintf("# Note %d\n\n%s", i, strings.Repeat(fmt.Sprintf("Lighthouse %d keeps the lamp lit all night. ", i), 200))
		if _, err := svc.UploadFile(ctx, p, docindex.Upload{CollectionID: c.ID, Name: fmt.Sprintf("n%02d.md", i), Body: strings.NewReader(text)}); err != nil {
			t.Fatal(err)
		}
		if i == n/3 {
			// Indexing is under way: kill the embedder in the middle of it.
			if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		var indexed, failed int
		if err := svc.DB().QueryRowContext(ctx, "SELECT count(*) FILTER (WHERE status = 'indexed'), count(*) FILTER (WHERE status = 'failed') FROM docindex.files").Scan(&indexed, &failed); err != nil {
			t.Fatal(err)
		}
		if failed > 0 {
			t.Fatalf("%d files failed after the plugin was killed\n%s", failed, logs.String())
		}
		if indexed == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d files indexed\n%s", indexed, n, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	second := embedderPID(t, host)
	if second == first || alive(first) {
		t.Fatalf("plugin not restarted: pid %d -> %d", first, second)
	}
	var restarts int
	for _, pi := range host.Plugins() {
		if pi.Name == "hash" {
			restarts = pi.Restarts
		}
	}
	exited := false
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "plugin process exited; restarting it") && strings.Contains(line, fmt.Sprintf("pid=%d", first)) {
			exited = true
		}
	}
	if restarts < 1 || !exited {
		t.Fatalf("restarts %d; logs:\n%s", restarts, logs.String())
	}
	res, err := svc.Search(ctx, p, c.ID, docindex.SearchInput{Query: "Lighthouse 27 keeps the lamp", Mode: "fulltext"})
	if err != nil || len(res) == 0 {
		t.Fatalf("search after restart: %v %v", res, err)
	}

	stop()
	host.Close()
	closed = true
	deadline = time.Now().Add(10 * time.Second)
	for alive(second) {
		if time.Now().After(deadline) {
			t.Fatalf("plugin process %d survived the host's close", second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
