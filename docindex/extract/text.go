package extract

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// readText reads a text file as UTF-8, at most max bytes of it (truncated reports
// whether more was there). UTF-16 with a byte order mark is decoded; other input
// that is not valid UTF-8 is taken as Windows-1252, the usual legacy encoding of
// files that are not UTF-8 and a superset of Latin-1.
func readText(path string, max int) (text string, truncated bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	head, _ := br.Peek(3)
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		r = transform.NewReader(br, unicode.BOMOverride(unicode.UTF8.NewDecoder()))
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		br.Discard(3)
	}
	// One byte more than the cap tells whether the file was cut.
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return "", false, fmt.Errorf("read: %w", err)
	}
	if len(b) > max {
		b, truncated = trimPartialRune(b[:max]), true
	}
	if !utf8.Valid(b) {
		if d, err := charmap.Windows1252.NewDecoder().Bytes(b); err == nil {
			b = d
		}
	}
	return string(b), truncated, nil
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b (left by a cut).
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

func (e *Extractor) text(path string) (*Document, error) {
	s, cut, err := readText(path, e.maxTextBytes)
	if err != nil {
		return nil, err
	}
	d := &Document{Pages: []Page{{Text: s}}}
	if cut {
		d.Warnings = append(d.Warnings, capWarning(e.maxTextBytes))
	}
	return d, nil
}

var (
	frontMatter = regexp.MustCompile(`(?s)\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\z)`)
	fmTitle     = regexp.MustCompile(`(?m)^title:[ \t]*(.+?)[ \t]*$`)
)

// markdown keeps the text as it is, minus a YAML front matter block, whose title
// (if any) becomes the document title; else the first level-1 heading does.
func (e *Extractor) markdown(path string) (*Document, error) {
	s, cut, err := readText(path, e.maxTextBytes)
	if err != nil {
		return nil, err
	}
	d := &Document{}
	if m := frontMatter.FindStringSubmatchIndex(s); m != nil {
		if t := fmTitle.FindStringSubmatch(s[m[2]:m[3]]); t != nil {
			d.Title = strings.Trim(t[1], `"'`)
		}
		s = s[m[1]:]
	}
	if d.Title == "" {
		d.Title = firstH1(s)
	}
	d.Pages = []Page{{Text: s}}
	if cut {
		d.Warnings = append(d.Warnings, capWarning(e.maxTextBytes))
	}
	return d, nil
}

// firstH1 is the text of the first level-1 heading, ATX ("# Title #") or setext (a line
// underlined with "="), or "". A line scan: multi-line regular expressions for the two forms
// cost milliseconds per 20 KB document that has neither, since Go's engine tries every line.
func firstH1(s string) string {
	prev := ""
	for len(s) > 0 {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		line = strings.TrimSuffix(line, "\r")
		if len(line) > 1 && line[0] == '#' && (line[1] == ' ' || line[1] == '\t') {
			if t := strings.TrimRight(strings.TrimLeft(line[1:], " \t"), " \t#"); t != "" {
				return t
			}
		}
		if u := strings.TrimRight(line, " \t"); u != "" && strings.Trim(u, "=") == "" && strings.TrimSpace(prev) != "" {
			return prev
		}
		prev = line
	}
	return ""
}

// json pretty-prints the document so that chunks break at structure. Invalid (or
// cut) JSON is indexed as plain text with a warning.
func (e *Extractor) json(path string) (*Document, error) {
	s, cut, err := readText(path, e.maxTextBytes)
	if err != nil {
		return nil, err
	}
	d := &Document{}
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(s), "", "  "); err == nil && out.Len() <= e.maxTextBytes {
		s = out.String()
	} else if err != nil && !cut {
		d.Warnings = append(d.Warnings, fmt.Sprintf("invalid JSON (%v): indexed as plain text", err))
	}
	d.Pages = []Page{{Text: s}}
	if cut {
		d.Warnings = append(d.Warnings, capWarning(e.maxTextBytes))
	}
	return d, nil
}
