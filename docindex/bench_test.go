package docindex_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/chunk"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/embedbatch"
	"github.com/docindex/docindex/docindex/vectorstore"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
	"github.com/docindex/docindex/plugins/embedders/openai"
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

// The simulated embedding server of BenchmarkEndToEnd: each request costs a fixed latency plus a
// small cost per text, the shape of a GPU embedding server on a near network (20 ms), or of a
// hosted API (250 ms, the low end of the 200-800 ms a batch takes at hosted providers).
const (
	serverLatency = 20 * time.Millisecond
	hostedLatency = 250 * time.Millisecond
	serverPerText = 50 * time.Microsecond
	serverModel   = "bench-embed-256"
	serverDims    = 256
)

// embeddingServer follows OpenAI's published POST /v1/embeddings shapes (request body, list of
// embedding objects with their index, usage, error object; vectors as floats or base64). Its
// vectors are those of the hash embedder, so they are deterministic and meaningful to search,
// computed before the run for the texts it will be sent: a provider computes on its own
// machines, and computing here would take the cores the pipeline runs on. It counts requests
// and texts.
type embeddingServer struct {
	*httptest.Server
	latency       time.Duration
	vectors       embedder.Embedder
	ready         map[string][]float32
	requests, txt atomic.Int64
}

func newEmbeddingServer(b *testing.B, latency time.Duration, texts []string) *embeddingServer {
	s := &embeddingServer{latency: latency, vectors: hash.New(hash.WithDimensions(serverDims)), ready: map[string][]float32{}}
	vecs, err := s.vectors.Embed(context.Background(), hash.ModelID(serverDims), texts)
	if err != nil {
		b.Fatal(err)
	}
	for i, t := range texts {
		s.ready[t] = vecs[i]
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	b.Cleanup(s.Close)
	return s
}

func (s *embeddingServer) fail(w http.ResponseWriter, status int, msg, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

func (s *embeddingServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		s.fail(w, http.StatusNotFound, "Unknown request URL: "+r.Method+" "+r.URL.Path, "invalid_request_error")
		return
	}
	if r.Header.Get("Authorization") != "Bearer sk-bench" {
		s.fail(w, http.StatusUnauthorized, "Incorrect API key provided.", "invalid_request_error")
		return
	}
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		s.fail(w, http.StatusBadRequest, "We could not parse the JSON body of your request.", "invalid_request_error")
		return
	}
	var input []string
	if err := json.Unmarshal(req.Input, &input); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			s.fail(w, http.StatusBadRequest, "'input' must be a string or an array of strings", "invalid_request_error")
			return
		}
		input = []string{one}
	}
	if req.Model != serverModel {
		s.fail(w, http.StatusNotFound, "The model `"+req.Model+"` does not exist", "invalid_request_error")
		return
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64" {
		s.fail(w, http.StatusBadRequest, fmt.Sprintf("%q is not one of ['float', 'base64'] - 'encoding_format'", req.EncodingFormat), "invalid_request_error")
		return
	}
	time.Sleep(s.latency + time.Duration(len(input))*serverPerText)
	vecs := make([][]float32, len(input))
	var todo []int // texts not computed before the run
	for i, t := range input {
		if vecs[i] = s.ready[t]; vecs[i] == nil {
			todo = append(todo, i)
		}
	}
	if len(todo) > 0 {
		rest := make([]string, len(todo))
		for j, i := range todo {
			rest[j] = input[i]
		}
		more, err := s.vectors.Embed(r.Context(), hash.ModelID(serverDims), rest)
		if err != nil {
			s.fail(w, http.StatusInternalServerError, err.Error(), "server_error")
			return
		}
		for j, i := range todo {
			vecs[i] = more[j]
		}
	}
	s.requests.Add(1)
	s.txt.Add(int64(len(input)))
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	data := make([]item, len(vecs))
	tokens := 0
	for i, v := range vecs {
		data[i] = item{Object: "embedding", Index: i, Embedding: v}
		if req.EncodingFormat == "base64" {
			// The vector's float32s, little-endian.
			raw := make([]byte, 4*len(v))
			for j, f := range v {
				binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(f))
			}
			data[i].Embedding = base64.StdEncoding.EncodeToString(raw)
		}
		tokens += len(input[i]) / 4
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// ceiling is the embedder alone on texts at the best of a few batch sizes, in texts/s. Small
// batches are timed on a prefix (64 calls' worth): against a per-call latency their rate is far
// below the larger ones, and timing them on every text would take most of the benchmark.
func ceiling(b *testing.B, emb embedder.Embedder, model string, texts []string, batches []int) (rate float64, best int) {
	ctx := context.Background()
	for _, batch := range batches {
		n := min(len(texts), 64*batch)
		start := time.Now()
		for i := 0; i < n; i += batch {
			if _, err := emb.Embed(ctx, model, texts[i:min(i+batch, n)]); err != nil {
				b.Fatal(err)
			}
		}
		if r := float64(n) / time.Since(start).Seconds(); r > rate {
			rate, best = r, batch
		}
	}
	return rate, best
}

