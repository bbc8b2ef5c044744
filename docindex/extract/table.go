package extract

import (
	"strings"
)

// tableWriter streams rows into w as a Markdown table, the first non-empty row as
// header. Later rows wider than the header keep all their cells (the text matters
// more than strict rendering); narrower rows are padded.
type tableWriter struct {
	w    *textBuf
	cols int
	rows int
}

func (t *tableWriter) row(r []string) {
	r = trimRow(r)
	if len(r) == 0 {
		return
	}
	if t.rows == 0 {
		t.cols = max(t.cols, len(r))
		writeRow(t.w, r, t.cols)
		writeRule(t.w, t.cols)
	} else {
		writeRow(t.w, r, max(t.cols, len(r)))
	}
	t.rows++
}

// cell makes a value safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\\", "\\\\")
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), "<br>")
	return strings.Join(strings.Fields(s), " ")
}

// renderTable writes rows known in full as a Markdown table as wide as its widest row.
func renderTable(w *textBuf, rows [][]string) {
	t := &tableWriter{w: w}
	for _, r := range rows {
		t.cols = max(t.cols, len(trimRow(r)))
	}
	for _, r := range rows {
		t.row(r)
	}
}

// trimRow drops empty trailing cells.
func trimRow(r []string) []string {
	for len(r) > 0 && strings.TrimSpace(r[len(r)-1]) == "" {
		r = r[:len(r)-1]
	}
	return r
}

func writeRow(w *textBuf, r []string, cols int) {
	var b strings.Builder
	b.WriteString("|")
	for i := 0; i < cols; i++ {
		v := ""
		if i < len(r) {
			v = cell(r[i])
		}
		if v != "" {
			b.WriteString(" ")
			b.WriteString(v)
		}
		b.WriteString(" |")
	}
	b.WriteString("\n")
	w.WriteString(b.String())
}

func writeRule(w *textBuf, cols int) {
	w.WriteString("|" + strings.Repeat(" --- |", cols) + "\n")
}
