package structured

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/docindex/docindex/docindex/extract"
)

func TestCapPages(t *testing.T) {
	pages := []extract.Page{{Number: 1, Text: "a"}, {Number: 2, Text: "b"}, {Number: 4, Text: "d"}}
	for _, tc := range []struct {
		name      string
		pageCount int
		max       int
		kept      int
		total     int
		cut       bool
	}{
		{"no cap", 4, 0, 3, 4, false},
		{"negative is no cap", 4, -1, 3, 4, false},
		{"cap above the pages", 4, 10, 3, 4, false},
		{"cap at the page count", 4, 4, 3, 4, false},
		{"cap cuts", 4, 2, 2, 4, true},
		// Page 3 holds no text but counts: the cap ends at a page number, not a text page.
		{"cap on an empty page", 4, 3, 2, 4, true},
		// The page count says more pages follow than hold text.
		{"empty pages after the cap", 6, 4, 3, 6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, total, cut := capPages(pages, tc.pageCount, tc.max)
			if len(kept) != tc.kept || total != tc.total || cut != tc.cut {
				t.Errorf("capPages(max %d) = %d pages, total %d, cut %v; want %d, %d, %v", tc.max, len(kept), total, cut, tc.kept, tc.total, tc.cut)
			}
		})
	}
	// Formats without page numbers count their parts (sheets).
	sheets := []extract.Page{{Text: "s1"}, {Text: "s2"}, {Text: "s3"}}
	kept, total, cut := capPages(sheets, 0, 2)
	if len(kept) != 2 || kept[1].Text != "s2" || total != 3 || !cut {
		t.Errorf("unnumbered pages: kept %v, total %d, cut %v", kept, total, cut)
	}
}

func TestWindowsPackPagesWithinBudget(t *testing.T) {
	var pages []extract.Page
	for i := 1; i <= 6; i++ {
		pages = append(pages, extract.Page{Number: i, Text: strings.Repeat("x", 300)})
	}
	ws := windows(pages, true, 1000)
	// A page takes 300 bytes, its header and separator 20: three fit in 1000.
	if len(ws) != 2 || ws[0].first != 1 || ws[0].last != 3 || ws[1].first != 4 || ws[1].last != 6 {
		t.Fatalf("windows = %+v", summary(ws))
	}
	for _, w := range ws {
		if len(w.text) > 1000 {
			t.Errorf("window %s has %d bytes", w.label(), len(w.text))
		}
	}
	if !strings.HasPrefix(ws[1].text, "--- page 4 ---\n") || !strings.Contains(ws[1].text, "--- page 6 ---\n") {
		t.Errorf("page headers missing: %q", ws[1].text[:40])
	}
	if ws := windows(pages[:1], false, 1000); strings.Contains(ws[0].text, "--- page") {
		t.Errorf("unpaged text got a page header")
	}
}

func TestWindowsSplitLongPage(t *testing.T) {
	para := strings.Repeat("word ", 60) // 300 bytes
	long := strings.Join([]string{para, para, para, para, para}, "\n\n")
	ws := windows([]extract.Page{{Number: 1, Text: "short"}, {Number: 2, Text: long}, {Number: 3, Text: "tail"}}, true, 700)
	if len(ws) < 4 {
		t.Fatalf("long page not split: %+v", summary(ws))
	}
	if ws[0].text != "--- page 1 ---\nshort\n\n" {
		t.Errorf("first window %q", ws[0].text)
	}
	var rebuilt []string
	for _, w := range ws[1 : len(ws)-1] {
		if w.first != 2 || w.last != 2 || len(w.text) > 700 {
			t.Errorf("part %s of %d bytes", w.label(), len(w.text))
		}
		rebuilt = append(rebuilt, strings.TrimSpace(strings.TrimPrefix(w.text, "--- page 2 ---\n")))
	}
	if strings.Join(strings.Fields(strings.Join(rebuilt, " ")), " ") != strings.Join(strings.Fields(long), " ") {
		t.Errorf("split lost or changed words")
	}
	if last := ws[len(ws)-1]; last.first != 3 {
		t.Errorf("last window %s", last.label())
	}
}

func TestSplitKeepsRunes(t *testing.T) {
	text := strings.Repeat("ä", 100) // no spaces: a hard cut
	parts := split(text, 15)
	if strings.Join(parts, "") != text {
		t.Fatalf("split changed the text")
	}
	for _, p := range parts {
		if !utf8.ValidString(p) || len(p) > 15 {
			t.Fatalf("part %q (%d bytes)", p, len(p))
		}
	}
	if got := split("日本", 1); strings.Join(got, "") != "日本" {
		t.Fatalf("budget below one rune: %q", got)
	}
}

func summary(ws []window) []string {
	var s []string
	for _, w := range ws {
		s = append(s, w.label())
	}
	return s
}
