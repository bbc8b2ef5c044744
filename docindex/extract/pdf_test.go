package extract

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/words.pdf from the test PDF writer")

// pdfReaders are the two PDF paths: poppler's pdftotext (installed by
// scripts/extract-deps.sh) and the pure Go reader.
func pdfReaders(t *testing.T, opts ...Option) map[string]*Extractor {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Fatal("pdftotext is not on PATH: run scripts/extract-deps.sh (installs poppler-utils)")
	}
	poppler := New(opts...)
	if !poppler.UsesPdftotext() {
		t.Fatal("New did not pick up pdftotext from PATH")
	}
	return map[string]*Extractor{
		"pdftotext": poppler,
		"go":        New(append(opts, WithPdftotext(""))...),
	}
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPDFFixtureCurrent(t *testing.T) {
	want := wordsPDF().bytes()
	if *update {
		if err := os.WriteFile("testdata/words.pdf", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("testdata/words.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("testdata/words.pdf differs from wordsPDF(): run this test with -update and remake words-cairo.pdf (testdata/README.md)")
	}
}

// wantWordsPages is the text each reader must find on the pages of the words fixture,
// line by line: words separated by single spaces, none glued together, kerned words
// whole.
var wantWordsPages = [][]string{
	{"The quick brown fox", "jumps over the lazy dog.", "Word kerning stays whole", "Spaces drawn as glyphs.", "CAPITAL LETTERS 42"},
	{"Second page title", "A café serves espresso near", "the station.", "Another paragraph after a gap."},
	{"Third page, first line", "second line via T-star", "Footer from a form XObject"},
}

func TestPDFWordsAndPages(t *testing.T) {
	dir := t.TempDir()
	cid := wordsPDF()
	cid.cid = true
	fixtures := map[string]struct {
		path  string
		title string
	}{
		"type1 widths":     {"testdata/words.pdf", "Words Test Document"},
		"cairo truetype":   {"testdata/words-cairo.pdf", ""},
		"type0 identity-h": {writeFile(t, dir, "cid.pdf", cid.bytes()), "Words Test Document"},
		"uncompressed":     {writeFile(t, dir, "plain.pdf", (&testPDF{title: "Words Test Document", pages: fixturePages, form: fixtureForm, noFlate: true}).bytes()), "Words Test Document"},
		"owner password only": {writeFile(t, dir, "owner.pdf", func() []byte {
			p := wordsPDF()
			p.encrypt, p.ownerPw = true, "owner-secret"
			return p.bytes()
		}()), "Words Test Document"},
	}
	for reader, e := range pdfReaders(t) {
		for name, fx := range fixtures {
			t.Run(reader+"/"+name, func(t *testing.T) {
				d, err := e.Extract(context.Background(), fx.path, "doc.pdf", "application/pdf")
				if err != nil {
					t.Fatal(err)
				}
				if d.Format != "pdf" || d.PageCount != 3 || len(d.Pages) != 3 {
					t.Fatalf("format %q, page count %d, %d pages; want pdf, 3, 3", d.Format, d.PageCount, len(d.Pages))
				}
				if len(d.Warnings) != 0 {
					t.Errorf("warnings %q", d.Warnings)
				}
				if d.Title != fx.title {
					t.Errorf("title %q, want %q", d.Title, fx.title)
				}
				for i, p := range d.Pages {
					if p.Number != i+1 {
						t.Errorf("page %d has number %d", i+1, p.Number)
					}
					lines := strings.Split(p.Text, "\n")
					for _, want := range wantWordsPages[i] {
						if !containsLine(lines, want) {
							t.Errorf("page %d: no line %q in\n%s", i+1, want, p.Text)
						}
					}
					for _, glued := range []string{"Thequick", "quickbrown", "jumpsover", "lazydog", "Wordkern", "Footerfrom", "CAPITALLETTERS", "LETTERS42"} {
						if strings.Contains(p.Text, glued) {
							t.Errorf("page %d: words glued together (%q) in\n%s", i+1, glued, p.Text)
						}
					}
					for j, other := range wantWordsPages {
						if j != i && strings.Contains(p.Text, other[0]) {
							t.Errorf("page %d holds text of page %d", i+1, j+1)
						}
					}
				}
			})
		}
	}
}

// A standard font drawn without Widths: words placed 2.5 pt after the real end of the
// previous word (0.21 em) must stay apart, which needs Helvetica's real metrics
// (a flat 500/1000 estimate puts "Willow" 1.3 pt wider and glues it to "tree").
func TestPDFStandardFontWithoutWidths(t *testing.T) {
	p := &testPDF{stdFont: "Helvetica", pages: []string{
		"BT /F1 12 Tf 72 720 Td (Willow) Tj 37.16 0 Td (tree) Tj 23.2 0 Td (grows) Tj ET",
	}}
	path := writeFile(t, t.TempDir(), "helvetica.pdf", p.bytes())
	for reader, e := range pdfReaders(t) {
		d, err := e.Extract(context.Background(), path, "helvetica.pdf", "")
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Text(); got != "Willow tree grows" {
			t.Errorf("%s: %q", reader, got)
		}
	}
}

// Text in a CID font without a ToUnicode map is glyph ids, not text: the pure Go
// reader leaves it out and says so rather than index garbage.
func TestPDFFontWithoutUnicodeMap(t *testing.T) {
	p := wordsPDF()
	p.cid, p.noToUni = true, true
	path := writeFile(t, t.TempDir(), "glyphs.pdf", p.bytes())
	d, err := New(WithPdftotext("")).Extract(context.Background(), path, "glyphs.pdf", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pages) != 0 || d.PageCount != 3 {
		t.Errorf("pages %+v of %d; want none of 3", d.Pages, d.PageCount)
	}
	if !hasWarning(d, "no Unicode mapping") {
		t.Errorf("warnings %q", d.Warnings)
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}

func TestPDFEncrypted(t *testing.T) {
	p := wordsPDF()
	p.encrypt, p.userPw, p.ownerPw = true, "user-secret", "owner-secret"
	path := writeFile(t, t.TempDir(), "locked.pdf", p.bytes())
	for reader, e := range pdfReaders(t) {
		t.Run(reader, func(t *testing.T) {
			_, err := e.Extract(context.Background(), path, "locked.pdf", "")
			if !errors.Is(err, ErrEncrypted) || !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v; want ErrEncrypted, which is also ErrUnsupported", err)
			}
		})
	}
}

func TestPDFDamagedPageIsWarning(t *testing.T) {
	p := wordsPDF()
	p.badPage = 2
	path := writeFile(t, t.TempDir(), "damaged.pdf", p.bytes())
	for reader, e := range pdfReaders(t) {
		t.Run(reader, func(t *testing.T) {
			d, err := e.Extract(context.Background(), path, "damaged.pdf", "")
			if err != nil {
				t.Fatal(err)
			}
			if d.PageCount != 3 || len(d.Pages) != 2 || d.Pages[0].Number != 1 || d.Pages[1].Number != 3 {
				t.Fatalf("page count %d, pages %+v; want pages 1 and 3 of 3", d.PageCount, d.Pages)
			}
			if !strings.Contains(d.Pages[1].Text, "Third page, first line") {
				t.Errorf("page 3 text %q", d.Pages[1].Text)
			}
			if len(d.Warnings) == 0 {
				t.Fatal("no warning for the damaged page")
			}
		})
	}
}

func TestPDFCorrupt(t *testing.T) {
	dir := t.TempDir()
	notPDF := writeFile(t, dir, "fake.pdf", []byte("this is a text file that claims to be a PDF\n"))
	truncated := writeFile(t, dir, "head.pdf", wordsPDF().bytes()[:200])
	for reader, e := range pdfReaders(t) {
		for _, path := range []string{notPDF, truncated} {
			t.Run(reader+"/"+filepath.Base(path), func(t *testing.T) {
				_, err := e.Extract(context.Background(), path, filepath.Base(path), "")
				if !errors.Is(err, ErrCorrupt) || !errors.Is(err, ErrUnsupported) {
					t.Fatalf("error %v; want ErrCorrupt", err)
				}
			})
		}
	}
}

func TestPDFPageCap(t *testing.T) {
	for reader, e := range pdfReaders(t, WithMaxPages(2)) {
		t.Run(reader, func(t *testing.T) {
			d, err := e.Extract(context.Background(), "testdata/words.pdf", "words.pdf", "")
			if err != nil {
				t.Fatal(err)
			}
			if d.PageCount != 3 || len(d.Pages) != 2 {
				t.Fatalf("page count %d, %d pages; want 3 and 2", d.PageCount, len(d.Pages))
			}
			if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "page cap") {
				t.Fatalf("warnings %q; want the page cap", d.Warnings)
			}
		})
	}
}

func TestPDFTextCap(t *testing.T) {
	for reader, e := range pdfReaders(t, WithMaxTextBytes(40)) {
		t.Run(reader, func(t *testing.T) {
			d, err := e.Extract(context.Background(), "testdata/words.pdf", "words.pdf", "")
			if err != nil {
				t.Fatal(err)
			}
			if n := len(d.Text()); n > 40 || n < 15 {
				t.Fatalf("%d bytes of text; want about the 40 byte cap: %q", n, d.Text())
			}
			if !strings.HasPrefix(d.Pages[0].Text, "The quick brown fox") {
				t.Errorf("text %q", d.Pages[0].Text)
			}
			if !hasWarning(d, "text cut") {
				t.Fatalf("warnings %q; want the text cap", d.Warnings)
			}
		})
	}
}

func hasWarning(d *Document, sub string) bool {
	for _, w := range d.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func TestPDFWithoutText(t *testing.T) {
	p := &testPDF{pages: []string{"0 0 m 100 100 l S", "10 10 50 50 re f"}}
	path := writeFile(t, t.TempDir(), "scan.pdf", p.bytes())
	for reader, e := range pdfReaders(t) {
		t.Run(reader, func(t *testing.T) {
			d, err := e.Extract(context.Background(), path, "scan.pdf", "")
			if err != nil {
				t.Fatal(err)
			}
			if d.PageCount != 2 || len(d.Pages) != 0 {
				t.Fatalf("page count %d, %d pages; want 2 and none", d.PageCount, len(d.Pages))
			}
			if !hasWarning(d, "no text layer") {
				t.Fatalf("warnings %q", d.Warnings)
			}
		})
	}
}

// When pdftotext fails on a file, the pure Go reader gets a try and says so.
func TestPDFFallbackWhenPdftotextFails(t *testing.T) {
	failing := writeFile(t, t.TempDir(), "pdftotext", []byte("#!/bin/sh\necho 'Syntax Error: broken' >&2\nexit 1\n"))
	if err := os.Chmod(failing, 0o755); err != nil {
		t.Fatal(err)
	}
	e := New(WithPdftotext(failing))
	d, err := e.Extract(context.Background(), "testdata/words.pdf", "words.pdf", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pages) != 3 || !strings.Contains(d.Pages[0].Text, "The quick brown fox") {
		t.Fatalf("pages %+v", d.Pages)
	}
	if !hasWarning(d, "pdftotext failed") {
		t.Fatalf("warnings %q", d.Warnings)
	}
}

func TestPDFCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for reader, e := range pdfReaders(t) {
		_, err := e.Extract(ctx, "testdata/words.pdf", "words.pdf", "")
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: error %v; want context.Canceled, not permanent", reader, err)
		}
	}
}

