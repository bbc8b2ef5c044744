package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

func extract(t *testing.T, e *Extractor, path, name, contentType string) *Document {
	t.Helper()
	d, err := e.Extract(context.Background(), path, name, contentType)
	if err != nil {
		t.Fatalf("extract %s: %v", name, err)
	}
	return d
}

// onePage checks a document of an unpaged format and returns its text.
func onePage(t *testing.T, d *Document, format string) string {
	t.Helper()
	if d.Format != format {
		t.Fatalf("format %q, want %q", d.Format, format)
	}
	if d.PageCount != 0 || len(d.Pages) != 1 || d.Pages[0].Number != 0 {
		t.Fatalf("page count %d, pages %+v; want one page numbered 0", d.PageCount, d.Pages)
	}
	return d.Pages[0].Text
}

func TestText(t *testing.T) {
	dir := t.TempDir()
	e := New()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"utf8.txt", []byte("\xEF\xBB\xBFGrüße aus Köln\r\nzweite Zeile  \n\n\n\ndritte\x00 Zeile\n"), "Grüße aus Köln\nzweite Zeile\n\ndritte Zeile"},
		{"latin.txt", []byte("caf\xe9 cr\xe8me \x93quoted\x94"), "café crème \u201cquoted\u201d"},
		{"utf16.txt", []byte{0xFF, 0xFE, 'h', 0, 0xE9, 0, 'l', 0, 'l', 0, 'o', 0}, "héllo"},
		{"README", []byte("no extension, still text"), "no extension, still text"},
	}
	for _, c := range cases {
		path := writeFile(t, dir, c.name, c.data)
		d := extract(t, e, path, c.name, "")
		if got := onePage(t, d, "text"); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
		if len(d.Warnings) != 0 {
			t.Errorf("%s: warnings %q", c.name, d.Warnings)
		}
	}
}

func TestTextCap(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("ünïcödé "), 100_000) // 1.2 MB, two-byte runes to cut in the middle of
	e := New(WithMaxTextBytes(1001))
	for _, name := range []string{"big.txt", "big.md", "big.json", "big.html"} {
		d := extract(t, e, writeFile(t, dir, name, big), name, "")
		text := d.Text()
		if len(text) > 1001 || len(text) < 900 {
			t.Errorf("%s: %d bytes of text, want at most the 1001 byte cap", name, len(text))
		}
		if !hasWarning(d, "text cut at 1001 bytes") {
			t.Errorf("%s: warnings %q", name, d.Warnings)
		}
		if strings.ContainsRune(text, '\uFFFD') {
			t.Errorf("%s: a rune was split by the cut", name)
		}
	}
}

func TestEmptyFile(t *testing.T) {
	path := writeFile(t, t.TempDir(), "empty.txt", nil)
	d := extract(t, New(), path, "empty.txt", "text/plain")
	if len(d.Pages) != 0 || !hasWarning(d, "no text") {
		t.Fatalf("pages %+v warnings %q", d.Pages, d.Warnings)
	}
}

func TestMarkdown(t *testing.T) {
	dir := t.TempDir()
	e := New()
	src := "---\ntitle: \"Install Guide\"\ntags: [a]\n---\n# Installing\n\nRun `make`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
	d := extract(t, e, writeFile(t, dir, "guide.md", []byte(src)), "guide.md", "")
	if got := onePage(t, d, "markdown"); got != "# Installing\n\nRun `make`.\n\n| a | b |\n|---|---|\n| 1 | 2 |" {
		t.Errorf("text %q", got)
	}
	if d.Title != "Install Guide" {
		t.Errorf("title %q", d.Title)
	}
	// The first level-1 heading is the title when there is no front matter; the
	// declared type decides over a .txt name.
	d = extract(t, e, writeFile(t, dir, "notes.txt", []byte("Intro line\n\nSetext Title\n============\n\n# Later\n")), "notes.txt", "text/markdown")
	if d.Format != "markdown" || d.Title != "Setext Title" {
		t.Errorf("format %q title %q", d.Format, d.Title)
	}
	for src, want := range map[string]string{
		"# C# Guide ##\n": "C# Guide",
		"intro\r\n\r\nWindows Title\r\n===\r\nbody": "Windows Title",
		"## Second level\n\n#\tTabbed\n":            "Tabbed",
		"#hashtag\n\n===\nno title above\n":         "",
		"plain text only":                           "",
		"Underlined\n= = =\n":                       "",
	} {
		d := extract(t, e, writeFile(t, dir, "t.md", []byte(src)), "t.md", "")
		if d.Title != want {
			t.Errorf("title of %q = %q, want %q", src, d.Title, want)
		}
	}
}

