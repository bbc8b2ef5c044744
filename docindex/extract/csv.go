package extract

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"
)

// csv renders a delimited file as one Markdown table, streaming: the file is read row
// by row and the output stops at the text cap.
func (e *Extractor) csv(ctx context.Context, path, name string) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	peek, _ := br.Peek(32 << 10)
	head := bytes.Clone(peek)
	if bom := []byte{0xEF, 0xBB, 0xBF}; bytes.HasPrefix(head, bom) {
		head = head[len(bom):]
		br.Discard(len(bom))
	}
	var r io.Reader = br
	if !utf8.Valid(trimPartialRune(head)) {
		r = transform.NewReader(br, charmap.Windows1252.NewDecoder())
	}
	cr := csv.NewReader(r)
	cr.Comma = delimiter(head, name)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true

	d := &Document{}
	w := newTextBuf(e.maxTextBytes)
	t := &tableWriter{w: w}
	for n := 0; !w.full; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				d.Warnings = append(d.Warnings, fmt.Sprintf("CSV parse error, rest of the file left out: %v", err))
				break
			}
			return nil, fmt.Errorf("read: %w", err)
		}
		t.row(rec)
	}
	if w.full {
		d.Warnings = append(d.Warnings, capWarning(e.maxTextBytes))
	}
	d.Pages = []Page{{Text: w.String()}}
	return d, nil
}

// delimiter picks the separator: tab for .tsv, else the candidate that splits the
// first lines into the most consistent number of fields.
func delimiter(head []byte, name string) rune {
	if ext := strings.ToLower(filepath.Ext(name)); ext == ".tsv" || ext == ".tab" {
		return '\t'
	}
	lines := strings.Split(string(head), "\n")
	if len(lines) > 1 {
		lines = lines[:len(lines)-1] // the last line may be cut by the peek
	}
	if len(lines) > 20 {
		lines = lines[:20]
	}
	best, bestScore := ',', 0
	for _, c := range []rune{',', ';', '\t', '|'} {
		first := -1
		score := 0
		for _, l := range lines {
			n := strings.Count(l, string(c))
			if n == 0 {
				continue
			}
			if first < 0 {
				first = n
			}
			if n == first {
				score += n
			}
		}
		if score > bestScore {
			best, bestScore = c, score
		}
	}
	return best
}
