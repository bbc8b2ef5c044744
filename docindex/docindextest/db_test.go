package docindextest_test

import (
	"context"
	"testing"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/docindextest"
)

func TestNewDBIsMigratedAndIsolated(t *testing.T) {
	ctx := context.Background()
	a := docindextest.NewDB(t)
	b := docindextest.NewDB(t)
	if _, err := a.ExecContext(ctx, "INSERT INTO docindex.users (email) VALUES ('a@example.com')"); err != nil {
		t.Fatalf("insert: %v", err)
	}
	var n int
	if err := b.QueryRowContext(ctx, "SELECT count(*) FROM docindex.users").Scan(&n); err != nil {
		t.Fatalf("count: %v", err)
	}
	if n != 0 {
		t.Fatalf("databases are not isolated: %d users in b", n)
	}
	var ext string
	if err := a.QueryRowContext(ctx, "SELECT extname FROM pg_extension WHERE extname = 'vector'").Scan(&ext); err != nil {
		t.Fatalf("pgvector missing in test database: %v", err)
	}
	// Migrating again is a no-op.
	if err := docindex.Migrate(ctx, a); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
}
