package docindex_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/chunk"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

// benchDocs makes n documents of about size bytes of English-like text, deterministically.
func benchDocs(n, size int) []string {
	words := strings.Fields(`the index queue worker file page chunk vector search collection share owner
		viewer admin table dataset model token embed text language retrieval document sentence paragraph
		heading section database postgres storage upload download sync source connector plugin process
		quick brown fox jumps over lazy dog alpha beta gamma delta river mountain ocean forest city`)
	r := rand.New(rand.NewPCG(1, 2))
	docs := make([]string, n)
	for i := range docs {
		var b strings.Builder
		fmt.Fprintf(&b, "# Document %d\n\n", i)
		for b.Len() < size {
			for w := 0; w < 8+r.IntN(12); w++ {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[r.IntN(len(words))])
			}
			b.WriteString(". ")
			if r.IntN(6) == 0 {
				b.WriteString("\n\n")
			}
		}
		docs[i] = b.String()
	}
	return docs
}

// BenchmarkEndToEnd: 200 files of about 20 KB from upload to indexed (2 workers), against the
// embedder called directly on the same chunks at its best batch size, in the same run.
func BenchmarkEndToEnd(b *testing.B) {
	ctx := context.Background()
	docs := benchDocs(200, 20<<10)
	emb := hash.New()
	model := hash.ModelID(hash.DefaultDimensions)

	// The ceiling: the embedder alone on the chunks the pipeline will make.
	var texts []string
	for _, d := range docs {
		cs, err := chunk.Split(ctx, []chunk.Section{{Text: d}}, chunk.Options{Size: docindex.DefaultChunkSize, Overlap: docindex.DefaultChunkOverlap})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range cs {
			texts = append(texts, c.Text)
		}
	}
	best := time.Duration(1<<63 - 1)
	bestBatch := 0
	for _, batch := range []int{1, 16, 64, 256} {
		start := time.Now()
		for i := 0; i < len(texts); i += batch {
			if _, err := emb.Embed(ctx, model, texts[i:min(i+batch, len(texts))]); err != nil {
				b.Fatal(err)
			}
		}
		if d := time.Since(start); d < best {
			best, bestBatch = d, batch
		}
	}
	ceiling := float64(len(texts)) / best.Seconds()

	var e2e float64
	for range b.N {
		svc := newService(b, docindextest.URL(b), b.TempDir(), emb)
		p := ownerPrincipal(b, svc)
		c, err := svc.CreateCollection(ctx, p, docindex.CollectionInput{Name: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		pool := worker.New(svc.Queue(), svc, worker.WithWorkers(2), worker.WithPoll(50*time.Millisecond))
		done := make(chan struct{})
		go func() { _ = pool.Run(runCtx); close(done) }()
		start := time.Now()
		for i, d := range docs {
			if _, err := svc.UploadFile(ctx, p, docindex.Upload{CollectionID: c.ID, Name: fmt.Sprintf("doc%03d.md", i),
				Body: strings.NewReader(d)}); err != nil {
				b.Fatal(err)
			}
		}
		for {
			var pending int
			if err := svc.DB().QueryRowContext(ctx, "SELECT count(*) FROM docindex.files WHERE status = 'pending'").Scan(&pending); err != nil {
				b.Fatal(err)
			}
			if pending == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		elapsed := time.Since(start)
		stop()
		<-done
		var indexed, chunks int
		if err := svc.DB().QueryRowContext(ctx, "SELECT count(*) FROM docindex.files WHERE status = 'indexed'").Scan(&indexed); err != nil {
			b.Fatal(err)
		}
		if indexed != len(docs) {
			b.Fatalf("%d of %d files indexed", indexed, len(docs))
		}
		if err := svc.DB().QueryRowContext(ctx, "SELECT count(*) FROM docindex.chunks_"+strings.ReplaceAll(c.ID.String(), "-", "")).Scan(&chunks); err != nil {
			b.Fatal(err)
		}
		e2e = float64(chunks) / elapsed.Seconds()
		b.ReportMetric(float64(len(docs))/elapsed.Seconds(), "files/s")
	}
	b.ReportMetric(e2e, "e2e-chunks/s")
	b.ReportMetric(ceiling, "embedder-chunks/s")
	b.ReportMetric(float64(bestBatch), "best-batch")
	b.ReportMetric(e2e/ceiling, "ratio")
}