// uploaders is how many clients upload at once.
const uploaders = 8

// indexAll uploads docs into a new collection of a new service and waits until all are indexed;
// it returns the elapsed time, the time until the index merge had also moved every chunk into
// the HNSW index, and the chunks written. The merge runs during indexing, as in the server.
func indexAll(b *testing.B, emb embedder.Embedder, model string, workers int, docs []string, opts ...docindex.Option) (indexed, merged time.Duration, chunks int) {
	ctx := context.Background()
	db, err := docindex.OpenDB(ctx, docindextest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	blobs, err := blob.NewDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	svc, err := docindex.New(db, append([]docindex.Option{docindex.WithEmbedders(emb), docindex.WithBlobStore(blobs),
		docindex.WithLogger(testLogger()), docindex.WithImageDescriber(nil)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	p := ownerPrincipal(b, svc)
	c, err := svc.CreateCollection(ctx, p, docindex.CollectionInput{Name: "bench", EmbeddingModel: model})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	pool := worker.New(svc.Queue(), svc, worker.WithWorkers(workers), worker.WithPoll(50*time.Millisecond))
	done := make(chan struct{})
	go func() { _ = pool.Run(runCtx); close(done) }()
	mergeDone := make(chan struct{})
	go func() { svc.RunIndexMerge(runCtx); close(mergeDone) }()
	defer func() { stop(); <-done; <-mergeDone }()
	start := time.Now()
	// Clients upload in parallel, as several users or a sync would.
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, uploaders)
	for range uploaders {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(docs); i = int(next.Add(1)) - 1 {
				if _, err := svc.UploadFile(ctx, p, docindex.Upload{CollectionID: c.ID, Name: fmt.Sprintf("doc%03d.md", i),
					Body: strings.NewReader(docs[i])}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.Logf("uploads took %v", time.Since(start))
	for {
		var pending int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM docindex.files WHERE status = 'pending'").Scan(&pending); err != nil {
			b.Fatal(err)
		}
		if pending == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	var ready int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM docindex.files WHERE status = 'indexed'").Scan(&ready); err != nil {
		b.Fatal(err)
	}
	if ready != len(docs) {
		var why string
		_ = db.QueryRowContext(ctx, "SELECT coalesce(max(warning), '') FROM docindex.files WHERE status <> 'indexed'").Scan(&why)
		b.Fatalf("%d of %d files indexed (%s)", ready, len(docs), why)
	}
	for {
		var pending int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM docindex.chunk_pending").Scan(&pending); err != nil {
			b.Fatal(err)
		}
		if pending == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	merged = time.Since(start)
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+vectorstore.Relation(c.ID)+" k").Scan(&chunks); err != nil {
		b.Fatal(err)
	}
	return elapsed, merged, chunks
}

// BenchmarkEndToEnd: 200 files of about 20 KB from upload to indexed, against each embedder called
// directly on the same chunk texts at its best batch size (1, 16, 64 or 256), in the same run:
//
//   - hash: the in-process hash embedder (microseconds per text: the pipeline's own cost shows);
//   - openai: the openai provider against an OpenAI-compatible server on loopback that costs
//     20 ms per request + 0.05 ms per text (256-dimensional vectors), a GPU server next door;
//   - openai-hosted: the same server at 250 ms per request, a hosted API. Against a fixed
//     latency per request the largest batch is the best, so its ceiling is timed at 64 and 256
//     only (smaller batches would take a minute to time and lose anyway);
//   - openai-hosted-default: the same with the server's default of 2 workers.
//
// The service runs with WithEmbedBatching (batch 256, linger 5 ms, one call in flight per model)
// and 16 workers (64 against the hosted latency), so that the waiting jobs' chunks fill the
// batches; 8 clients upload at once.
// texts/request is the mean size of the server's requests during indexing.
func BenchmarkEndToEnd(b *testing.B) {
	const workers = 16
	// A job waiting for its chunks' vectors frees its worker (worker.Wait) for the next file, up
	// to 32 jobs per worker beyond the workers; the chunks in flight are about the jobs running x
	// chunks per file (8 here), and full batches of 256 against 250 ms a request take a few
	// dozen jobs at once.
	const hostedWorkers = 64
	docs := benchDocs(200, 20<<10)
	var texts []string
	for _, d := range docs {
		cs, err := chunk.Split(context.Background(), []chunk.Section{{Text: d}}, chunk.Options{Size: docindex.DefaultChunkSize, Overlap: docindex.DefaultChunkOverlap})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range cs {
			texts = append(texts, c.Text)
		}
	}
	batching := docindex.WithEmbedBatching(embedbatch.WithMaxBatch(256), embedbatch.WithLinger(5*time.Millisecond))

	run := func(b *testing.B, emb embedder.Embedder, model string, workers int, batches []int, calls func() (requests, texts int64)) {
		rate, best := ceiling(b, emb, model, texts, batches)
		var elapsed, merged time.Duration
		var chunks int
		var r0, t0 int64
		for range b.N {
			if calls != nil {
				r0, t0 = calls()
			}
			elapsed, merged, chunks = indexAll(b, emb, model, workers, docs, batching)
		}
		e2e := float64(chunks) / elapsed.Seconds()
		b.ReportMetric(float64(len(docs))/elapsed.Seconds(), "files/s")
		b.ReportMetric(e2e, "chunks/s")
		b.ReportMetric(rate, "ceiling-chunks/s")
		b.ReportMetric(float64(best), "best-batch")
		b.ReportMetric(e2e/rate, "ratio")
		// Indexed files are searchable; this ratio also waits for the HNSW merge to finish.
		b.ReportMetric(float64(chunks)/merged.Seconds()/rate, "ratio-merged")
		if calls != nil {
			r1, t1 := calls()
			b.ReportMetric(float64(t1-t0)/float64(r1-r0), "texts/request")
		}
	}
	all := []int{1, 16, 64, 256}
	b.Run("hash", func(b *testing.B) {
		run(b, hash.New(), hash.ModelID(hash.DefaultDimensions), workers, all, nil)
	})
	for _, server := range []struct {
		name    string
		latency time.Duration
		workers int
		batches []int
	}{{"openai", serverLatency, workers, all}, {"openai-hosted", hostedLatency, hostedWorkers, []int{64, 256}},
		{"openai-hosted-default", hostedLatency, 2, []int{64, 256}}} {
		b.Run(server.name, func(b *testing.B) {
			srv := newEmbeddingServer(b, server.latency, texts)
			emb := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("sk-bench"), openai.WithMaxBatch(256),
				openai.WithModels(openai.Model{ID: serverModel, Dimensions: serverDims}))
			run(b, emb, serverModel, server.workers, server.batches, func() (int64, int64) { return srv.requests.Load(), srv.txt.Load() })
		})
	}
}
