package docindex_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/xuri/excelize/v2"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/store"
)

var importer = docindextest.User{Email: "importer@example.com", Name: "Importer"}

// importEnv is a server with workers and an imported dataset owned by importer.
type importEnv struct {
	s    *docindextest.Server
	tok  string
	p    *access.Principal
	coll uuid.UUID
}

func newImportEnv(t *testing.T, tables map[string]any) *importEnv {
	t.Helper()
	s := docindextest.NewServer(t)
	s.StartWorkers(nil)
	tok := s.Token(importer)
	body := map[string]any{"name": "imports", "type": "dataset", "datasetMode": "imported"}
	if tables != nil {
		body["tables"] = tables
	}
	r := s.Do("POST", "/api/collections", tok, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create collection: %d %s", r.Status, r.Body)
	}
	id := uuid.MustParse(r.Map(t)["id"].(string))
	u := s.UserRow(importer.Email)
	return &importEnv{s: s, tok: tok, p: &access.Principal{UserID: u.ID, Email: u.Email}, coll: id}
}

// upload sends a file and waits for its job; it returns the file as stored.
func (e *importEnv) upload(t *testing.T, name, ctype string, content []byte) *store.File {
	t.Helper()
	r := e.s.Upload(e.tok, docindextest.FileUpload{CollectionID: e.coll.String(), Name: name, ContentType: ctype, Body: bytes.NewReader(content)})
	if r.Status != http.StatusCreated {
		t.Fatalf("upload %s: %d %s", name, r.Status, r.Body)
	}
	id := uuid.MustParse(r.Map(t)["file"].(map[string]any)["id"].(string))
	e.s.WaitIdle(30 * time.Second)
	return e.file(t, id)
}

func (e *importEnv) file(t *testing.T, id uuid.UUID) *store.File {
	t.Helper()
	d, err := e.s.Svc.GetFile(context.Background(), e.p, id)
	if err != nil {
		t.Fatalf("get file: %v", err)
	}
	return d.File
}

func (e *importEnv) tables(t *testing.T) map[string]docindex.TableInfo {
	t.Helper()
	list, err := e.s.Svc.ListTables(context.Background(), e.p, e.coll)
	if err != nil {
		t.Fatalf("list tables: %v", err)
	}
	out := map[string]docindex.TableInfo{}
	for _, ti := range list {
		out[ti.Name] = ti
	}
	return out
}

func (e *importEnv) rows(t *testing.T, table string, q docindex.RowsQuery) []map[string]any {
	t.Helper()
	rows, err := e.s.Svc.ReadRows(context.Background(), e.p, e.coll, table, q)
	if err != nil {
		t.Fatalf("read rows of %s: %v", table, err)
	}
	return rows
}

func colTypes(ti docindex.TableInfo) string {
	var s []string
	for _, c := range ti.Columns {
		s = append(s, c.Name+":"+c.Type)
	}
	return strings.Join(s, " ")
}

