package vectorstore_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/vectorstore"
)

// provisioned returns a store over a fresh database and a collection whose table exists.
func provisioned(t *testing.T, dims int, language string, opts ...vectorstore.Option) (*vectorstore.Store, *bun.DB, uuid.UUID) {
	t.Helper()
	db := docindextest.NewDB(t)
	s := vectorstore.New(db, opts...)
	col := uuid.New()
	if err := s.Provision(context.Background(), db, col, dims, language); err != nil {
		t.Fatal(err)
	}
	return s, db, col
}

// unit is the d-dimensional basis vector i.
func unit(d, i int) []float32 {
	v := make([]float32, d)
	v[i] = 1
	return v
}

func chunks(n int, prefix string) []vectorstore.Chunk {
	out := make([]vectorstore.Chunk, n)
	for i := range out {
		out[i] = vectorstore.Chunk{
			Ordinal:   i,
			Text:      fmt.Sprintf("%s chunk number %d", prefix, i),
			Pages:     []int{i + 1},
			Metadata:  map[string]any{"n": i},
			Embedding: unit(4, i%4),
		}
	}
	return out
}

func count(t *testing.T, s *vectorstore.Store, col uuid.UUID, file *uuid.UUID) int {
	t.Helper()
	var f uuid.NullUUID
	if file != nil {
		f = uuid.NullUUID{UUID: *file, Valid: true}
	}
	n, err := s.Count(context.Background(), col, f)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTable(t *testing.T) {
	t.Parallel()
	id := uuid.MustParse("0190f1a2-b3c4-7d5e-8f60-718293a4b5c6")
	if got, want := vectorstore.Table(id), "chunks_0190f1a2b3c47d5e8f60718293a4b5c6"; got != want {
		t.Fatalf("Table = %q, want %q", got, want)
	}
}

func TestProvision(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, col := provisioned(t, 4, "english")
	// Idempotent, also inside a transaction.
	if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return s.Provision(ctx, tx, col, 4, "english")
	}); err != nil {
		t.Fatalf("second Provision: %v", err)
	}
	var methods []string
	if err := db.NewRaw(`SELECT am.amname FROM pg_index i
		JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
		WHERE i.indrelid = to_regclass(?) ORDER BY 1`, "docindex."+vectorstore.Table(col)).Scan(ctx, &methods); err != nil {
		t.Fatal(err)
	}
	if want := []string{"btree", "btree", "gin", "hnsw"}; !slices.Equal(methods, want) {
		t.Fatalf("index methods %v, want %v (primary key, file_id, tsv, embedding)", methods, want)
	}
	var typ string
	if err := db.QueryRowContext(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = to_regclass(?) AND attname = 'embedding'`, "docindex."+vectorstore.Table(col)).Scan(&typ); err != nil {
		t.Fatal(err)
	}
	if typ != "vector(4)" {
		t.Fatalf("embedding column is %s, want vector(4)", typ)
	}
	if err := s.Provision(ctx, db, uuid.New(), 0, "english"); err == nil {
		t.Fatal("Provision with 0 dimensions succeeded")
	}
	if err := s.Provision(ctx, db, uuid.New(), 4, "no_such_language"); err == nil {
		t.Fatal("Provision with an unknown language succeeded")
	}
}

// A language with a quote stays a literal: it fails as an unknown configuration, it never
// becomes SQL.
func TestProvisionQuotesLanguage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := docindextest.NewDB(t)
	s := vectorstore.New(db)
	err := s.Provision(ctx, db, uuid.New(), 4, "english'::regconfig, text)) STORED); DROP TABLE docindex.users; --")
	if err == nil || strings.Contains(err.Error(), "42601") {
		t.Fatalf("Provision with a hostile language: %v, want an invalid configuration name, not a syntax error", err)
	}
	var ok bool
	if err := db.QueryRowContext(ctx, "SELECT to_regclass('docindex.users') IS NOT NULL").Scan(&ok); err != nil || !ok {
		t.Fatalf("docindex.users is gone (%v)", err)
	}
}

// Past 2000 dimensions the HNSW index is on a halfvec cast, and search uses it.
func TestProvisionLargeDimensions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, col := provisioned(t, 3072, "english")
	file := uuid.New()
	var cs []vectorstore.Chunk
	for i := range 3 {
		cs = append(cs, vectorstore.Chunk{Ordinal: i, Text: fmt.Sprint("chunk ", i), Embedding: unit(3072, i)})
	}
	if err := s.Replace(ctx, col, file, cs); err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(ctx, col, vectorstore.Query{Mode: vectorstore.ModeVector, Vector: unit(3072, 2), TopK: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Ordinal != 2 {
		t.Fatalf("results %+v, want chunk 2", res)
	}
	if err := s.Provision(ctx, db, uuid.New(), 4001, "english"); err == nil {
		t.Fatal("Provision with 4001 dimensions succeeded")
	}
}

func TestReplace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, col := provisioned(t, 4, "english")
	a, b := uuid.New(), uuid.New()
	for range 2 { // a retried job writes the same chunks again
		if err := s.Replace(ctx, col, a, chunks(5, "alpha")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Replace(ctx, col, b, chunks(3, "beta")); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, col, &a); n != 5 {
		t.Fatalf("file a has %d chunks after two Replaces of 5, want 5", n)
	}
	// Replacing a leaves b alone.
	if err := s.Replace(ctx, col, a, chunks(2, "gamma")); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, col, &a); n != 2 {
		t.Fatalf("file a has %d chunks, want 2", n)
	}
	if n := count(t, s, col, &b); n != 3 {
		t.Fatalf("file b has %d chunks after a's Replace, want 3", n)
	}
	if n := count(t, s, col, nil); n != 5 {
		t.Fatalf("collection has %d chunks, want 5", n)
	}
	// What was written reads back: text, pages, metadata, ordinal.
	res, err := s.Search(ctx, col, vectorstore.Query{Mode: vectorstore.ModeFulltext, Text: "gamma", FileIDs: []uuid.UUID{a}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("found %d gamma chunks, want 2", len(res))
	}
	sort.Slice(res, func(i, j int) bool { return res[i].Ordinal < res[j].Ordinal })
	r := res[1]
	if r.FileID != a || r.Text != "gamma chunk number 1" || !slices.Equal(r.Pages, []int{2}) || r.Metadata["n"] != float64(1) || r.ChunkID == uuid.Nil {
		t.Fatalf("chunk read back as %+v", r)
	}
	// Replace with nothing deletes.
	if err := s.Replace(ctx, col, a, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, col, &a); n != 0 {
		t.Fatalf("file a has %d chunks after an empty Replace, want 0", n)
	}
}

func TestReplaceOddValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, col := provisioned(t, 4, "english")
	file := uuid.New()
	err := s.Replace(ctx, col, file, []vectorstore.Chunk{
		{Ordinal: 0, Text: "nul\x00byte and bad \xff utf8 zebra"}, // no embedding, no pages, no metadata
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(ctx, col, vectorstore.Query{Text: "zebra"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Text != "nulbyte and bad \uFFFD utf8 zebra" || res[0].Pages != nil || len(res[0].Metadata) != 0 {
		t.Fatalf("results %+v", res)
	}
	// A chunk without an embedding is not a vector result, and a vector search still works.
	res, err = s.Search(ctx, col, vectorstore.Query{Mode: vectorstore.ModeVector, Vector: unit(4, 0)})
	if err != nil || len(res) != 0 {
		t.Fatalf("vector search: %v, %+v", err, res)
	}
	if err := s.Replace(ctx, col, file, []vectorstore.Chunk{{Text: "x", Embedding: unit(3, 0)}}); err == nil {
		t.Fatal("Replace with the wrong dimension succeeded")
	}
	if err := s.Replace(ctx, col, file, []vectorstore.Chunk{{FileID: uuid.New(), Text: "x"}}); err == nil {
		t.Fatal("Replace with a chunk of another file succeeded")
	}
	if n := count(t, s, col, &file); n != 1 {
		t.Fatalf("failed Replaces changed the file: %d chunks, want 1", n)
	}
	if err := s.Replace(ctx, uuid.New(), file, chunks(1, "x")); err == nil {
		t.Fatal("Replace into a collection without a table succeeded")
	}
}

// Replaces of one file that run at once (a rescued job whose first worker still runs) leave one
// set of chunks, not the sum.
func TestReplaceConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, col := provisioned(t, 4, "english")
	file := uuid.New()
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := range 6 {
		wg.Go(func() { errs <- s.Replace(ctx, col, file, chunks(20, fmt.Sprint("run", i))) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, s, col, &file); n != 20 {
		t.Fatalf("file has %d chunks after concurrent Replaces of 20, want 20", n)
	}
}

func TestDeleteFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, col := provisioned(t, 4, "english")
	a, b := uuid.New(), uuid.New()
	for _, f := range []uuid.UUID{a, b} {
		if err := s.Replace(ctx, col, f, chunks(3, "x")); err != nil {
			t.Fatal(err)
		}
	}
	// In the caller's transaction, which a rollback undoes.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteFile(ctx, tx, col, a); err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback()
	if n := count(t, s, col, &a); n != 3 {
		t.Fatalf("rolled-back delete left %d chunks, want 3", n)
	}
	if err := s.DeleteFile(ctx, db, col, a); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, col, &a); n != 0 {
		t.Fatalf("file a has %d chunks after DeleteFile, want 0", n)
	}
	if n := count(t, s, col, &b); n != 3 {
		t.Fatalf("file b has %d chunks after a's DeleteFile, want 3", n)
	}
	// No table: no error, and the caller's transaction stays usable.
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := s.DeleteFile(ctx, tx, uuid.New(), a); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "SELECT 1")
		return err
	})
	if err != nil {
		t.Fatalf("DeleteFile without a table: %v", err)
	}
}

func TestDropAndSize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, col := provisioned(t, 4, "english")
	empty, err := s.Size(ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	if empty <= 0 {
		t.Fatalf("size of a provisioned table %d, want > 0 (its indexes have pages)", empty)
	}
	var many []vectorstore.Chunk
	for i := range 500 {
		many = append(many, vectorstore.Chunk{Ordinal: i, Text: strings.Repeat(fmt.Sprint("word", i, " "), 50), Embedding: unit(4, i%4)})
	}
	if err := s.Replace(ctx, col, uuid.New(), many); err != nil {
		t.Fatal(err)
	}
	full, err := s.Size(ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	if full <= empty {
		t.Fatalf("size after writes %d, want more than %d", full, empty)
	}
	if err := s.Drop(ctx, db, col); err != nil {
		t.Fatal(err)
	}
	if err := s.Drop(ctx, db, col); err != nil {
		t.Fatalf("second Drop: %v", err)
	}
	if n, err := s.Size(ctx, col); err != nil || n != 0 {
		t.Fatalf("Size after Drop: %d, %v; want 0", n, err)
	}
	if n := count(t, s, col, nil); n != 0 {
		t.Fatalf("Count after Drop: %d, want 0", n)
	}
	res, err := s.Search(ctx, col, vectorstore.Query{Text: "word1", Vector: unit(4, 0)})
	if err != nil || len(res) != 0 {
		t.Fatalf("Search after Drop: %v, %d results; want none and no error", err, len(res))
	}
}