func TestJSON(t *testing.T) {
	dir := t.TempDir()
	e := New()
	d := extract(t, e, writeFile(t, dir, "data.json", []byte(`{"name":"docindex","tags":["a","b"],"n":1}`)), "data.json", "")
	want := "{\n  \"name\": \"docindex\",\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ],\n  \"n\": 1\n}"
	if got := onePage(t, d, "json"); got != want {
		t.Errorf("got %q", got)
	}
	d = extract(t, e, writeFile(t, dir, "bad.json", []byte(`{"name": "unterminated`)), "bad.json", "application/json")
	if got := onePage(t, d, "json"); got != `{"name": "unterminated` || !hasWarning(d, "invalid JSON") {
		t.Errorf("got %q, warnings %q", got, d.Warnings)
	}
}

const testHTML = `<!DOCTYPE html>
<html><head><meta charset="windows-1252"><title>Caf` + "\xe9" + ` Guide</title><style>body{color:red}</style>
<script>var secret = "tracking";</script></head>
<body>
<header><nav><a href="/">Home</a> <a href="/about">About us</a></nav><div class="logo">SiteLogo</div></header>
<aside>Sidebar ad</aside>
<main>
<article><header><h1>Brewing Coffee</h1><p class="byline">by Ana</p></header>
<p>Use <strong>fresh</strong> beans and <a href="https://example.org/grind">grind</a> them.</p>
<h2 id="ratios">Ratios<a class="headerlink" href="#ratios">¶</a></h2>
<table><tr><th>Method</th><th>Grams per litre</th></tr><tr><td>Filter</td><td>60</td></tr></table>
<ul><li>Weigh</li><li>Pour</li></ul>
<pre><code>water = 1000</code></pre>
</article>
<form><input name="q"><button>Search</button></form>
</main>
<footer>Copyright 2026 Footer Inc</footer>
</body></html>`

