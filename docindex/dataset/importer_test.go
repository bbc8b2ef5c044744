package dataset

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func plan(t *testing.T, path, name, ctype string, declared Tables) *Plan {
	t.Helper()
	p, err := PlanImport(path, name, ctype, declared)
	if err != nil {
		t.Fatalf("plan %s: %v", name, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// bindAll runs the second pass of a planned table without a database.
func bindAll(t *testing.T, p *Plan, pt *PlannedTable) (rows [][]any, errs map[int]string) {
	t.Helper()
	r, err := pt.sheet.open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	b := newBinder(pt, p.strict)
	errs = map[int]string{}
	header := p.Format == JSONL
	index := -1
	for {
		rec, err := r.next()
		if err == io.EOF {
			return rows, errs
		}
		if err != nil {
			t.Fatal(err)
		}
		if !header {
			header = !rec.blank
			continue
		}
		index++
		if rec.blank {
			continue
		}
		row, err := b.bind(rec)
		if err != nil {
			errs[index] = err.Error()
			continue
		}
		rows = append(rows, row)
	}
}

func types(tb Table) string {
	var s []string
	for _, c := range tb.Columns {
		s = append(s, c.Name+":"+c.Type)
	}
	return strings.Join(s, " ")
}

func TestSanitizeAndNames(t *testing.T) {
	cases := map[string]string{
		"Sales 2024.csv":        "sales_2024",
		"sales.csv":             "sales",
		"2024 Q1.xlsx":          "t_2024_q1",
		"Umsätze März.tsv":      "umsatze_marz",
		"dir/sub/Orders.jsonl":  "orders",
		`C:\exports\Items.csv`:  "items",
		"---.csv":               "data",
		"already_fine_1.csv":    "already_fine_1",
		"report.final.v2.csv":   "report_final_v2",
		strings.Repeat("x", 80): strings.Repeat("x", 63),
	}
	for in, want := range cases {
		if got := FileTableName(in); got != want {
			t.Errorf("FileTableName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := SanitizeIdent("Order ID", "c_", "x"); got != "order_id" {
		t.Errorf("got %q", got)
	}
	if got := SanitizeIdent("1st", "c_", "x"); got != "c_1st" {
		t.Errorf("got %q", got)
	}
	if got := SanitizeIdent("", "c_", "column_3"); got != "column_3" {
		t.Errorf("got %q", got)
	}
	taken := map[string]bool{}
	if a, b, c := dedupe("a", taken), dedupe("a", taken), dedupe("a", taken); a != "a" || b != "a_2" || c != "a_3" {
		t.Errorf("dedupe %s %s %s", a, b, c)
	}
	long := strings.Repeat("y", 63)
	taken[long] = true
	if got := dedupe(long, taken); len(got) > 63 || !strings.HasSuffix(got, "_2") || !ValidIdent(got) {
		t.Errorf("dedupe of a long name: %q", got)
	}
}

func TestDetectFormat(t *testing.T) {
	cases := []struct {
		name, ctype string
		want        Format
	}{
		{"a.csv", "", CSV},
		{"a.CSV", "application/octet-stream", CSV},
		{"a.tsv", "", TSV},
		{"a.tab", "", TSV},
		{"a.xlsx", "", XLSX},
		{"a.jsonl", "", JSONL},
		{"a.ndjson", "", JSONL},
		{"export", "text/csv; charset=utf-8", CSV},
		{"export.txt", "text/tab-separated-values", TSV},
		{"export", "application/x-ndjson", JSONL},
		{"export", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", XLSX},
	}
	for _, c := range cases {
		got, err := DetectFormat(c.name, c.ctype)
		if err != nil || got != c.want {
			t.Errorf("DetectFormat(%q, %q) = %q, %v; want %q", c.name, c.ctype, got, err, c.want)
		}
	}
	for _, c := range [][2]string{{"a.pdf", "application/pdf"}, {"a.xls", "application/vnd.ms-excel"}, {"a", ""}} {
		if _, err := DetectFormat(c[0], c[1]); !errors.Is(err, ErrBadFile) {
			t.Errorf("DetectFormat(%q, %q): %v, want ErrBadFile", c[0], c[1], err)
		}
	}
}

func TestInferCSV(t *testing.T) {
	csv := "\ufeffOrder ID,Amount,Paid,Day,Zip,Note,Flag,Empty,Order ID,Big\n" +
		"1,10.50,yes,2024-05-01,007,hello,1,,a,9223372036854775808\n" +
		"2,3,no,2024-05-02 13:45,01234,\"multi\nline, quoted\",0,,b,1\n" +
		"\n" +
		"-3,-0.5,TRUE,2024-05-03T10:00:00+02:00,12345, ,1,,c,2\n"
	p := plan(t, writeFile(t, "Sales 2024.csv", csv), "Sales 2024.csv", "text/csv", nil)
	if len(p.Tables) != 1 {
		t.Fatalf("tables %+v", p.Tables)
	}
	pt := &p.Tables[0]
	want := "order_id:integer amount:numeric paid:boolean day:timestamp zip:text note:text flag:integer empty:text order_id_2:text big:numeric"
	if pt.Name != "sales_2024" || types(pt.Table) != want || pt.Declared {
		t.Fatalf("table %s: %s\nwant %s", pt.Name, types(pt.Table), want)
	}
	rows, errs := bindAll(t, p, pt)
	if len(errs) != 0 || len(rows) != 3 {
		t.Fatalf("rows %v errors %v", rows, errs)
	}
	if rows[0][0] != int64(1) || rows[0][2] != true || rows[0][4] != "007" || rows[0][7] != nil {
		t.Errorf("row 0: %v", rows[0])
	}
	if rows[0][1] != "10.50" || rows[0][9] != "9223372036854775808" {
		t.Errorf("numerics: %#v %#v", rows[0][1], rows[0][9])
	}
	if rows[1][5] != "multi\nline, quoted" {
		t.Errorf("quoted cell: %q", rows[1][5])
	}
	if ts, ok := rows[2][3].(time.Time); !ok || !ts.Equal(time.Date(2024, 5, 3, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("timestamp: %v", rows[2][3])
	}
	if rows[2][5] != nil {
		t.Errorf("a blank cell is null: %q", rows[2][5])
	}
}

func TestInferMixedColumnsFallBackToText(t *testing.T) {
	csv := "a,b,c,d\n1,1.5,yes,2024-01-01\n2.5,x,maybe,2024-13-01\n"
	p := plan(t, writeFile(t, "m.csv", csv), "m.csv", "", nil)
	if got := types(p.Tables[0].Table); got != "a:numeric b:text c:text d:text" {
		t.Fatalf("types %s", got)
	}
}

func TestDelimitersAndEncodings(t *testing.T) {
	// TSV by extension; semicolons sniffed in a .csv; Windows-1252 when not UTF-8.
	p := plan(t, writeFile(t, "t.tsv", "name\tqty\nann\t3\n"), "t.tsv", "", nil)
	if got := types(p.Tables[0].Table); got != "name:text qty:integer" {
		t.Errorf("tsv: %s", got)
	}
	p = plan(t, writeFile(t, "s.csv", "name;price\nann;3.5\n"), "s.csv", "", nil)
	if got := types(p.Tables[0].Table); got != "name:text price:numeric" {
		t.Errorf("semicolons: %s", got)
	}
	p = plan(t, writeFile(t, "w.csv", "name,city\nJos\xe9,K\xf6ln\n"), "w.csv", "", nil)
	rows, _ := bindAll(t, p, &p.Tables[0])
	if len(rows) != 1 || rows[0][0] != "José" || rows[0][1] != "Köln" {
		t.Errorf("windows-1252: %q", rows)
	}
}

func TestCSVRecordErrors(t *testing.T) {
	csv := "a,b\n1,x\n2\n3,y,extra\n4,z,\n5,\"bad\x00\"\n"
	p := plan(t, writeFile(t, "e.csv", csv), "e.csv", "", nil)
	rows, errs := bindAll(t, p, &p.Tables[0])
	if len(rows) != 2 {
		t.Errorf("rows %v", rows)
	}
	if !strings.Contains(errs[1], "1 fields, the header has 2") || !strings.Contains(errs[2], "3 fields") ||
		!strings.Contains(errs[4], "NUL") || len(errs) != 3 {
		t.Errorf("errors %v", errs)
	}
	// The rejected records do not decide the types: a is integer although "3,y,extra" exists.
	if got := types(p.Tables[0].Table); got != "a:integer b:text" {
		t.Errorf("types %s", got)
	}
}

func TestDeclaredTable(t *testing.T) {
	no := false
	declared := Tables{"orders": {Columns: []Column{
		{Name: "id", Type: "integer", Primary: true},
		{Name: "customer", Type: "text", Nullable: &no},
		{Name: "total", Type: "numeric"},
		{Name: "note", Type: "text"},
	}}}
	csv := "ID,Customer,Total\n1,ann,10\nx,bob,1\n2,,3\n3,cat,abc\n"
	p := plan(t, writeFile(t, "orders.csv", csv), "orders.csv", "", declared)
	pt := &p.Tables[0]
	if !pt.Declared || types(pt.Table) != "id:integer customer:text total:numeric note:text" {
		t.Fatalf("planned %+v", pt)
	}
	rows, errs := bindAll(t, p, pt)
	if len(rows) != 1 || rows[0][0] != int64(1) || rows[0][3] != nil {
		t.Errorf("rows %v", rows)
	}
	want := map[int]string{1: `column "id": expected integer`, 2: `column "customer" must not be null`, 3: `column "total": expected numeric`}
	for i, w := range want {
		if !strings.Contains(errs[i], w) {
			t.Errorf("row %d: %q, want %q", i, errs[i], w)
		}
	}
	// A header naming an undefined column, or lacking a required one, fails the file.
	for _, bad := range []string{"id,customer,colour\n1,a,red\n", "id,total\n1,2\n"} {
		_, err := PlanImport(writeFile(t, "orders.csv", bad), "orders.csv", "", declared)
		if !errors.Is(err, ErrBadFile) {
			t.Errorf("%q: %v, want ErrBadFile", bad, err)
		}
	}
	// Another file name does not take the definition.
	p = plan(t, writeFile(t, "other.csv", csv), "other.csv", "", declared)
	if p.Tables[0].Declared || p.Tables[0].Name != "other" {
		t.Errorf("other file: %+v", p.Tables[0])
	}
}

func TestJSONLines(t *testing.T) {
	jsonl := `{"id": 1, "name": "ann", "score": 1.5, "ok": true, "at": "2024-05-01", "tags": ["a", "b"]}` + "\n" +
		"\n" +
		`{"id": 2, "name": "bob", "score": 2, "ok": false, "extra": {"k": 1}, "Zip Code": "007"}` + "\n" +
		`not json` + "\n" +
		`[1, 2]` + "\n" +
		`{"id": 3, "name": null}` + "\n"
	p := plan(t, writeFile(t, "people.jsonl", jsonl), "people.jsonl", "", nil)
	pt := &p.Tables[0]
	want := "id:integer name:text score:numeric ok:boolean at:timestamp tags:text extra:text zip_code:text"
	if types(pt.Table) != want {
		t.Fatalf("types %s\nwant %s", types(pt.Table), want)
	}
	rows, errs := bindAll(t, p, pt)
	if len(rows) != 3 || !strings.Contains(errs[3], "invalid JSON") || !strings.Contains(errs[4], "JSON object") || len(errs) != 2 {
		t.Fatalf("rows %v errors %v", rows, errs)
	}
	if rows[0][5] != `["a","b"]` || rows[1][6] != `{"k":1}` || rows[1][7] != "007" || rows[2][1] != nil {
		t.Errorf("rows %v", rows)
	}
	// Defined: unknown keys reject their rows, as ingest does.
	declared := Tables{"people": {Columns: []Column{{Name: "id", Type: "integer"}, {Name: "name", Type: "text"}}}}
	p = plan(t, writeFile(t, "people.jsonl", jsonl), "people.jsonl", "", declared)
	rows, errs = bindAll(t, p, &p.Tables[0])
	if len(rows) != 1 || !strings.Contains(errs[0], "unknown column") || !strings.Contains(errs[2], "unknown column") {
		t.Errorf("declared rows %v errors %v", rows, errs)
	}
	for _, bad := range []string{"not json\nnor this\n", "", "\n\n"} {
		if _, err := PlanImport(writeFile(t, "x.jsonl", bad), "x.jsonl", "", nil); !errors.Is(err, ErrBadFile) {
			t.Errorf("%q: %v, want ErrBadFile", bad, err)
		}
	}
}

func TestUnparseableFiles(t *testing.T) {
	cases := map[string]string{
		"empty.csv":  "",
		"blank.csv":  "\n\n",
		"binary.csv": "PK\x03\x04\x00\x00binary",
		"bad.xlsx":   "this is no zip",
		"notes.txt":  "hello",
	}
	for name, content := range cases {
		if _, err := PlanImport(writeFile(t, name, content), name, "", nil); !errors.Is(err, ErrBadFile) {
			t.Errorf("%s: %v, want ErrBadFile", name, err)
		}
	}
}

// workbook writes an XLSX with excelize: typed cells, display formats, two sheets.
func workbook(t *testing.T, sheets map[string][][]any, styles map[string]int) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	first := true
	for name, rows := range sheets {
		if first {
			if err := f.SetSheetName("Sheet1", name); err != nil {
				t.Fatal(err)
			}
			first = false
		} else if _, err := f.NewSheet(name); err != nil {
			t.Fatal(err)
		}
		for i, row := range rows {
			cell, _ := excelize.CoordinatesToCellName(1, i+1)
			if err := f.SetSheetRow(name, cell, &row); err != nil {
				t.Fatal(err)
			}
		}
	}
	for ref, numFmt := range styles {
		sheet, cell, _ := strings.Cut(ref, "!")
		st, err := f.NewStyle(&excelize.Style{NumFmt: numFmt})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.SetCellStyle(sheet, cell, cell, st); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "book.xlsx")
	if err := f.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestXLSX(t *testing.T) {
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	path := workbook(t, map[string][][]any{"Data": {
		{"Order ID", "Amount", "Paid", "Day", "Zip", "Share", "Err"},
		{1, 1234.5, true, day, "007", 0.125, "#N/A"},
		{2, 0.1 + 0.2, false, day.Add(36 * time.Hour), "01234", 0.5},
		{},
		{3, 7, true, nil, "x"},
	}}, map[string]int{"Data!B2": 4, "Data!F2": 10, "Data!F3": 10, "Data!D5": 14})
	p := plan(t, path, "Monthly Sales.xlsx", "", nil)
	pt := &p.Tables[0]
	want := "order_id:integer amount:numeric paid:boolean day:timestamp zip:text share:numeric err:text"
	if len(p.Tables) != 1 || pt.Name != "monthly_sales" || types(pt.Table) != want {
		t.Fatalf("%s: %s\nwant %s", pt.Name, types(pt.Table), want)
	}
	rows, errs := bindAll(t, p, pt)
	if len(rows) != 3 || len(errs) != 0 {
		t.Fatalf("rows %v errors %v", rows, errs)
	}
	num := func(v any) string { s, _ := v.(string); return s }
	if rows[0][0] != int64(1) || num(rows[0][1]) != "1234.5" || rows[0][2] != true || rows[0][4] != "007" ||
		num(rows[0][5]) != "0.125" || rows[0][6] != nil {
		t.Errorf("row 0: %v", rows[0])
	}
	if ts, _ := rows[0][3].(time.Time); !ts.Equal(day) {
		t.Errorf("date: %v", rows[0][3])
	}
	if ts, _ := rows[1][3].(time.Time); !ts.Equal(day.Add(36 * time.Hour)) {
		t.Errorf("date-time: %v", rows[1][3])
	}
	if num(rows[1][1]) != "0.3" || rows[1][2] != false {
		t.Errorf("row 1: %v %v", num(rows[1][1]), rows[1])
	}
	if rows[2][3] != nil {
		t.Errorf("row 2: %v", rows[2])
	}
}

func TestXLSXSheets(t *testing.T) {
	path := workbook(t, map[string][][]any{
		"Q1 2024": {{"a"}, {1}},
		"Notes":   {{"text", "n"}, {"x", 2}},
		"Empty":   {},
	}, nil)
	p := plan(t, path, "Book.xlsx", "", nil)
	got := map[string]string{}
	for _, pt := range p.Tables {
		got[pt.Name] = pt.Sheet
	}
	if len(got) != 2 || got["book_q1_2024"] != "Q1 2024" || got["book_notes"] != "Notes" {
		t.Fatalf("tables %v", got)
	}
}