func xlsxBytes(t *testing.T) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	rows := [][]any{
		{"SKU", "Price", "In Stock", "Since"},
		{"a-1", 9.99, true, time.Date(2023, 1, 2, 0, 0, 0, 0, time.UTC)},
		{"b-2", 12, false, time.Date(2024, 2, 3, 4, 5, 0, 0, time.UTC)},
	}
	for i, row := range rows {
		if err := f.SetSheetRow("Sheet1", fmt.Sprintf("A%d", i+1), &row); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestImportEachFormat(t *testing.T) {
	e := newImportEnv(t, nil)
	files := []struct {
		name, ctype string
		content     []byte
		table, want string
		rows        int
	}{
		{"Sales 2024.csv", "text/csv", []byte("Region,Units,Revenue,Closed,Day\nnorth,3,10.5,yes,2024-05-01\nsouth,4,7,no,2024-05-02\n"),
			"sales_2024", "region:text units:integer revenue:numeric closed:boolean day:timestamp", 2},
		{"stock.tsv", "", []byte("item\tcount\nnails\t500\nscrews\t\n"), "stock", "item:text count:integer", 2},
		{"Products.xlsx", "", xlsxBytes(t), "products", "sku:text price:numeric in_stock:boolean since:timestamp", 2},
		{"events.jsonl", "", []byte(`{"kind":"click","n":1,"at":"2024-01-01T10:00:00Z"}` + "\n" + `{"kind":"view","n":2,"extra":{"a":1}}` + "\n"),
			"events", "kind:text n:integer at:timestamp extra:text", 2},
		// No extension: the content type decides.
		{"export", "text/tab-separated-values", []byte("a\tb\n1\t2\n"), "export", "a:integer b:integer", 1},
	}
	for _, f := range files {
		got := e.upload(t, f.name, f.ctype, f.content)
		if got.Status != "indexed" || got.Warning != "" {
			t.Errorf("%s: status %s warning %q", f.name, got.Status, got.Warning)
		}
	}
	tables := e.tables(t)
	for _, f := range files {
		ti, ok := tables[f.table]
		if !ok {
			t.Errorf("%s: no table %s in %v", f.name, f.table, tables)
			continue
		}
		if colTypes(ti) != f.want || ti.RowCount != int64(f.rows) {
			t.Errorf("%s: %s (%d rows), want %s (%d rows)", f.name, colTypes(ti), ti.RowCount, f.want, f.rows)
		}
	}
	rows := e.rows(t, "products", docindex.RowsQuery{Filters: map[string]string{"sku": "a-1"}})
	if len(rows) != 1 || fmt.Sprint(rows[0]["price"]) != "9.99" || rows[0]["in_stock"] != true ||
		!rows[0]["since"].(time.Time).Equal(time.Date(2023, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("products row %v", rows)
	}
	rows = e.rows(t, "stock", docindex.RowsQuery{Order: "item"})
	if len(rows) != 2 || rows[1]["count"] != nil {
		t.Errorf("stock rows %v", rows)
	}
	// The collection's liveSchema shows the tables as well.
	c, err := e.s.Svc.GetCollection(context.Background(), e.p, e.coll)
	if err != nil {
		t.Fatal(err)
	}
	live, err := dataset.Parse(c.LiveSchema)
	if err != nil || len(live) != len(files) {
		t.Errorf("liveSchema %s %v", c.LiveSchema, err)
	}
}

func TestImportDefinedTableRowErrors(t *testing.T) {
	e := newImportEnv(t, map[string]any{
		"orders": map[string]any{"columns": []map[string]any{
			{"name": "id", "type": "integer", "primary": true},
			{"name": "customer", "type": "text", "nullable": false},
			{"name": "total", "type": "numeric"},
			{"name": "zip", "type": "integer"},
		}},
		"customers": map[string]any{"columns": []map[string]any{{"name": "name", "type": "text"}}},
	})
	// zip would be inferred as text ("007"), but the definition says integer.
	csv := "id,customer,total,zip\n1,ann,10,007\nx,bob,1,1\n2,,3,2\n3,cat,abc,3\n1,ann again,11,4\n"
	var lines []string
	for i := 0; i < 25; i++ {
		lines = append(lines, fmt.Sprintf("bad%d,c,1,1", i))
	}
	f := e.upload(t, "orders.csv", "", []byte(csv+strings.Join(lines, "\n")))
	if f.Status != "indexed_with_warning" {
		t.Fatalf("status %s warning %q", f.Status, f.Warning)
	}
	for _, want := range []string{"28 of 30 rows rejected (first 20 shown)", `orders row 1: column "id": expected integer`,
		`orders row 2: column "customer" must not be null`, `orders row 3: column "total": expected numeric`} {
		if !strings.Contains(f.Warning, want) {
			t.Errorf("warning %q lacks %q", f.Warning, want)
		}
	}
	tables := e.tables(t)
	if got := colTypes(tables["orders"]); got != "id:integer customer:text total:numeric zip:integer" || tables["orders"].RowCount != 1 {
		t.Fatalf("orders: %s, %d rows", got, tables["orders"].RowCount)
	}
	rows := e.rows(t, "orders", docindex.RowsQuery{})
	if len(rows) != 1 || rows[0]["customer"] != "ann again" || rows[0]["zip"] != int64(4) {
		t.Errorf("rows %v", rows)
	}
	// The other defined table exists, empty.
	if ti, ok := tables["customers"]; !ok || ti.RowCount != 0 {
		t.Errorf("customers %+v", tables)
	}
	// Deleting the file empties the defined table and keeps its definition.
	if r := e.s.Do("DELETE", "/files/"+f.ID.String(), e.tok, nil); r.Status != http.StatusNoContent && r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	tables = e.tables(t)
	if ti, ok := tables["orders"]; !ok || ti.RowCount != 0 || colTypes(ti) != "id:integer customer:text total:numeric zip:integer" {
		t.Errorf("after delete: %+v", tables)
	}
	// A file whose header does not fit the definition fails for good, at once.
	f = e.upload(t, "orders.csv", "", []byte("id,colour\n1,red\n"))
	if f.Status != "failed" || !strings.Contains(f.Warning, `header "colour"`) {
		t.Errorf("status %s warning %q", f.Status, f.Warning)
	}
}

func TestImportReindexAndDelete(t *testing.T) {
	e := newImportEnv(t, nil)
	f := e.upload(t, "people.csv", "", []byte("name,age\nann,30\nbob,41\n"))
	if f.Status != "indexed" {
		t.Fatalf("status %s %q", f.Status, f.Warning)
	}
	// A reindex recreates the table from the same blob: no duplicate rows.
	r := e.s.Do("POST", "/files/"+f.ID.String()+"/reindex", e.tok, nil)
	if r.Status >= 300 {
		t.Fatalf("reindex: %d %s", r.Status, r.Body)
	}
	e.s.WaitIdle(30 * time.Second)
	if f = e.file(t, f.ID); f.Status != "indexed" || e.tables(t)["people"].RowCount != 2 {
		t.Fatalf("after reindex: %s, %+v", f.Status, e.tables(t))
	}
	// Another upload of that name replaces the table and owns it; the first file's delete then
	// leaves it alone.
	g := e.upload(t, "people.csv", "", []byte("name,age\ncat,5\n"))
	if g.Status != "indexed" || e.tables(t)["people"].RowCount != 1 {
		t.Fatalf("replaced: %s %+v", g.Status, e.tables(t))
	}
	other := e.upload(t, "pets.jsonl", "", []byte(`{"name":"rex"}`+"\n"))
	for _, id := range []uuid.UUID{f.ID, g.ID} {
		if r := e.s.Do("DELETE", "/files/"+id.String(), e.tok, nil); r.Status >= 300 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		_, still := e.tables(t)["people"]
		if still != (id == f.ID) {
			t.Fatalf("after deleting %s: tables %v", id, e.tables(t))
		}
	}
	var exists bool
	if err := e.s.DB.QueryRowContext(context.Background(), "SELECT to_regclass(?) IS NOT NULL",
		dataset.Schema(e.coll)+".people").Scan(&exists); err != nil || exists {
		t.Fatalf("people table still exists: %v %v", exists, err)
	}
	if tables := e.tables(t); len(tables) != 1 || tables["pets"].RowCount != 1 || other.Status != "indexed" {
		t.Fatalf("tables %v", tables)
	}
}

func TestImportUnparseableFileFails(t *testing.T) {
	e := newImportEnv(t, nil)
	cases := map[string]string{
		"notes.pdf":  "%PDF-1.4 not a table",
		"book.xlsx":  "this is no workbook",
		"lines.json": "{}",
		"rows.jsonl": "not json\nnor this\n",
		"empty.csv":  "",
	}
	for name, content := range cases {
		f := e.upload(t, name, "", []byte(content))
		if f.Status != "failed" || !strings.Contains(f.Warning, "cannot import file") {
			t.Errorf("%s: status %s warning %q", name, f.Status, f.Warning)
		}
		d, err := e.s.Svc.GetFile(context.Background(), e.p, f.ID)
		if err != nil || len(d.Jobs) != 1 || d.Jobs[0].Status != "failed" || d.Jobs[0].RetryCount != 0 {
			t.Errorf("%s: jobs %+v %v (a permanent failure is not retried)", name, d.Jobs, err)
		}
	}
	if tables := e.tables(t); len(tables) != 0 {
		t.Errorf("tables %v", tables)
	}
}
