package structured_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/structured"
)

func boolp(b bool) *bool { return &b }

var tables = dataset.Tables{
	"invoices": {Columns: []dataset.Column{
		{Name: "number", Type: "text", Primary: true},
		{Name: "total", Type: "numeric", Nullable: boolp(false)},
		{Name: "quantity", Type: "integer"},
		{Name: "paid", Type: "boolean"},
		{Name: "issued", Type: "timestamp"},
	}},
	"notes": {Columns: []dataset.Column{{Name: "note", Type: "text"}}},
}

func provision(t *testing.T) (*bun.DB, uuid.UUID) {
	t.Helper()
	db := docindextest.NewDB(t)
	coll := uuid.New()
	if err := dataset.Provision(context.Background(), db, coll, tables.Normalized(), dataset.Extraction); err != nil {
		t.Fatal(err)
	}
	return db, coll
}

// rowsOf returns a file's rows of a table as text, ordered, for comparison.
func rowsOf(t *testing.T, db *bun.DB, coll, file uuid.UUID, table string) []string {
	t.Helper()
	var out []string
	err := db.NewSelect().TableExpr("?.? AS t", bun.Ident(dataset.Schema(coll)), bun.Ident(table)).
		ColumnExpr("t::text").Where("_file_id = ?", file).OrderExpr("1").Scan(context.Background(), &out)
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	return out
}

func TestReplace(t *testing.T) {
	ctx := context.Background()
	db, coll := provision(t)
	file, other := uuid.New(), uuid.New()
	day := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	first := map[string][][]any{
		"invoices": {
			{"A-1", "1250.50", int64(3), true, day},
			{"O'Brien; DROP TABLE x", "0.1", nil, nil, nil},
		},
		"notes": {{"first"}, {nil}},
	}
	if err := structured.Replace(ctx, db, coll, file, tables, first); err != nil {
		t.Fatal(err)
	}
	if err := structured.Replace(ctx, db, coll, other, tables, map[string][][]any{"notes": {{"other file"}}}); err != nil {
		t.Fatal(err)
	}
	inv := rowsOf(t, db, coll, file, "invoices")
	want := []string{ // in the database's text order
		"(" + file.String() + ",\"O'Brien; DROP TABLE x\",0.1,,,)",
		"(" + file.String() + ",A-1,1250.50,3,t,\"2024-05-01 12:00:00+00\")",
	}
	if !reflect.DeepEqual(inv, want) {
		t.Errorf("invoices\n got %q\nwant %q", inv, want)
	}
	if n := rowsOf(t, db, coll, file, "notes"); len(n) != 2 {
		t.Errorf("notes %q", n)
	}

	// A reindex replaces every table's rows of the file; the other file keeps its own.
	if err := structured.Replace(ctx, db, coll, file, tables, map[string][][]any{"invoices": {{"B-2", "7", nil, false, nil}}}); err != nil {
		t.Fatal(err)
	}
	if inv := rowsOf(t, db, coll, file, "invoices"); len(inv) != 1 || !strings.Contains(inv[0], ",B-2,7,,f,") {
		t.Errorf("after replace: invoices %q", inv)
	}
	if n := rowsOf(t, db, coll, file, "notes"); len(n) != 0 {
		t.Errorf("after replace: notes %q, want none", n)
	}
	if n := rowsOf(t, db, coll, other, "notes"); len(n) != 1 {
		t.Errorf("the other file's notes %q", n)
	}
}

// TestReplaceIsAtomic: a write that fails halfway leaves the previous rows.
func TestReplaceIsAtomic(t *testing.T) {
	ctx := context.Background()
	db, coll := provision(t)
	file := uuid.New()
	if err := structured.Replace(ctx, db, coll, file, tables, map[string][][]any{"invoices": {{"A", "1", nil, nil, nil}}}); err != nil {
		t.Fatal(err)
	}
	// Tables are written in name order: the invoices are replaced, then the notes fail (a
	// definition naming a column the table lacks), which must undo the invoices too.
	bad := map[string][][]any{
		"invoices": {{"C", "1", nil, nil, nil}},
		"notes":    {{"x"}},
	}
	broken := dataset.Tables{"invoices": tables["invoices"], "notes": {Columns: []dataset.Column{{Name: "missing", Type: "text"}}}}
	if err := structured.Replace(ctx, db, coll, file, broken, bad); err == nil {
		t.Fatal("a write into a missing column succeeded")
	}
	if inv := rowsOf(t, db, coll, file, "invoices"); len(inv) != 1 || !strings.Contains(inv[0], ",A,1,") {
		t.Errorf("after a failed write: invoices %q, want the previous row", inv)
	}
	if err := structured.Replace(ctx, db, coll, file, tables, map[string][][]any{"nope": {{"x"}}}); err == nil {
		t.Error("rows for an unknown table were accepted")
	}
}

func TestReplaceManyRows(t *testing.T) {
	ctx := context.Background()
	db, coll := provision(t)
	file := uuid.New()
	var notes [][]any
	for range 450 { // three INSERT batches
		notes = append(notes, []any{"n"})
	}
	if err := structured.Replace(ctx, db, coll, file, tables, map[string][][]any{"notes": notes}); err != nil {
		t.Fatal(err)
	}
	n, err := dataset.Count(ctx, db, coll, "notes")
	if err != nil || n != 450 {
		t.Errorf("count %d, %v", n, err)
	}
}
