package docindex_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

// gate is an embedder whose calls wait until it opens; it counts the calls waiting at once.
type gate struct {
	embedder.Embedder
	mu      sync.Mutex
	waiting int
	open    chan struct{}
}

func (g *gate) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	g.mu.Lock()
	g.waiting++
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Embedder.Embed(ctx, model, texts)
}

func (g *gate) calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}

// With one worker, files whose chunks wait on the embedding provider do not hold it: the next
// files start and their chunks wait alongside. A file with over 256 KB of text keeps its
// worker while it waits, so the jobs beyond the workers stay small.
func TestJobsWaitingOnTheEmbedderFreeTheWorker(t *testing.T) {
	for _, big := range []bool{false, true} {
		g := &gate{Embedder: hash.New(), open: make(chan struct{})}
		// No batching: each job's call reaches the gate on its own.
		s := docindextest.NewServer(t, docindex.WithEmbedders(g))
		s.StartWorkers(nil, worker.WithWorkers(1), worker.WithMaxWaiting(8))
		tok := s.Token(docindextest.User{Email: "w@example.com", Name: "W"})
		r := s.Do("POST", "/api/collections", tok, map[string]any{"name": "wait"})
		if r.Status != http.StatusCreated {
			t.Fatalf("create collection: %d %s", r.Status, r.Body)
		}
		coll := r.Map(t)["id"].(string)
		upload := func(name, text string) {
			r := s.Upload(tok, docindextest.FileUpload{CollectionID: coll, Name: name, ContentType: "text/plain", Body: bytes.NewReader([]byte(text))})
			if r.Status != http.StatusCreated {
				t.Fatalf("upload %s: %d %s", name, r.Status, r.Body)
			}
		}
		if big {
			upload("big.txt", strings.Repeat("A large file keeps its worker. ", 40000)) // 1.2 MB
		}
		for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
			upload(name, "A small file about "+name+".")
		}
		want := 3
		if big {
			want = 1
		}
		deadline := time.Now().Add(30 * time.Second)
		for g.calls() < want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // time for more calls that must not come
		if n := g.calls(); n != want {
			t.Errorf("big=%v: %d jobs waiting on the embedder at once, want %d", big, n, want)
		}
		close(g.open)
		s.WaitIdle(60 * time.Second)
		r = s.Do("GET", "/files?collectionId="+coll+"&status=indexed", tok, nil)
		if r.Status != http.StatusOK || strings.Count(string(r.Body), `"status":"indexed"`) != 3+boolInt(big) {
			t.Errorf("big=%v: indexed files: %d %s", big, r.Status, r.Body)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
