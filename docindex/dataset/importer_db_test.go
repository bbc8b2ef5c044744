package dataset_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/docindextest"
)

func importFile(t *testing.T, db *bun.DB, coll, file uuid.UUID, name, content string, declared dataset.Tables, commit dataset.Commit) *dataset.ImportResult {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := dataset.PlanImport(path, name, "", declared)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	defer p.Close()
	res, err := p.Run(context.Background(), db, coll, file, commit)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

func read(t *testing.T, db *bun.DB, coll uuid.UUID, table string, def dataset.Table) []map[string]any {
	t.Helper()
	rows, err := dataset.Read(context.Background(), db, coll, table, def, dataset.Query{})
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	return rows
}

func tableExists(t *testing.T, db *bun.DB, coll uuid.UUID, table string) bool {
	t.Helper()
	var ok bool
	if err := db.QueryRowContext(context.Background(), "SELECT to_regclass(?) IS NOT NULL",
		dataset.Schema(coll)+"."+table).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestRunCreatesAndReplacesTables(t *testing.T) {
	ctx := context.Background()
	db := docindextest.NewDB(t)
	coll, file := uuid.New(), uuid.New()
	csv := "Name,Qty,Price,Paid,Day\nann,3,1.50,yes,2024-05-01\nbob,4,2,no,,extra\ncat,5,12345678901234567890.123456789,no,2024-05-03 10:00\n"
	var seen *dataset.ImportResult
	res := importFile(t, db, coll, file, "Stock List.csv", csv, nil, func(ctx context.Context, tx bun.Tx, r *dataset.ImportResult) error {
		seen = r
		return nil
	})
	if seen != res || res.Rows["stock_list"] != 2 || res.Rejected != 1 || len(res.Errors) != 1 {
		t.Fatalf("result %+v", res)
	}
	if e := res.Errors[0]; e.Table != "stock_list" || e.Index != 1 || !strings.Contains(e.Error, "6 fields, the header has 5") {
		t.Errorf("error %+v", e)
	}
	if got := fmt.Sprint(res.Tables["stock_list"].Columns); !strings.Contains(got, "{qty integer") || !strings.Contains(got, "{day timestamp") {
		t.Errorf("columns %s", got)
	}
	def := res.Tables["stock_list"]
	rows := read(t, db, coll, "stock_list", def)
	if len(rows) != 2 {
		t.Fatalf("rows %v", rows)
	}
	raw, _ := json.Marshal(rows)
	if !strings.Contains(string(raw), `12345678901234567890.123456789`) {
		t.Errorf("numeric digits lost: %s", raw)
	}
	owners, err := dataset.Owners(ctx, db, coll)
	if err != nil || owners["stock_list"].FileID != file || owners["stock_list"].Declared {
		t.Fatalf("owners %v %v", owners, err)
	}
	// A reindex of a changed file replaces the table, its definition and rows.
	res = importFile(t, db, coll, file, "Stock List.csv", "name,qty\ndan,7\n", nil, nil)
	rows = read(t, db, coll, "stock_list", res.Tables["stock_list"])
	if len(rows) != 1 || rows[0]["name"] != "dan" || fmt.Sprint(rows[0]["qty"]) != "7" || len(res.Tables["stock_list"].Columns) != 2 {
		t.Fatalf("replaced: %v %+v", rows, res.Tables)
	}
	// A commit hook that fails rolls everything back: the previous table stays.
	path := filepath.Join(t.TempDir(), "Stock List.csv")
	os.WriteFile(path, []byte("other\n1\n"), 0o600)
	p, err := dataset.PlanImport(path, "Stock List.csv", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	boom := errors.New("boom")
	if _, err := p.Run(ctx, db, coll, file, func(context.Context, bun.Tx, *dataset.ImportResult) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("run: %v", err)
	}
	if rows := read(t, db, coll, "stock_list", res.Tables["stock_list"]); len(rows) != 1 || rows[0]["name"] != "dan" {
		t.Fatalf("after a rollback: %v", rows)
	}
	// Dropping the file's tables.
	dropped, err := dataset.DropImported(ctx, db, coll, file)
	if err != nil || len(dropped) != 1 || dropped[0] != "stock_list" || tableExists(t, db, coll, "stock_list") {
		t.Fatalf("drop: %v %v", dropped, err)
	}
}

func TestRunRowErrorsAndPrimaryKey(t *testing.T) {
	ctx := context.Background()
	db := docindextest.NewDB(t)
	coll, file := uuid.New(), uuid.New()
	no := false
	declared := dataset.Tables{
		"orders": {Columns: []dataset.Column{
			{Name: "id", Type: "integer", Primary: true},
			{Name: "customer", Type: "text", Nullable: &no},
			{Name: "total", Type: "numeric"},
			{Name: "at", Type: "timestamp"},
		}},
		"later": {Columns: []dataset.Column{{Name: "x", Type: "text"}}},
	}
	var lines []string
	lines = append(lines, "id,customer,total,at")
	for i := 0; i < 30; i++ {
		lines = append(lines, fmt.Sprintf("%d,c%d,%d.5,2024-05-01", i, i, i))
		lines = append(lines, fmt.Sprintf("bad%d,c,1,", i)) // rejected: id is no integer
	}
	lines = append(lines, "1,last wins,99,2025-01-01T00:00:00Z")
	res := importFile(t, db, coll, file, "orders.csv", strings.Join(lines, "\n"), declared, nil)
	if res.Rows["orders"] != 30 || res.Rejected != 30 || len(res.Errors) != dataset.MaxImportErrors {
		t.Fatalf("result rows %v rejected %d errors %d", res.Rows, res.Rejected, len(res.Errors))
	}
	if e := res.Errors[0]; e.Index != 1 || !strings.Contains(e.Error, `column "id": expected integer`) {
		t.Errorf("first error %+v", e)
	}
	w := res.Warning()
	if !strings.HasPrefix(w, "30 of 61 rows rejected (first 20 shown): orders row 1: column \"id\"") {
		t.Errorf("warning %q", w)
	}
	rows, err := dataset.Read(ctx, db, coll, "orders", declared["orders"], dataset.Query{Filters: map[string]string{"id": "1"}})
	if err != nil || len(rows) != 1 || rows[0]["customer"] != "last wins" {
		t.Fatalf("last wins: %v %v", rows, err)
	}
	if n, err := dataset.Count(ctx, db, coll, "orders"); err != nil || n != 30 {
		t.Fatalf("count %d %v", n, err)
	}
	// The defined table no file produced exists, empty.
	if n, err := dataset.Count(ctx, db, coll, "later"); err != nil || n != 0 {
		t.Fatalf("later: %d %v", n, err)
	}
	// Defined tables are emptied, not dropped, when their file goes, and keep their definition.
	dropped, err := dataset.DropImported(ctx, db, coll, file)
	if err != nil || len(dropped) != 0 {
		t.Fatalf("drop %v %v", dropped, err)
	}
	if n, err := dataset.Count(ctx, db, coll, "orders"); err != nil || n != 0 {
		t.Fatalf("after drop: %d %v", n, err)
	}
	d, err := dataset.Declared(ctx, db, coll, declared)
	if err != nil || len(d) != 2 {
		t.Fatalf("declared %v %v", d, err)
	}
}

func TestDeclaredSkipsInferredTables(t *testing.T) {
	ctx := context.Background()
	db := docindextest.NewDB(t)
	coll, a, b := uuid.New(), uuid.New(), uuid.New()
	res := importFile(t, db, coll, a, "items.csv", "n\n1\n", nil, nil)
	live := dataset.Tables{"items": res.Tables["items"], "defined": {Columns: []dataset.Column{{Name: "x", Type: "text"}}}}
	d, err := dataset.Declared(ctx, db, coll, live)
	if err != nil || len(d) != 1 || d["defined"].Columns == nil {
		t.Fatalf("declared %v %v", d, err)
	}
	// Another file of the same name takes the table over: deleting the first file keeps it.
	res = importFile(t, db, coll, b, "items.csv", "n\nabc\n", d, nil)
	if res.Tables["items"].Columns[0].Type != "text" {
		t.Fatalf("re-inferred %+v", res.Tables)
	}
	if dropped, err := dataset.DropImported(ctx, db, coll, a); err != nil || len(dropped) != 0 || !tableExists(t, db, coll, "items") {
		t.Fatalf("drop a: %v %v", dropped, err)
	}
	if dropped, err := dataset.DropImported(ctx, db, coll, b); err != nil || len(dropped) != 1 || tableExists(t, db, coll, "items") {
		t.Fatalf("drop b: %v %v", dropped, err)
	}
}

func TestConcurrentImportsIntoOneCollection(t *testing.T) {
	db := docindextest.NewDB(t)
	coll := uuid.New()
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func(i int) {
			// Three files share a table name: the imports serialize on it; all must succeed.
			name := fmt.Sprintf("t%d.csv", i%3)
			path := filepath.Join(t.TempDir(), name)
			os.WriteFile(path, []byte(fmt.Sprintf("v\n%d\n", i)), 0o600)
			p, err := dataset.PlanImport(path, name, "", nil)
			if err != nil {
				errs <- err
				return
			}
			defer p.Close()
			_, err = p.Run(context.Background(), db, coll, uuid.New(), nil)
			errs <- err
		}(i)
	}
	for i := 0; i < 6; i++ {
		if err := <-errs; err != nil {
			t.Errorf("import: %v", err)
		}
	}
	owners, err := dataset.Owners(context.Background(), db, coll)
	if err != nil || len(owners) != 3 {
		t.Fatalf("owners %v %v", owners, err)
	}
}
