package extract

import (
	"strings"
)

// blocks builds Markdown from the paragraph and table events of a streamed XML
// document (DOCX, PPTX, ODT). Containers nest: a paragraph can hold a text box with
// its own paragraphs, a table cell holds paragraphs and tables. A finished block goes
// to the nearest enclosing table cell, else to the output.
type blocks struct {
	out      []string
	size     int
	max      int
	stack    []*frame
	lastList bool // the last output block is a list item: the next item joins it tightly
}

type frame struct {
	table bool
	// paragraph
	text    strings.Builder
	heading int // 1..6, 0 for body text
	list    int // depth of a list item (0 = top level), -1 when not a list item
	// table
	rows   [][]string
	row    []string
	cell   strings.Builder
	inCell bool
	inRow  bool
}

type blockKind int

const (
	paraBlock blockKind = iota
	listBlock
	tableBlock
)

func newBlocks(max int) *blocks { return &blocks{max: max} }

// full reports whether the output reached the cap; callers stop reading then.
func (b *blocks) full() bool { return b.size >= b.max }

func (b *blocks) top() *frame {
	if len(b.stack) == 0 {
		return nil
	}
	return b.stack[len(b.stack)-1]
}

// para returns the innermost open paragraph, nil outside paragraphs.
func (b *blocks) para() *frame {
	if f := b.top(); f != nil && !f.table {
		return f
	}
	return nil
}

func (b *blocks) startPara() *frame {
	f := &frame{list: -1}
	b.stack = append(b.stack, f)
	return f
}

// text appends s to the open paragraph; text outside paragraphs is dropped, except
// directly in a table cell.
func (b *blocks) text(s string) {
	switch f := b.top(); {
	case f == nil:
	case !f.table:
		f.text.WriteString(s)
	case f.inCell:
		f.cell.WriteString(s)
	}
}

func (b *blocks) endPara() {
	f := b.top()
	if f == nil || f.table {
		return
	}
	b.stack = b.stack[:len(b.stack)-1]
	s := strings.TrimSpace(f.text.String())
	if s == "" {
		return
	}
	prefix, kind := "", paraBlock
	switch {
	case f.heading > 0:
		prefix = strings.Repeat("#", min(f.heading, 6)) + " "
		s = strings.Join(strings.Fields(s), " ")
	case f.list >= 0:
		prefix, kind = strings.Repeat("  ", min(f.list, 8))+"- ", listBlock
	}
	b.emit(prefix, s, kind)
}

// emit hands a finished block to the enclosing table cell (without its Markdown
// prefix) or the output. Blocks that end inside a paragraph (text boxes, notes) go
// past it, so they come out before it.
func (b *blocks) emit(prefix, s string, kind blockKind) {
	for i := len(b.stack) - 1; i >= 0; i-- {
		if f := b.stack[i]; f.table {
			if !f.inCell {
				return
			}
			if f.cell.Len() > 0 {
				f.cell.WriteString(" ")
			}
			if kind == tableBlock {
				s = flattenTable(s)
			}
			f.cell.WriteString(s)
			return
		}
	}
	if b.full() {
		return
	}
	s = prefix + s
	if room := b.max - b.size; len(s) > room {
		s = truncateUTF8(s, room)
	}
	b.size += len(s) + 2
	if kind == listBlock && b.lastList {
		b.out[len(b.out)-1] += "\n" + s
	} else {
		b.out = append(b.out, s)
	}
	b.lastList = kind == listBlock
}

func (b *blocks) startTable() {
	b.stack = append(b.stack, &frame{table: true, list: -1})
}

func (b *blocks) table() *frame {
	if f := b.top(); f != nil && f.table {
		return f
	}
	return nil
}

func (b *blocks) startRow() {
	if t := b.table(); t != nil {
		t.endRow()
		t.inRow = true
	}
}

func (b *blocks) endRow() {
	if t := b.table(); t != nil {
		t.endRow()
	}
}

func (b *blocks) startCell() {
	if t := b.table(); t != nil {
		t.endCell()
		t.inCell = true
	}
}

func (b *blocks) endCell() {
	if t := b.table(); t != nil {
		t.endCell()
	}
}

func (t *frame) endCell() {
	if !t.inCell {
		return
	}
	t.row = append(t.row, t.cell.String())
	t.cell.Reset()
	t.inCell = false
}

func (t *frame) endRow() {
	t.endCell()
	if t.inRow || len(t.row) > 0 {
		t.rows = append(t.rows, t.row)
	}
	t.row = nil
	t.inRow = false
}

func (b *blocks) endTable() {
	t := b.table()
	if t == nil {
		return
	}
	t.endRow()
	b.stack = b.stack[:len(b.stack)-1]
	w := newTextBuf(b.max)
	renderTable(w, t.rows)
	if s := strings.TrimRight(w.String(), "\n"); s != "" {
		b.emit("", s, tableBlock)
	}
}

// closeAll ends whatever is still open (a document cut at the cap or by an error).
func (b *blocks) closeAll() {
	for len(b.stack) > 0 {
		if b.top().table {
			b.endTable()
		} else {
			b.endPara()
		}
	}
}

// String returns the blocks separated by blank lines.
func (b *blocks) String() string {
	b.closeAll()
	return strings.Join(b.out, "\n\n")
}

// flattenTable turns a Markdown table nested in a cell into one line: rows by "; ",
// cells by " / ", dropping the header rule.
func flattenTable(md string) string {
	var rows []string
	for _, line := range strings.Split(md, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "| ---") {
			continue
		}
		line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
		var cells []string
		for _, c := range strings.Split(line, " |") {
			if c = strings.TrimSpace(c); c != "" {
				cells = append(cells, c)
			}
		}
		if len(cells) > 0 {
			rows = append(rows, strings.Join(cells, " / "))
		}
	}
	return strings.Join(rows, "; ")
}
