package vectorstore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pgvector/pgvector-go"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/vectorstore"
)

const (
	benchDims      = 256
	benchSeed      = 100_000 // chunks already in the collection
	benchSeedFile  = 200     // chunks per file of the seed
	benchFiles     = 50      // files per measured batch
	benchFileSize  = 40      // chunks per file
	benchTextWords = 150     // about 1,000 characters, a chunk of some 250 tokens
	benchSeedWords = 30      // shorter seed texts: their tsvectors are most of the seed's cost
)

// BenchmarkChunkWrite measures Replace into a collection that already holds 100,000 chunks of
// 256 dimensions, against COPY of the same rows into an unindexed twin table, in the same
// iteration (alternating which goes first). One iteration writes a batch of 50 files of 40
// chunks: Replace once per file (as the pipeline does, one transaction each), and the baseline as
// one COPY of all 2,000 rows in one transaction, the fastest way PostgreSQL takes rows. The twin
// is LIKE the delta table with its defaults and generated column (so the server computes the
// same tsvectors) but no index at all: the ratio is the price of the primary key, file_id and GIN
// indexes of the delta table, the deletes, the merge bookkeeping and the per-file transactions.
// Metrics:
//
//	replace_chunks/s  chunks per second through Replace, into the delta table (deferred indexing)
//	copy_chunks/s     chunks per second through the baseline COPY
//	ratio             replace_chunks/s over copy_chunks/s (the target is at least 0.3)
//	merge_chunks/s    chunks per second that Merge then moves into the HNSW-indexed table, after
//	                  the timed loop: the graph insert that Replace no longer waits for
//	ratio_merged      chunks over the time of Replace plus Merge, against COPY: the sustained
//	                  rate when the merge must keep up with the writes on the same machine
//	ratio_direct      the ratio of one more batch through a Store with deferral off (Replace
//	                  inserting into the HNSW index itself, as before deferred indexing)
//
// The seed is loaded with COPY before the indexes exist and they are then built in bulk; the
// HNSW build takes most of the benchmark's time.
func BenchmarkChunkWrite(b *testing.B) {
	ctx := context.Background()
	db := docindextest.NewDB(b)
	s := vectorstore.New(db, vectorstore.WithMaxPending(1<<30)) // every batch deferred
	direct := vectorstore.New(db, vectorstore.WithMaxPending(0))
	col := uuid.New()
	gen := newChunkGen(1)

	setup := time.Now()
	seedCollection(b, db, direct, col, gen)
	twin := `"docindex"."chunks_twin"`
	// LIKE the delta table, where every row is first written: its tsv is the generated column.
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`CREATE TABLE %s (LIKE docindex.%s INCLUDING DEFAULTS INCLUDING GENERATED)`,
		twin, vectorstore.DeltaTable(col))); err != nil {
		b.Fatal(err)
	}
	b.Logf("setup: %s", time.Since(setup).Round(time.Second))

	var replaceTime, copyTime time.Duration
	written, iter := 0, 0
	for b.Loop() {
		r, c := writeBatch(b, db, s, col, gen, iter%2 == 0)
		replaceTime += r
		copyTime += c
		iter++
		written += benchFiles * benchFileSize
	}
	rps, cps := float64(written)/replaceTime.Seconds(), float64(written)/copyTime.Seconds()
	b.ReportMetric(rps, "replace_chunks/s")
	b.ReportMetric(cps, "copy_chunks/s")
	b.ReportMetric(rps/cps, "ratio")

	// Outside the timed loop: the merge of what the loop wrote, then one batch the old way.
	start := time.Now()
	for {
		n, err := s.Merge(ctx, 100)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	mergeTime := time.Since(start)
	if left, err := s.Pending(ctx, col); err != nil || left != 0 {
		b.Fatalf("%d chunks still pending after the merge (%v)", left, err)
	}
	b.ReportMetric(float64(written)/mergeTime.Seconds(), "merge_chunks/s")
	b.ReportMetric(float64(written)/(replaceTime+mergeTime).Seconds()/cps, "ratio_merged")
	r, c := writeBatch(b, db, direct, col, gen, true)
	b.ReportMetric(float64(benchFiles*benchFileSize)/r.Seconds()/(float64(benchFiles*benchFileSize)/c.Seconds()), "ratio_direct")
}

// writeBatch writes one batch of files through Replace and the same rows through the baseline
// COPY, in the order given, and returns the time of each.
func writeBatch(b *testing.B, db *bun.DB, s *vectorstore.Store, col uuid.UUID, gen *chunkGen, replaceFirst bool) (replace, baseline time.Duration) {
	ctx := context.Background()
	files := make([][]vectorstore.Chunk, benchFiles)
	ids := make([]uuid.UUID, benchFiles)
	for i := range files {
		ids[i] = uuid.New()
		files[i] = gen.chunks(benchFileSize, benchTextWords)
	}
	runReplace := func() {
		start := time.Now()
		for i, f := range files {
			if err := s.Replace(ctx, col, ids[i], f); err != nil {
				b.Fatal(err)
			}
		}
		replace = time.Since(start)
	}
	runCopy := func() {
		start := time.Now()
		copyRows(b, db, ids, files)
		baseline = time.Since(start)
	}
	if replaceFirst {
		runReplace()
		runCopy()
	} else {
		runCopy()
		runReplace()
	}
	return replace, baseline
}