func TestHTML(t *testing.T) {
	path := writeFile(t, t.TempDir(), "page.html", []byte(testHTML))
	d := extract(t, New(), path, "page.html", "")
	text := onePage(t, d, "html")
	if d.Title != "Café Guide" {
		t.Errorf("title %q", d.Title)
	}
	for _, want := range []string{
		"# Brewing Coffee", "by Ana", "Use **fresh** beans and [grind](https://example.org/grind) them.",
		"## Ratios", "| Method | Grams per litre |", "| Filter | 60 |", "- Weigh\n- Pour", "water = 1000",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	for _, noise := range []string{"Home", "About us", "SiteLogo", "Sidebar", "tracking", "color:red", "Footer Inc", "Search"} {
		if strings.Contains(text, noise) {
			t.Errorf("noise %q kept in\n%s", noise, text)
		}
	}
}

func TestHTMLWithoutMain(t *testing.T) {
	path := writeFile(t, t.TempDir(), "plain.htm", []byte(`<html><body><nav>Menu</nav><h1>Only Body</h1><p>Body text.</p></body></html>`))
	d := extract(t, New(), path, "plain.htm", "text/html; charset=utf-8")
	if got := onePage(t, d, "html"); got != "# Only Body\n\nBody text." || d.Title != "Only Body" {
		t.Errorf("text %q title %q", got, d.Title)
	}
}

func TestCSV(t *testing.T) {
	dir := t.TempDir()
	e := New()
	cases := []struct {
		name, data, want string
	}{
		{"comma.csv", "name,city,note\nAna,Oslo,\"likes | pipes\"\nBo,\"Rio\nde Janeiro\",\n\n", "| name | city | note |\n| --- | --- | --- |\n| Ana | Oslo | likes \\| pipes |\n| Bo | Rio<br>de Janeiro | |"},
		{"semicolon.csv", "\xEF\xBB\xBFa;b;c\n1;2,5;3\n", "| a | b | c |\n| --- | --- | --- |\n| 1 | 2,5 | 3 |"},
		{"tabs.tsv", "x\ty\n1\t2\n", "| x | y |\n| --- | --- |\n| 1 | 2 |"},
		{"ragged.csv", "h1,h2\n1,2,3\n4\n", "| h1 | h2 |\n| --- | --- |\n| 1 | 2 | 3 |\n| 4 | |"},
	}
	for _, c := range cases {
		d := extract(t, e, writeFile(t, dir, c.name, []byte(c.data)), c.name, "")
		if got := onePage(t, d, "csv"); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
	// A row cap by text size cuts the table with a warning, reading row by row.
	var big strings.Builder
	for range 20_000 {
		big.WriteString("alpha,beta,gamma\n")
	}
	d := extract(t, New(WithMaxTextBytes(4096)), writeFile(t, dir, "big.csv", []byte(big.String())), "big.csv", "text/csv")
	if len(d.Text()) > 4096 || !hasWarning(d, "text cut") {
		t.Errorf("%d bytes, warnings %q", len(d.Text()), d.Warnings)
	}
}

func TestXLSX(t *testing.T) {
	f := excelize.NewFile()
	f.SetDocProps(&excelize.DocProperties{Title: "Budget 2026"})
	f.SetSheetName("Sheet1", "Costs")
	for cell, v := range map[string]any{"A1": "Item", "B1": "Amount", "A2": "Rent", "B2": 1200, "A3": "Power | gas", "B3": 85.5, "A5": "Total", "B5": 1285.5} {
		f.SetCellValue("Costs", cell, v)
	}
	f.NewSheet("Notes")
	f.SetCellValue("Notes", "B2", "Reviewed by Ana")
	f.NewSheet("Empty")
	path := filepath.Join(t.TempDir(), "budget.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	d := extract(t, New(), path, "budget.xlsx", "application/octet-stream")
	if d.Format != "xlsx" || d.Title != "Budget 2026" || len(d.Pages) != 2 {
		t.Fatalf("format %q title %q pages %+v", d.Format, d.Title, d.Pages)
	}
	want := []string{
		"## Costs\n\n| Item | Amount |\n| --- | --- |\n| Rent | 1200 |\n| Power \\| gas | 85.5 |\n| Total | 1285.5 |",
		"## Notes\n\n| | Reviewed by Ana |\n| --- | --- |",
	}
	for i, p := range d.Pages {
		if p.Text != want[i] || p.Number != 0 {
			t.Errorf("page %d (number %d):\n%s\nwant\n%s", i, p.Number, p.Text, want[i])
		}
	}
}

func TestDOCX(t *testing.T) {
	path := writeDOCX(t, t.TempDir())
	d := extract(t, New(), path, "report.docx", "")
	want := `# Quarterly Report

# Revenue grew

Sales rose by twelve percent in the north. See page 3

Line one
line two	after tab

## Regional detail

- North: strong
  - Oslo office

| Region | Revenue |
| --- | --- |
| North \| East | 1.2M est. |
| South | Q1 / 0.4M |

Text box note

Closing paragraph.`
	if got := onePage(t, d, "docx"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if d.Title != "Q3 Report & Outlook" || len(d.Warnings) != 0 {
		t.Errorf("title %q warnings %q", d.Title, d.Warnings)
	}
}

func TestPPTX(t *testing.T) {
	path := writePPTX(t, t.TempDir())
	d := extract(t, New(), path, "deck.pptx", "")
	if d.Format != "pptx" || d.PageCount != 3 || len(d.Pages) != 3 {
		t.Fatalf("format %q, page count %d, pages %+v", d.Format, d.PageCount, d.Pages)
	}
	want := []string{
		"# Product Launch\n\nWelcome to the launch\n\nAgenda follows\n\nNotes:\n\nRemember to mention the pilot customers.",
		"# Performance\n\n| Metric | Value |\n| --- | --- |\n| Latency | 42 ms |\n\nGrouped caption",
		"# Next steps\n\nShip it",
	}
	for i, p := range d.Pages {
		if p.Number != i+1 || p.Text != want[i] {
			t.Errorf("slide %d (number %d):\n%s\nwant\n%s", i+1, p.Number, p.Text, want[i])
		}
	}
	if d.Title != "Product Launch" {
		t.Errorf("title %q", d.Title)
	}
	d = extract(t, New(WithMaxPages(1)), path, "deck.pptx", "")
	if len(d.Pages) != 1 || d.PageCount != 3 || !hasWarning(d, "page cap") {
		t.Errorf("with a cap of 1: pages %d of %d, warnings %q", len(d.Pages), d.PageCount, d.Warnings)
	}
}

func TestODT(t *testing.T) {
	path := writeODT(t, t.TempDir())
	d := extract(t, New(), path, "notes.odt", "")
	want := `# Field Notes

Footnote about the bridge.

The river was high,  and the	bridge closed.

## Observations in May

- Herons nesting
  - Three pairs
- Water cold

| Site | Count |
| --- | --- |
| Upper weir | 7 |

See appendix.`
	if got := onePage(t, d, "odt"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if d.Title != "River Survey" {
		t.Errorf("title %q", d.Title)
	}
}

func TestUnsupportedAndBroken(t *testing.T) {
	dir := t.TempDir()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde")
	ole := append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, make([]byte, 600)...)
	var zipBuf bytes.Buffer
	zw := zip.NewWriter(&zipBuf)
	w, _ := zw.Create("readme.txt")
	w.Write([]byte("an archive"))
	zw.Close()
	cases := []struct {
		name, contentType string
		data              []byte
		want              error
		notWant           error
	}{
		{"photo.png", "", png, ErrUnsupported, ErrCorrupt},
		{"photo.txt", "text/plain", png, ErrUnsupported, ErrCorrupt},
		{"bundle.zip", "", zipBuf.Bytes(), ErrUnsupported, ErrCorrupt},
		{"legacy.doc", "application/msword", ole, ErrUnsupported, ErrEncrypted},
		{"locked.docx", "", ole, ErrEncrypted, nil},
		{"locked.xlsx", "", ole, ErrEncrypted, nil},
		{"broken.docx", "", []byte("PK\x03\x04 not really a zip"), ErrCorrupt, nil},
		{"archive.docx", "", zipBuf.Bytes(), ErrCorrupt, nil},
		{"archive.pptx", "", zipBuf.Bytes(), ErrCorrupt, nil},
		{"archive.odt", "", zipBuf.Bytes(), ErrCorrupt, nil},
		{"archive.xlsx", "", zipBuf.Bytes(), ErrCorrupt, nil},
		{"text.pdf", "application/pdf", []byte("hello"), ErrCorrupt, nil},
	}
	e := New()
	for _, c := range cases {
		_, err := e.Extract(context.Background(), writeFile(t, dir, c.name, c.data), c.name, c.contentType)
		if !errors.Is(err, c.want) || !errors.Is(err, ErrUnsupported) || c.notWant != nil && errors.Is(err, c.notWant) {
			t.Errorf("%s: error %v; want %v", c.name, err, c.want)
		}
	}
	_, err := e.Extract(context.Background(), filepath.Join(dir, "missing.txt"), "missing.txt", "")
	if err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("missing file: error %v; want a non-permanent error", err)
	}
}

func TestEncryptedODT(t *testing.T) {
	path := writeZip(t, filepath.Join(t.TempDir(), "secret.odt"),
		part{"mimetype", "application/vnd.oasis.opendocument.text"},
		part{"META-INF/manifest.xml", `<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"><manifest:encryption-data manifest:checksum-type="SHA1/1K" manifest:checksum="x"><manifest:algorithm manifest:algorithm-name="Blowfish CFB" manifest:initialisation-vector="x"/></manifest:encryption-data></manifest:file-entry></manifest:manifest>`},
		part{"content.xml", "\x8f\x01binary ciphertext"},
	)
	_, err := New().Extract(context.Background(), path, "secret.odt", "")
	if !errors.Is(err, ErrEncrypted) {
		t.Fatalf("error %v; want ErrEncrypted", err)
	}
}

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	xlsx := excelize.NewFile()
	xlsxPath := filepath.Join(dir, "x.bin")
	if err := xlsx.SaveAs(filepath.Join(dir, "x.xlsx")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "x.xlsx"))
	writeFile(t, dir, "x.bin", data)
	docx := writeDOCX(t, dir)
	cases := []struct{ path, name, want string }{
		{"testdata/words.pdf", "upload", "application/pdf"},
		{docx, "no-extension", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{writePPTX(t, dir), "deck.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
		{writeODT(t, dir), "notes", "application/vnd.oasis.opendocument.text"},
		{xlsxPath, "sheet", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
		{writeFile(t, dir, "a.md", []byte("# Title\n\ntext\n")), "a.md", "text/markdown"},
		{writeFile(t, dir, "a.csv", []byte("a,b\n1,2\n")), "a.csv", "text/csv"},
		{writeFile(t, dir, "p.html", []byte("<!DOCTYPE html><html><body>x</body></html>")), "p.html", "text/html; charset=utf-8"},
		{writeFile(t, dir, "n.txt", []byte("plain words\n")), "n.txt", "text/plain; charset=utf-8"},
		{writeFile(t, dir, "d.json", []byte(`{"a": 1}`)), "d.json", "application/json"},
	}
	for _, c := range cases {
		got, err := Detect(c.path, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s (%s): %q, want %q", filepath.Base(c.path), c.name, got, c.want)
		}
	}
	if _, err := Detect(filepath.Join(dir, "missing"), "missing"); err == nil {
		t.Error("no error for a missing file")
	}
}

// The content decides for binary formats whatever the client declared; a specific
// declared type decides between text formats; the extension comes next.
func TestFormatResolution(t *testing.T) {
	dir := t.TempDir()
	md := writeFile(t, dir, "f", []byte("# Heading\n\n<b>not html</b>\n"))
	htmlAsTxt := writeFile(t, dir, "h", []byte("<html><body><p>markup</p></body></html>"))
	cases := []struct{ path, name, contentType, want string }{
		{"testdata/words.pdf", "report.docx", "text/plain", "pdf"},
		{writeDOCX(t, dir), "scan.pdf", "application/pdf", "docx"},
		{md, "notes.md", "", "markdown"},
		{md, "notes.txt", "text/markdown; charset=utf-8", "markdown"},
		{md, "notes", "application/octet-stream", "text"},
		{htmlAsTxt, "page.txt", "", "text"},
		{htmlAsTxt, "page", "", "html"},
		{htmlAsTxt, "page.txt", "text/html", "html"},
		{writeFile(t, dir, "j", []byte(`{"k": [1, 2]}`)), "data", "", "json"},
		{writeFile(t, dir, "c", []byte("a,b\n1,2\n")), "table.tsv", "text/plain", "csv"},
	}
	for _, c := range cases {
		got, err := formatOf(c.path, c.name, c.contentType)
		if err != nil || got != c.want {
			t.Errorf("%s as %q (%q): %q, %v; want %q", filepath.Base(c.path), c.name, c.contentType, got, err, c.want)
		}
	}
}

func TestExtractCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := writeDOCX(t, t.TempDir())
	if _, err := New().Extract(ctx, path, "report.docx", ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v; want context.Canceled", err)
	}
}
