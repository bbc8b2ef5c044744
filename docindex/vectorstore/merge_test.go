package vectorstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/vectorstore"
)

// rowsIn counts the rows of one of a collection's two tables.
func rowsIn(t *testing.T, db *bun.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), "SELECT count(*) FROM docindex."+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func pending(t *testing.T, s *vectorstore.Store, col uuid.UUID) int {
	t.Helper()
	n, err := s.Pending(context.Background(), col)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func chunkIDs(res []vectorstore.Result) []uuid.UUID {
	ids := make([]uuid.UUID, len(res))
	for i, r := range res {
		ids[i] = r.ChunkID
	}
	return ids
}

// Replace lands rows in the delta, where every search mode finds them; Merge moves them into the
// indexed table with their ids, and the same searches give the same results.
func TestMergeMovesRowsKeepingResults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, col := provisioned(t, 8, "english")
	files := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	for i, f := range files {
		if err := s.Replace(ctx, col, f, randomChunks(10, 8, uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if got := rowsIn(t, db, vectorstore.DeltaTable(col)); got != 30 {
		t.Fatalf("delta holds %d rows after three Replaces of 10, want 30", got)
	}
	if got := rowsIn(t, db, vectorstore.Table(col)); got != 0 {
		t.Fatalf("indexed table holds %d rows before any merge, want 0", got)
	}
	if got := pending(t, s, col); got != 30 {
		t.Fatalf("Pending %d, want 30", got)
	}
	queries := []vectorstore.Query{
		{Mode: vectorstore.ModeVector, Vector: randomChunks(1, 8, 99)[0].Embedding, TopK: 5},
		{Mode: vectorstore.ModeFulltext, Text: "chunk 3 OR 7", TopK: 5},
		{Mode: vectorstore.ModeHybrid, Text: "chunk 3", Vector: randomChunks(1, 8, 98)[0].Embedding, TopK: 5},
	}
	before := make([][]uuid.UUID, len(queries))
	for i, q := range queries {
		before[i] = chunkIDs(search(t, s, col, q))
		if len(before[i]) == 0 {
			t.Fatalf("query %d found nothing in the delta", i)
		}
	}

	// One file at a time, oldest first.
	if n, err := s.Merge(ctx, 1); err != nil || n != 1 {
		t.Fatalf("Merge(1) = %d, %v; want 1 file", n, err)
	}
	if got := pending(t, s, col); got != 20 {
		t.Fatalf("Pending %d after merging one file, want 20", got)
	}
	if got := count(t, s, col, &files[0]); got != 10 {
		t.Fatalf("merged file has %d chunks, want 10", got)
	}
	if got := rowsIn(t, db, vectorstore.Table(col)); got != 10 {
		t.Fatalf("indexed table holds %d rows, want the first file's 10", got)
	}
	// Half merged: the rankings span both tables.
	for i, q := range queries {
		if got := chunkIDs(search(t, s, col, q)); !slices.Equal(got, before[i]) {
			t.Fatalf("query %d half merged: %v, want %v", i, got, before[i])
		}
	}
	if n, err := s.Merge(ctx, 10); err != nil || n != 2 {
		t.Fatalf("Merge(10) = %d, %v; want the 2 files left", n, err)
	}
	if n, err := s.Merge(ctx, 10); err != nil || n != 0 {
		t.Fatalf("Merge with nothing pending = %d, %v", n, err)
	}
	if got := rowsIn(t, db, vectorstore.DeltaTable(col)); got != 0 {
		t.Fatalf("delta holds %d rows after merging all, want 0", got)
	}
	if got := count(t, s, col, nil); got != 30 {
		t.Fatalf("Count %d after merging, want 30", got)
	}
	for i, q := range queries {
		if got := chunkIDs(search(t, s, col, q)); !slices.Equal(got, before[i]) {
			t.Fatalf("query %d after merge: %v, want the same chunks as before %v", i, got, before[i])
		}
	}

	// Replacing a merged file removes its merged rows and defers the new ones.
	if err := s.Replace(ctx, col, files[1], randomChunks(4, 8, 50)); err != nil {
		t.Fatal(err)
	}
	if got := count(t, s, col, &files[1]); got != 4 {
		t.Fatalf("replaced file has %d chunks, want 4", got)
	}
	if got := rowsIn(t, db, vectorstore.Table(col)); got != 20 {
		t.Fatalf("indexed table holds %d rows, want 20 once the replaced file's 10 are gone", got)
	}
	if got := pending(t, s, col); got != 4 {
		t.Fatalf("Pending %d, want 4", got)
	}
	// An empty Replace deletes and leaves nothing pending.
	if err := s.Replace(ctx, col, files[1], nil); err != nil {
		t.Fatal(err)
	}
	if got, p := count(t, s, col, &files[1]), pending(t, s, col); got != 0 || p != 0 {
		t.Fatalf("after an empty Replace: %d chunks, %d pending; want 0 and 0", got, p)
	}
}

// Past the bound, Replace writes into the indexed table directly; 0 turns deferral off.
func TestMaxPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, col := provisioned(t, 4, "english", vectorstore.WithMaxPending(10))
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	if err := s.Replace(ctx, col, a, chunks(8, "a")); err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, col, b, chunks(8, "b")); err != nil {
		t.Fatal(err)
	}
	if got := pending(t, s, col); got != 8 {
		t.Fatalf("Pending %d, want only the first file's 8", got)
	}
	if d, i := rowsIn(t, db, vectorstore.DeltaTable(col)), rowsIn(t, db, vectorstore.Table(col)); d != 8 || i != 8 {
		t.Fatalf("delta %d, indexed %d; want 8 and 8", d, i)
	}
	// A file's own pending rows do not count against it: replacing a with 10 still fits.
	if err := s.Replace(ctx, col, a, chunks(10, "a2")); err != nil {
		t.Fatal(err)
	}
	if got := pending(t, s, col); got != 10 {
		t.Fatalf("Pending %d after replacing a with 10, want 10", got)
	}
	// A file that no longer fits goes to the indexed table and stops being pending.
	if err := s.Replace(ctx, col, a, chunks(11, "a3")); err != nil {
		t.Fatal(err)
	}
	if got := pending(t, s, col); got != 0 {
		t.Fatalf("Pending %d after an 11-chunk file past a bound of 10, want 0", got)
	}
	if got := count(t, s, col, &a); got != 11 {
		t.Fatalf("file a has %d chunks, want 11", got)
	}
	if n, err := s.Merge(ctx, 10); err != nil || n != 0 {
		t.Fatalf("Merge = %d, %v; want nothing to merge", n, err)
	}

	off := vectorstore.New(db, vectorstore.WithMaxPending(0))
	if err := off.Replace(ctx, col, c, chunks(2, "c")); err != nil {
		t.Fatal(err)
	}
	if got := pending(t, s, col); got != 0 {
		t.Fatalf("Pending %d with deferral off, want 0", got)
	}
}

// DeleteFile removes unmerged and merged rows and the file's pending entry; Drop removes the
// collection's entries.
func TestDeleteFileAndDropPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, col := provisioned(t, 4, "english")
	merged, unmerged := uuid.New(), uuid.New()
	if err := s.Replace(ctx, col, merged, chunks(3, "m")); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Merge(ctx, 10); err != nil || n != 1 {
		t.Fatalf("Merge = %d, %v", n, err)
	}
	if err := s.Replace(ctx, col, unmerged, chunks(5, "u")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []uuid.UUID{merged, unmerged} {
		if err := s.DeleteFile(ctx, db, col, f); err != nil {
			t.Fatal(err)
		}
		if got := count(t, s, col, &f); got != 0 {
			t.Fatalf("%d chunks left after DeleteFile", got)
		}
	}
	if got := pending(t, s, col); got != 0 {
		t.Fatalf("Pending %d after DeleteFile, want 0", got)
	}

	if err := s.Replace(ctx, col, uuid.New(), chunks(2, "x")); err != nil {
		t.Fatal(err)
	}
	otherCol := uuid.New()
	if err := s.Provision(ctx, db, otherCol, 4, "english"); err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, otherCol, uuid.New(), chunks(2, "y")); err != nil {
		t.Fatal(err)
	}
	if err := s.Drop(ctx, db, col); err != nil {
		t.Fatal(err)
	}
	if got := pending(t, s, col); got != 0 {
		t.Fatalf("Pending %d after Drop, want 0", got)
	}
	for _, table := range []string{vectorstore.Table(col), vectorstore.DeltaTable(col)} {
		var exists bool
		if err := db.QueryRowContext(ctx, "SELECT to_regclass(?) IS NOT NULL", "docindex."+table).Scan(&exists); err != nil || exists {
			t.Fatalf("%s exists after Drop (%v)", table, err)
		}
	}
	if got := pending(t, s, otherCol); got != 2 {
		t.Fatalf("another collection has %d pending after Drop, want its 2", got)
	}
}

