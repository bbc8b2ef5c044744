package chunk

import (
	"sort"
	"strings"
)

// sectionGap joins sections: a blank line, so the splitters prefer to cut
// between pages without having to.
const sectionGap = "\n\n"

// doc is the joined text of a document and where each page lies in it.
type doc struct {
	text  string
	spans []pageSpan // ascending, non-overlapping
}

type pageSpan struct {
	start, end int
	page       int
}

func join(sections []Section) doc {
	var b strings.Builder
	var spans []pageSpan
	for _, s := range sections {
		// Blank lines at the edges of a page carry nothing and would only
		// widen the gap between pages; indentation is kept (it matters in code
		// and Markdown).
		t := strings.TrimRight(strings.TrimLeft(s.Text, "\r\n"), " \t\r\n")
		if strings.TrimSpace(t) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(sectionGap)
		}
		spans = append(spans, pageSpan{start: b.Len(), end: b.Len() + len(t), page: s.Page})
		b.WriteString(t)
	}
	return doc{text: b.String(), spans: spans}
}

// pages returns the known pages (> 0) whose text overlaps [start, end).
func (d doc) pages(start, end int) []int {
	var out []int
	i := sort.Search(len(d.spans), func(i int) bool { return d.spans[i].end > start })
	for ; i < len(d.spans) && d.spans[i].start < end; i++ {
		p := d.spans[i].page
		if p > 0 && (len(out) == 0 || out[len(out)-1] != p) {
			out = append(out, p)
		}
	}
	return out
}
