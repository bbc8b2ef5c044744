package docindex_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/vectorstore"
)

// Two servers starting together migrate one after the other, and a third run is a no-op.
func TestMigrateConcurrently(t *testing.T) {
	ctx := context.Background()
	url := docindextest.EmptyURL(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := docindex.OpenDB(ctx, url)
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			errs[i] = docindex.Migrate(ctx, db)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("migrate %d: %v", i, err)
		}
	}
	db, err := docindex.OpenDB(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var applied, total int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM docindex.migrations").Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, "SELECT count(DISTINCT name) FROM docindex.migrations").Scan(&total); err != nil {
		t.Fatal(err)
	}
	if applied == 0 || applied != total {
		t.Fatalf("%d migration rows for %d migrations: a migration ran twice or none ran", applied, total)
	}
	if err := docindex.Migrate(ctx, db); err != nil {
		t.Fatalf("third migrate: %v", err)
	}
}

// The chunk_pending migration gives chunk tables made before it a delta table, so that a
// collection indexed by an older server keeps working: Replace, Search and Merge.
func TestMigrateGivesOldChunkTablesADelta(t *testing.T) {
	ctx := context.Background()
	db, err := docindex.OpenDB(ctx, docindextest.EmptyURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := docindex.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	// The state before the migration: a chunk table whose tsv is generated, without a delta, no
	// chunk_pending, and the migration not yet applied.
	s := vectorstore.New(db)
	col := uuid.New()
	if err := s.Provision(ctx, db, col, 3, "english"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"ALTER TABLE docindex." + vectorstore.Table(col) + " DROP COLUMN tsv, " +
			"ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED",
		"INSERT INTO docindex." + vectorstore.Table(col) + " (file_id, text, embedding) VALUES (gen_random_uuid(), 'old tables kept', '[0,1,0]')",
		"DROP TABLE docindex." + vectorstore.DeltaTable(col),
		"DROP TABLE docindex.chunk_pending",
		"DELETE FROM docindex.migrations WHERE name = '20261122000030'",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := docindex.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	var indexes int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_index WHERE indrelid = to_regclass(?)",
		"docindex."+vectorstore.DeltaTable(col)).Scan(&indexes); err != nil || indexes != 3 {
		t.Fatalf("delta has %d indexes (%v), want primary key, file_id and tsv", indexes, err)
	}
	file := uuid.New()
	if err := s.Replace(ctx, col, file, []vectorstore.Chunk{{Text: "migrated tables work", Embedding: []float32{1, 0, 0}}}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"unmerged", "merged"} {
		res, err := s.Search(ctx, col, vectorstore.Query{Text: "migrated", Mode: vectorstore.ModeFulltext})
		if err != nil || len(res) != 1 || res[0].FileID != file {
			t.Fatalf("%s: search = %v, %v; want the new chunk", step, res, err)
		}
		// The old row keeps its tsvector.
		res, err = s.Search(ctx, col, vectorstore.Query{Text: "kept", Mode: vectorstore.ModeFulltext})
		if err != nil || len(res) != 1 || res[0].Text != "old tables kept" {
			t.Fatalf("%s: full-text search of the old row = %v, %v", step, res, err)
		}
		if n, err := s.Merge(ctx, 10); err != nil || (step == "unmerged" && n != 1) {
			t.Fatalf("merge = %d, %v", n, err)
		}
	}
}