// Replaces, deletes and merges of the same files racing each other never lose or duplicate a
// chunk: at every moment each file has the chunks of one Replace, and a final merge empties the
// delta.
func TestMergeRacesReplace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, col := provisioned(t, 4, "english")
	files := make([]uuid.UUID, 4)
	for i := range files {
		files[i] = uuid.New()
	}
	stop := make(chan struct{})
	var merged atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 2 { // two mergers, as two processes would run
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, err := s.Merge(ctx, 4)
				if err != nil {
					errs <- err
					return
				}
				merged.Add(int64(n))
			}
		})
	}
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Go(func() {
			for i := range 25 {
				f := files[(w+i)%len(files)]
				n := 3 + (w+i)%5
				if err := s.Replace(ctx, col, f, chunks(n, fmt.Sprintf("w%d-%d", w, i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if merged.Load() == 0 {
		t.Fatal("the mergers merged nothing while the writers ran")
	}
	for {
		n, err := s.Merge(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if d, p := rowsIn(t, db, vectorstore.DeltaTable(col)), pending(t, s, col); d != 0 || p != 0 {
		t.Fatalf("after the final merge: %d delta rows, %d pending; want 0 and 0", d, p)
	}
	for _, f := range files {
		// One Replace's chunks: ordinals 0..n-1 once each, all with one prefix.
		var n, distinct, prefixes int
		if err := db.QueryRowContext(ctx, "SELECT count(*), count(DISTINCT ordinal), count(DISTINCT split_part(text, ' ', 1)) FROM docindex."+
			vectorstore.Table(col)+" WHERE file_id = ?", f).Scan(&n, &distinct, &prefixes); err != nil {
			t.Fatal(err)
		}
		if n == 0 || n != distinct || prefixes != 1 {
			t.Fatalf("file %s: %d chunks, %d distinct ordinals, %d writers' texts; want one Replace's chunks", f, n, distinct, prefixes)
		}
	}
}

// Run merges at once after a Replace of its own Store, and by polling after another's.
func TestRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, db, col := provisioned(t, 4, "english")
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx, vectorstore.WithPoll(200*time.Millisecond), vectorstore.WithErrorHandler(func(err error) { t.Error(err) }))
	}()
	waitMerged := func(what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for pending(t, s, col) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: still pending after 10s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := s.Replace(ctx, col, uuid.New(), chunks(3, "own")); err != nil {
		t.Fatal(err)
	}
	waitMerged("own Replace")
	other := vectorstore.New(db)
	if err := other.Replace(ctx, col, uuid.New(), chunks(3, "other")); err != nil {
		t.Fatal(err)
	}
	waitMerged("another Store's Replace")
	if got := rowsIn(t, db, vectorstore.Table(col)); got != 6 {
		t.Fatalf("indexed table holds %d rows, want 6", got)
	}
	cancel()
	<-done
}

// While busy, Run merges only collections past half the bound; when busy ends, Wake starts the
// rest at once.
func TestRunYields(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, db, small := provisioned(t, 4, "english", vectorstore.WithMaxPending(20))
	large := uuid.New()
	if err := s.Provision(ctx, db, large, 4, "english"); err != nil {
		t.Fatal(err)
	}
	var busy atomic.Bool
	busy.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx, vectorstore.WithPoll(time.Hour), vectorstore.WithYield(busy.Load),
			vectorstore.WithErrorHandler(func(err error) { t.Error(err) }))
	}()
	if err := s.Replace(ctx, small, uuid.New(), chunks(5, "small")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // 12 chunks: past half of 20
		if err := s.Replace(ctx, large, uuid.New(), chunks(4, fmt.Sprint("large", i))); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for pending(t, s, large) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the collection past half the bound was not merged while busy")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // room for a wrong merge to happen
	if got := pending(t, s, small); got != 5 {
		t.Fatalf("the small collection has %d pending while busy, want its 5 left for later", got)
	}
	busy.Store(false)
	s.Wake()
	deadline = time.Now().Add(10 * time.Second)
	for pending(t, s, small) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("Wake after busy ended did not merge the small collection")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
}

// indexOID is the oid of the collection's HNSW index and whether it is valid; 0 when it is missing.
func indexOID(t *testing.T, db *bun.DB, col uuid.UUID) (oid int64, valid bool) {
	t.Helper()
	err := db.QueryRowContext(context.Background(), "SELECT indexrelid::oid::bigint, indisvalid FROM pg_index WHERE indexrelid = to_regclass(?)",
		"docindex."+vectorstore.Table(col)+"_embedding_idx").Scan(&oid, &valid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return oid, valid
}

// runUntil runs s.Run until cond holds (failing the test after 20s) and stops it.
func runUntil(t *testing.T, s *vectorstore.Store, what string, cond func() bool, opts ...vectorstore.RunOption) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx, append([]vectorstore.RunOption{vectorstore.WithPoll(50 * time.Millisecond),
			vectorstore.WithErrorHandler(func(err error) { t.Error(err) })}, opts...)...)
	}()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not done after 20s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A delta at least as large as the indexed table is merged by rebuilding the HNSW index (a new
// index, valid, same search results); a smaller one row by row (the index stays).
func TestBulkMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, col := provisioned(t, 8, "english", vectorstore.WithBulkMerge(20))
	for i := range 3 {
		if err := s.Replace(ctx, col, uuid.New(), randomChunks(10, 8, uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	q := vectorstore.Query{Mode: vectorstore.ModeVector, Vector: randomChunks(1, 8, 99)[0].Embedding, TopK: 5}
	before := chunkIDs(search(t, s, col, q))
	first, _ := indexOID(t, db, col)
	// The rows move first, then the index is built concurrently.
	runUntil(t, s, "bulk merge", func() bool {
		oid, valid := indexOID(t, db, col)
		return pending(t, s, col) == 0 && oid != first && valid
	})
	second, valid := indexOID(t, db, col)
	if second == 0 || !valid || second == first {
		t.Fatalf("index after a bulk merge: oid %d (was %d), valid %v; want a new valid index", second, first, valid)
	}
	if got := chunkIDs(search(t, s, col, q)); !slices.Equal(got, before) {
		t.Fatalf("after the bulk merge: %v, want %v", got, before)
	}
	if got := count(t, s, col, nil); got != 30 {
		t.Fatalf("Count %d, want 30", got)
	}
	// 25 more against 30 indexed: below the bulk size relative to the table, merged row by row.
	for i := range 5 {
		if err := s.Replace(ctx, col, uuid.New(), randomChunks(5, 8, uint64(10+i))); err != nil {
			t.Fatal(err)
		}
	}
	runUntil(t, s, "row merge", func() bool { return pending(t, s, col) == 0 })
	if third, valid := indexOID(t, db, col); third != second || !valid {
		t.Fatalf("index after a row-by-row merge: oid %d, valid %v; want the same index %d", third, valid, second)
	}
}

// A table left without its index (a rebuild that died between drop and build) or with an invalid
// one gets it back from Run.
func TestRepairIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, col := provisioned(t, 4, "english", vectorstore.WithBulkMerge(0), vectorstore.WithMaxPending(0))
	if err := s.Replace(ctx, col, uuid.New(), chunks(8, "x")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "DROP INDEX docindex."+vectorstore.Table(col)+"_embedding_idx"); err != nil {
		t.Fatal(err)
	}
	runUntil(t, s, "repair", func() bool { oid, valid := indexOID(t, db, col); return oid != 0 && valid })
	// An invalid index of that name: made by a concurrent build that fails (a unique index over
	// duplicate values), under the same name.
	if _, err := db.ExecContext(ctx, "DROP INDEX docindex."+vectorstore.Table(col)+"_embedding_idx"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE UNIQUE INDEX CONCURRENTLY "+vectorstore.Table(col)+"_embedding_idx ON docindex."+
		vectorstore.Table(col)+" (file_id)"); err == nil {
		t.Fatal("the unique index over duplicate file ids was built")
	}
	if oid, valid := indexOID(t, db, col); oid == 0 || valid {
		t.Fatalf("set-up: index oid %d valid %v, want an invalid index", oid, valid)
	}
	runUntil(t, s, "repair of an invalid index", func() bool { oid, valid := indexOID(t, db, col); return oid != 0 && valid })
	var method string
	if err := db.QueryRowContext(ctx, "SELECT am.amname FROM pg_class c JOIN pg_am am ON am.oid = c.relam WHERE c.oid = to_regclass(?)",
		"docindex."+vectorstore.Table(col)+"_embedding_idx").Scan(&method); err != nil || method != "hnsw" {
		t.Fatalf("repaired index method %q (%v), want hnsw", method, err)
	}
	res := search(t, s, col, vectorstore.Query{Mode: vectorstore.ModeVector, Vector: unit(4, 1), TopK: 2})
	if len(res) != 2 {
		t.Fatalf("search after repair: %d results, want 2", len(res))
	}
}
