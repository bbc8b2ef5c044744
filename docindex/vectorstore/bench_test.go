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
)

// BenchmarkChunkWrite measures Replace into a collection that already holds 100,000 chunks of
// 256 dimensions, against COPY of the same rows into an unindexed twin table, in the same
// iteration (alternating which goes first). One iteration writes a batch of 50 files of 40
// chunks: Replace once per file (as the pipeline does, one transaction each), and the baseline as
// one COPY of all 2,000 rows in one transaction, the fastest way PostgreSQL takes rows. The twin
// is LIKE the chunk table with its defaults and generated column (so the server computes the
// same tsvectors) but no index at all: the ratio is the price of the primary key, file_id, GIN
// and HNSW indexes, the delete and the per-file transactions. Metrics:
//
//	replace_chunks/s   chunks per second through Replace
//	copy_chunks/s      chunks per second through the baseline COPY
//	ratio              replace_chunks/s over copy_chunks/s (the target is at least 0.3)
//
// The seed is loaded with COPY before the HNSW index exists and the index is then built in bulk,
// which takes most of the benchmark's setup time.
func BenchmarkChunkWrite(b *testing.B) {
	ctx := context.Background()
	db := docindextest.NewDB(b)
	s := vectorstore.New(db)
	col := uuid.New()
	gen := newChunkGen(1)

	setup := time.Now()
	seedCollection(b, db, s, col, gen)
	twin := `"docindex"."chunks_twin"`
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`CREATE TABLE %s (LIKE docindex.%s INCLUDING DEFAULTS INCLUDING GENERATED)`,
		twin, vectorstore.Table(col))); err != nil {
		b.Fatal(err)
	}
	b.Logf("setup (seed of %d chunks, HNSW build): %s", benchSeed, time.Since(setup).Round(time.Second))

	var replaceTime, copyTime time.Duration
	written, iter := 0, 0
	for b.Loop() {
		files := make([][]vectorstore.Chunk, benchFiles)
		ids := make([]uuid.UUID, benchFiles)
		for i := range files {
			ids[i] = uuid.New()
			files[i] = gen.chunks(benchFileSize)
		}
		runReplace := func() {
			start := time.Now()
			for i, f := range files {
				if err := s.Replace(ctx, col, ids[i], f); err != nil {
					b.Fatal(err)
				}
			}
			replaceTime += time.Since(start)
		}
		runCopy := func() {
			start := time.Now()
			copyRows(b, db, ids, files)
			copyTime += time.Since(start)
		}
		if iter%2 == 0 {
			runReplace()
			runCopy()
		} else {
			runCopy()
			runReplace()
		}
		iter++
		written += benchFiles * benchFileSize
	}
	rps, cps := float64(written)/replaceTime.Seconds(), float64(written)/copyTime.Seconds()
	b.ReportMetric(rps, "replace_chunks/s")
	b.ReportMetric(cps, "copy_chunks/s")
	b.ReportMetric(rps/cps, "ratio")
}

// seedCollection provisions the collection and fills it with benchSeed chunks: written through
// Replace while the HNSW index is absent, which Provision then builds in bulk.
func seedCollection(b *testing.B, db *bun.DB, s *vectorstore.Store, col uuid.UUID, gen *chunkGen) {
	ctx := context.Background()
	if err := s.Provision(ctx, db, col, benchDims, "english"); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "DROP INDEX ?", bun.Ident("docindex."+vectorstore.Table(col)+"_embedding_idx")); err != nil {
		b.Fatal(err)
	}
	for range benchSeed / benchSeedFile {
		if err := s.Replace(ctx, col, uuid.New(), gen.chunks(benchSeedFile)); err != nil {
			b.Fatal(err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	// Room for the graph in memory: a build that spills is many times slower.
	if _, err := conn.ExecContext(ctx, "SET maintenance_work_mem = '1GB'"); err != nil {
		b.Fatal(err)
	}
	if err := s.Provision(ctx, conn, col, benchDims, "english"); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "VACUUM ANALYZE docindex."+vectorstore.Table(col)); err != nil {
		b.Fatal(err)
	}
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
// low intrinsic dimension of real text embeddings. Texts are 150 words from a vocabulary of
// 2,000 made-up words drawn with a Zipf distribution, as words in text are.
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

func (g *chunkGen) chunks(n int) []vectorstore.Chunk {
	out := make([]vectorstore.Chunk, n)
	for i := range out {
		var t strings.Builder
		for w := range benchTextWords {
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
