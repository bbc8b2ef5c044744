package docindex_test

import (
	"context"
	"sync"
	"testing"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/docindextest"
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