// seedCollection provisions the collection and fills it with benchSeed chunks, written through
// Replace while the table has no index but its primary key; Provision then builds the missing
// indexes in bulk, far faster than 100,000 inserts into them would.
func seedCollection(b *testing.B, db *bun.DB, s *vectorstore.Store, col uuid.UUID, gen *chunkGen) {
	ctx := context.Background()
	if err := s.Provision(ctx, db, col, benchDims, "english"); err != nil {
		b.Fatal(err)
	}
	for _, suffix := range []string{"_embedding_idx", "_tsv_idx", "_file_idx"} {
		if _, err := db.ExecContext(ctx, "DROP INDEX ?", bun.Ident("docindex."+vectorstore.Table(col)+suffix)); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	for range benchSeed / benchSeedFile {
		if err := s.Replace(ctx, col, uuid.New(), gen.chunks(benchSeedFile, benchSeedWords)); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("seed: %d chunks written in %s", benchSeed, time.Since(start).Round(time.Second))
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	// Room for the HNSW graph in memory: a build that spills is many times slower.
	if _, err := conn.ExecContext(ctx, "SET maintenance_work_mem = '1GB'"); err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	if err := s.Provision(ctx, conn, col, benchDims, "english"); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "VACUUM ANALYZE docindex."+vectorstore.Table(col)); err != nil {
		b.Fatal(err)
	}
	b.Logf("seed: indexes built in %s", time.Since(start).Round(time.Second))
}

// copyRows writes the files' chunks into the twin with one COPY in one transaction.
func copyRows(b *testing.B, db *bun.DB, ids []uuid.UUID, files [][]vectorstore.Chunk) {
	ctx := context.Background()
	var rows [][]any
	for i, f := range files {
		for _, c := range f {
			meta := fmt.Sprintf(`{"heading": %q}`, c.Metadata["heading"])
			rows = append(rows, []any{ids[i], int32(c.Ordinal), c.Text, []int32{int32(c.Pages[0])}, []byte(meta), pgvector.NewVector(c.Embedding)})
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		// The vector type is not registered with pgx here either: send pgvector's binary format.
		for _, r := range rows {
			buf, err := r[5].(pgvector.Vector).EncodeBinary(nil)
			if err != nil {
				return err
			}
			r[5] = buf
		}
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) //nolint:errcheck
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"docindex", "chunks_twin"},
			[]string{"file_id", "ordinal", "text", "pages", "metadata", "embedding"}, pgx.CopyFromRows(rows)); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// chunkGen makes deterministic chunks. Vectors are not uniform noise, which no embedding model
// produces and which is the worst case for HNSW: each is a random mix of 32 latent directions
// (topics) projected into 256 dimensions plus a little noise, then normalized, giving the
// low intrinsic dimension of real text embeddings. Texts are words from a vocabulary of 2,000
// made-up words drawn with a Zipf distribution, as words in text are.
type chunkGen struct {
	r      *rand.Rand
	zipf   *rand.Zipf
	basis  [][]float32
	vocab  []string
	serial int
}

func newChunkGen(seed uint64) *chunkGen {
	r := rand.New(rand.NewPCG(seed, 2))
	g := &chunkGen{r: r, zipf: rand.NewZipf(r, 1.1, 1, 1999)}
	for range 32 {
		v := make([]float32, benchDims)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		g.basis = append(g.basis, v)
	}
	syll := []string{"ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "de", "pa", "go", "zu", "ber", "tin", "gal", "mor"}
	for range 2000 {
		var w strings.Builder
		for range 2 + r.IntN(3) {
			w.WriteString(syll[r.IntN(len(syll))])
		}
		g.vocab = append(g.vocab, w.String())
	}
	return g
}

func (g *chunkGen) vector() []float32 {
	v := make([]float32, benchDims)
	for _, b := range g.basis {
		w := float32(g.r.NormFloat64())
		for j := range v {
			v[j] += w * b[j]
		}
	}
	var n float64
	for j := range v {
		v[j] += float32(g.r.NormFloat64()) * 0.5
		n += float64(v[j]) * float64(v[j])
	}
	for j := range v {
		v[j] = float32(float64(v[j]) / math.Sqrt(n))
	}
	return v
}

func (g *chunkGen) chunks(n, words int) []vectorstore.Chunk {
	out := make([]vectorstore.Chunk, n)
	for i := range out {
		var t strings.Builder
		for w := range words {
			if w > 0 {
				t.WriteByte(' ')
			}
			t.WriteString(g.vocab[g.zipf.Uint64()])
		}
		g.serial++
		out[i] = vectorstore.Chunk{
			Ordinal:   i,
			Text:      t.String(),
			Pages:     []int{1 + i/4},
			Metadata:  map[string]any{"heading": fmt.Sprint("Section ", g.serial%97)},
			Embedding: g.vector(),
		}
	}
	return out
}
