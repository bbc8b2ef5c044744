package structured

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/docindex/docindex/docindex/extract"
)

// window is the part of a document sent in one request.
type window struct {
	first, last int // page positions it covers (1-based)
	text        string
}

func (w window) label() string {
	if w.first == w.last {
		return fmt.Sprintf("page %d", w.first)
	}
	return fmt.Sprintf("pages %d-%d", w.first, w.last)
}

// position is a page's 1-based place in the document: its number where the format has pages
// (PDF pages, slides), else its place in the list (sheets, or the one page of a text file).
func position(p extract.Page, i int) int {
	if p.Number > 0 {
		return p.Number
	}
	return i + 1
}

// capPages keeps the pages at positions up to maxPages (maxPages <= 0: all) and reports how many
// pages the document has and whether the cap left any out.
func capPages(pages []extract.Page, pageCount, maxPages int) (kept []extract.Page, total int, cut bool) {
	total = pageCount
	for i, p := range pages {
		total = max(total, position(p, i))
	}
	if maxPages <= 0 {
		return pages, total, false
	}
	for i, p := range pages {
		if position(p, i) <= maxPages {
			kept = append(kept, p)
		}
	}
	return kept, total, total > maxPages
}

// windows packs consecutive pages into windows of at most budget bytes of text, each page
// headed by its number when the document is paged; a page longer than the budget is split at
// paragraph, line or word boundaries into windows of its own. Pages never overlap windows, so
// a record is seen once unless the document repeats it.
func windows(pages []extract.Page, paged bool, budget int) []window {
	var out []window
	var cur strings.Builder
	first, last := 0, 0
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, window{first: first, last: last, text: cur.String()})
			cur.Reset()
		}
	}
	for i, p := range pages {
		pos := position(p, i)
		text := strings.TrimSpace(p.Text)
		if text == "" {
			continue
		}
		header := ""
		if paged {
			header = fmt.Sprintf("--- page %d ---\n", pos)
		}
		block := header + text + "\n\n"
		if len(block) > budget {
			flush()
			room := max(budget-len(header)-2, 1)
			for _, part := range split(text, room) {
				out = append(out, window{first: pos, last: pos, text: header + part + "\n\n"})
			}
			continue
		}
		if cur.Len()+len(block) > budget {
			flush()
		}
		if cur.Len() == 0 {
			first = pos
		}
		cur.WriteString(block)
		last = pos
	}
	flush()
	return out
}

// split cuts text into pieces of at most n bytes, preferring a paragraph break, then a line
// break, then a space in the second half of each piece; never inside a UTF-8 sequence.
func split(text string, n int) []string {
	var parts []string
	for len(text) > n {
		cut := -1
		for _, sep := range []string{"\n\n", "\n", " "} {
			if i := strings.LastIndex(text[:n], sep); i >= n/2 {
				cut = i
				break
			}
		}
		if cut <= 0 {
			cut = n
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			if cut == 0 { // n is smaller than one rune: take the rune whole
				_, size := utf8.DecodeRuneInString(text)
				cut = size
			}
		}
		if part := strings.TrimSpace(text[:cut]); part != "" {
			parts = append(parts, part)
		}
		text = strings.TrimLeft(text[cut:], " \n")
	}
	if text = strings.TrimSpace(text); text != "" {
		parts = append(parts, text)
	}
	return parts
}