// buildLines on its own: the cases producers create that the fixtures do not.
func TestBuildLines(t *testing.T) {
	cases := []struct {
		name string
		runs []run
		want string
	}{
		{"gap below threshold joins", []run{{0, 30, 700, 10, "kern"}, {31, 50, 700, 10, "ing"}}, "kerning"},
		{"gap above threshold spaces", []run{{0, 30, 700, 10, "two"}, {32, 50, 700, 10, "words"}}, "two words"},
		{"out of order on one line", []run{{40, 70, 700, 10, "world"}, {0, 30, 700, 10, "hello"}}, "hello world"},
		{"superscript stays on its line", []run{{0, 30, 700, 10, "x"}, {31, 35, 703, 6, "2"}, {40, 60, 700, 10, "end"}}, "x2 end"},
		{"fake bold drawn twice", []run{{0, 30, 700, 10, "Bold"}, {0.5, 30.5, 700, 10, "Bold"}, {40, 60, 700, 10, "text"}}, "Bold text"},
		{"hyphenated word joins", []run{{0, 50, 700, 10, "infor-"}, {0, 40, 688, 10, "mation here"}}, "information here"},
		{"paragraph gap", []run{{0, 50, 700, 10, "one"}, {0, 40, 650, 10, "two"}}, "one\n\ntwo"},
		{"next column", []run{{0, 50, 100, 10, "left end"}, {300, 340, 700, 10, "right top"}}, "left end\n\nright top"},
	}
	for _, c := range cases {
		if got := buildLines(c.runs); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
