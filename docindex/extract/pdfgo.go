package extract

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// The pure Go PDF reader. github.com/ledongthuc/pdf parses the file, the page tree,
// fonts and their encodings; its own text functions drop the spaces between words
// (most producers position words instead of drawing space glyphs) and take glyph
// widths from simple fonts only. So the content streams are interpreted here: every
// shown string becomes a run with its start and end on the baseline, computed with
// the widths of simple, Type3 and CID fonts, the character and word spacing and the
// text and graphics matrices, including form XObjects. Lines are then rebuilt in
// content order (which keeps the columns of multi-column layouts apart, unlike a
// sort by position), runs on one baseline sorted left to right, and a space goes
// where the gap between two runs exceeds spaceGap x the font size.
//
// ledongthuc/pdf panics on malformed input; every call into it is guarded, per page,
// so that one bad page becomes a warning.

const (
	spaceGap     = 0.12    // gap between runs, in font sizes, that separates words
	maxFormDepth = 8       // nesting of form XObjects followed
	maxPageForms = 4096    // form XObjects drawn on one page, against fan-out bombs
	maxPageText  = 1 << 20 // bytes of text taken from one page, against runaway content
)

// guard runs f and turns a panic into an error.
func guard(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed PDF: %v", r)
		}
	}()
	f()
	return nil
}

func (e *Extractor) pdfGo(ctx context.Context, path string) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r, err := pdf.NewReader(f, fi.Size())
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) || strings.Contains(err.Error(), "encrypt") {
			return nil, fmt.Errorf("%v: %w", err, ErrEncrypted)
		}
		return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	d := &Document{}
	if err := guard(func() {
		d.PageCount = r.NumPage()
		d.Title = r.Trailer().Key("Info").Key("Title").Text()
	}); err != nil {
		return nil, fmt.Errorf("page tree: %v: %w", err, ErrCorrupt)
	}
	if d.PageCount <= 0 {
		return nil, fmt.Errorf("no pages: %w", ErrCorrupt)
	}
	size, failed, cut := 0, 0, false
	for n := 1; n <= d.PageCount && !cut; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.maxPages > 0 && n > e.maxPages {
			d.Warnings = append(d.Warnings, fmt.Sprintf("page cap reached: pages %d to %d left out", n, d.PageCount))
			break
		}
		var text string
		var warns []string
		err := guard(func() {
			p := r.Page(n)
			if p.V.IsNull() {
				panic("page not found in the page tree")
			}
			text, warns = pageText(p)
		})
		if err != nil {
			failed++
			d.Warnings = append(d.Warnings, fmt.Sprintf("page %d could not be read: %v", n, err))
			continue
		}
		for _, w := range warns {
			d.Warnings = append(d.Warnings, fmt.Sprintf("page %d: %s", n, w))
		}
		if room := e.maxTextBytes - size; len(text) >= room {
			text, cut = truncateUTF8(text, room), len(text) > room || n < d.PageCount
		}
		size += len(text)
		d.Pages = append(d.Pages, Page{Number: n, Text: text})
	}
	if cut {
		d.Warnings = append(d.Warnings, capWarning(e.maxTextBytes))
	}
	if failed == d.PageCount {
		return nil, fmt.Errorf("no page could be read (%s): %w", d.Warnings[0], ErrCorrupt)
	}
	return d, nil
}

// run is a string drawn on the page: its baseline from (x0, y) to (x1, y) in user
// space and its font size there.
type run struct {
	x0, x1, y, size float64
	text            string
}

// matrix is a PDF transformation matrix [a b c d e f] as a 3x3 matrix for row vectors.
type matrix [3][3]float64

var identity = matrix{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}

func (m matrix) mul(n matrix) matrix {
	var z matrix
	for i := range 3 {
		for j := range 3 {
			for k := range 3 {
				z[i][j] += m[i][k] * n[k][j]
			}
		}
	}
	return z
}

func translate(tx, ty float64) matrix { return matrix{{1, 0, 0}, {0, 1, 0}, {tx, ty, 1}} }

func matrixOf(args []pdf.Value) (matrix, bool) {
	if len(args) != 6 {
		return identity, false
	}
	m := identity
	for i := range 6 {
		m[i/2][i%2] = args[i].Float64()
	}
	return m, true
}

type gstate struct {
	ctm                  matrix
	tc, tw, th, tl, rise float64
	font                 *font
	fs                   float64
}

// page interprets one page's content.
type page struct {
	runs     []run
	forms    int
	warnings map[string]bool
	textLen  int
}

func pageText(p pdf.Page) (string, []string) {
	pg := &page{warnings: map[string]bool{}}
	pg.interpret(p.V.Key("Contents"), p.Resources(), identity, 0)
	var warns []string
	for w := range pg.warnings {
		warns = append(warns, w)
	}
	slices.Sort(warns)
	return buildLines(pg.runs), warns
}

func popAll(stk *pdf.Stack) []pdf.Value {
	args := make([]pdf.Value, stk.Len())
	for i := len(args) - 1; i >= 0; i-- {
		args[i] = stk.Pop()
	}
	return args
}

func (pg *page) interpret(content, res pdf.Value, ctm matrix, depth int) {
	if content.IsNull() {
		return
	}
	fonts := map[string]*font{}
	g := gstate{ctm: ctm, th: 1}
	var stack []gstate
	var tm, tlm matrix

	show := func(raw string) {
		f := g.font
		if f == nil || pg.textLen > maxPageText {
			return
		}
		start := matrix{{g.fs * g.th, 0, 0}, {0, g.fs, 0}, {0, g.rise, 1}}.mul(tm).mul(g.ctm)
		var tx float64
		for _, code := range f.codes(raw) {
			w := f.width(code)*g.fs + g.tc
			if !f.twoByte && code == ' ' {
				w += g.tw
			}
			tx += w * g.th
		}
		text := f.decode(raw)
		tm = translate(tx, 0).mul(tm)
		if f.noUnicode {
			// The codes are glyph ids: decoding them would index garbage.
			pg.warnings[fmt.Sprintf("text in font %s has no Unicode mapping and was left out", f.name)] = true
			return
		}
		if text == "" {
			return
		}
		end := matrix{{g.fs * g.th, 0, 0}, {0, g.fs, 0}, {0, g.rise, 1}}.mul(tm).mul(g.ctm)
		size := math.Hypot(start[1][0], start[1][1])
		pg.runs = append(pg.runs, run{x0: start[2][0], x1: end[2][0], y: start[2][1], size: size, text: text})
		pg.textLen += len(text)
	}
	nextLine := func() {
		tlm = translate(0, -g.tl).mul(tlm)
		tm = tlm
	}

	pdf.Interpret(content, func(stk *pdf.Stack, op string) {
		args := popAll(stk)
		switch op {
		case "q":
			stack = append(stack, g)
		case "Q":
			if n := len(stack); n > 0 {
				g, stack = stack[n-1], stack[:n-1]
			}
		case "cm":
			if m, ok := matrixOf(args); ok {
				g.ctm = m.mul(g.ctm)
			}
		case "BT":
			tm, tlm = identity, identity
		case "Tc":
			if len(args) == 1 {
				g.tc = args[0].Float64()
			}
		case "Tw":
			if len(args) == 1 {
				g.tw = args[0].Float64()
			}
		case "Tz":
			if len(args) == 1 {
				g.th = args[0].Float64() / 100
			}
		case "TL":
			if len(args) == 1 {
				g.tl = args[0].Float64()
			}
		case "Ts":
			if len(args) == 1 {
				g.rise = args[0].Float64()
			}
		case "Tf":
			if len(args) == 2 {
				name := args[0].Name()
				f, ok := fonts[name]
				if !ok {
					f = newFont(name, res.Key("Font").Key(name))
					fonts[name] = f
				}
				g.font, g.fs = f, args[1].Float64()
			}
		case "TD":
			if len(args) == 2 {
				g.tl = -args[1].Float64()
			}
			fallthrough
		case "Td":
			if len(args) == 2 {
				tlm = translate(args[0].Float64(), args[1].Float64()).mul(tlm)
				tm = tlm
			}
		case "Tm":
			if m, ok := matrixOf(args); ok {
				tm, tlm = m, m
			}
		case "T*":
			nextLine()
		case "Tj":
			if len(args) == 1 {
				show(args[0].RawString())
			}
		case "'":
			if len(args) == 1 {
				nextLine()
				show(args[0].RawString())
			}
		case "\"":
			if len(args) == 3 {
				g.tw, g.tc = args[0].Float64(), args[1].Float64()
				nextLine()
				show(args[2].RawString())
			}
		case "TJ":
			if len(args) != 1 {
				return
			}
			a := args[0]
			for i := 0; i < a.Len(); i++ {
				v := a.Index(i)
				if v.Kind() == pdf.String {
					show(v.RawString())
				} else {
					tm = translate(-v.Float64()/1000*g.fs*g.th, 0).mul(tm)
				}
			}
		case "Do":
			if len(args) != 1 || depth >= maxFormDepth || pg.forms >= maxPageForms {
				return
			}
			x := res.Key("XObject").Key(args[0].Name())
			if x.Key("Subtype").Name() != "Form" {
				return
			}
			pg.forms++
			m := identity
			if mv := x.Key("Matrix"); mv.Len() == 6 {
				m, _ = matrixOf([]pdf.Value{mv.Index(0), mv.Index(1), mv.Index(2), mv.Index(3), mv.Index(4), mv.Index(5)})
			}
			fres := x.Key("Resources")
			if fres.IsNull() {
				fres = res
			}
			pg.interpret(x, fres, m.mul(g.ctm), depth+1)
		}
	})
}

// font is what the interpreter needs of a PDF font: how to split a string into
// character codes, their widths (in text space units per unit of font size) and
// their Unicode text.
type font struct {
	name      string
	enc       pdf.TextEncoding
	twoByte   bool
	noUnicode bool
	scale     float64 // glyph space to text space (1/1000, or a Type3 FontMatrix)
	first     int
	widths    []float64
	missing   float64
	cidW      map[int]float64
	cidRanges []cidRange
	std       *stdMetrics // a standard font drawn without Widths: widths by rune
	stdCache  map[int]float64
}

type cidRange struct {
	lo, hi int
	w      float64
}

func newFont(name string, v pdf.Value) *font {
	f := &font{name: name, scale: 0.001}
	pf := pdf.Font{V: v}
	f.enc = pf.Encoder()
	if base := v.Key("BaseFont").Name(); base != "" {
		f.name = base
		if i := strings.IndexByte(base, '+'); i >= 0 {
			f.name = base[i+1:]
		}
	}
	switch v.Key("Subtype").Name() {
	case "Type0":
		f.twoByte = true
		desc := v.Key("DescendantFonts").Index(0)
		f.missing = 1000
		if dw := desc.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
			f.missing = dw.Float64()
		}
		f.cidW = map[int]float64{}
		w := desc.Key("W")
		for i := 0; i < w.Len(); {
			c := int(w.Index(i).Int64())
			next := w.Index(i + 1)
			if next.Kind() == pdf.Array {
				for j := 0; j < next.Len() && len(f.cidW) < 1<<16; j++ {
					f.cidW[c+j] = next.Index(j).Float64()
				}
				i += 2
				continue
			}
			if i+2 >= w.Len() || next.Kind() != pdf.Integer {
				break // malformed: keep what was read
			}
			f.cidRanges = append(f.cidRanges, cidRange{lo: c, hi: int(next.Int64()), w: w.Index(i + 2).Float64()})
			i += 3
		}
		// Without a ToUnicode map the codes are glyph ids: no text can be had.
		f.noUnicode = v.Key("ToUnicode").IsNull() && !strings.Contains(v.Key("Encoding").Name(), "UCS2")
	default:
		f.first = int(v.Key("FirstChar").Int64())
		ws := v.Key("Widths")
		for i := 0; i < ws.Len(); i++ {
			f.widths = append(f.widths, ws.Index(i).Float64())
		}
		f.missing = v.Key("FontDescriptor").Key("MissingWidth").Float64()
		if len(f.widths) == 0 && f.missing == 0 {
			f.std, f.missing = standardMetrics(f.name)
		}
		if v.Key("Subtype").Name() == "Type3" {
			if fm := v.Key("FontMatrix"); fm.Len() == 6 && fm.Index(0).Float64() != 0 {
				f.scale = fm.Index(0).Float64()
			}
		}
	}
	return f
}

// standardMetrics picks the metrics for a font drawn without a Widths array (older
// producers do so for the standard 14 fonts): the Adobe metrics of Times or Helvetica
// (Arial has the same widths), a fixed 600 for Courier; other fonts get Helvetica's
// as the best guess.
func standardMetrics(name string) (*stdMetrics, float64) {
	if strings.Contains(name, "Courier") || strings.Contains(name, "Mono") {
		return nil, 600
	}
	times := strings.Contains(name, "Times") || strings.Contains(name, "Serif") && !strings.Contains(name, "Sans")
	bold := strings.Contains(name, "Bold")
	italic := strings.Contains(name, "Italic") || strings.Contains(name, "Oblique")
	key := "helvetica"
	switch {
	case times && bold && italic:
		key = "timesBoldItalic"
	case times && bold:
		key = "timesBold"
	case times && italic:
		key = "timesItalic"
	case times:
		key = "timesRoman"
	case bold && italic:
		key = "helveticaBoldOblique"
	case bold:
		key = "helveticaBold"
	case italic:
		key = "helveticaOblique"
	}
	return stdFonts[key], 500
}

func (f *font) codes(raw string) []int {
	var out []int
	if f.twoByte {
		for i := 0; i+1 < len(raw); i += 2 {
			out = append(out, int(raw[i])<<8|int(raw[i+1]))
		}
		return out
	}
	out = make([]int, len(raw))
	for i := 0; i < len(raw); i++ {
		out[i] = int(raw[i])
	}
	return out
}

func (f *font) width(code int) float64 {
	w := f.missing
	if f.twoByte {
		if v, ok := f.cidW[code]; ok {
			w = v
		} else {
			for _, r := range f.cidRanges {
				if code >= r.lo && code <= r.hi {
					w = r.w
					break
				}
			}
		}
	} else if i := code - f.first; i >= 0 && i < len(f.widths) {
		w = f.widths[i]
	} else if f.std != nil {
		w = f.stdWidth(code)
	}
	return w * f.scale
}

// stdWidth looks up the width of a code's character in the standard metrics.
func (f *font) stdWidth(code int) float64 {
	if w, ok := f.stdCache[code]; ok {
		return w
	}
	w := f.missing
	for _, r := range f.enc.Decode(string([]byte{byte(code)})) {
		if r >= 0x20 && r <= 0x7e && f.std.ascii[r-0x20] > 0 {
			w = float64(f.std.ascii[r-0x20])
		} else if v, ok := f.std.more[r]; ok {
			w = float64(v)
		}
		break
	}
	if f.stdCache == nil {
		f.stdCache = map[int]float64{}
	}
	f.stdCache[code] = w
	return w
}

var ligatures = strings.NewReplacer("\ufb00", "ff", "\ufb01", "fi", "\ufb02", "fl", "\ufb03", "ffi", "\ufb04", "ffl", "\ufb05", "st", "\ufb06", "st")

func (f *font) decode(raw string) string {
	s := f.enc.Decode(raw)
	if strings.ContainsAny(s, "\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06") {
		s = ligatures.Replace(s)
	}
	return s
}

// buildLines joins runs into lines in content order: a run continues the current
// line when its baseline is within half a font size of the line's; the runs of a line
// are sorted left to right and a space goes where they are more than spaceGap x the
// font size apart. A blank line separates lines further apart than a paragraph gap
// and a jump upwards (the next column). A word hyphenated at a line end is joined, as
// pdftotext does.
func buildLines(runs []run) string {
	var b strings.Builder
	var line []run
	var lineY, lineSize, prevY float64
	first := true
	flush := func() {
		if len(line) == 0 {
			return
		}
		slices.SortStableFunc(line, func(a, b run) int {
			switch {
			case a.x0 < b.x0:
				return -1
			case a.x0 > b.x0:
				return 1
			}
			return 0
		})
		var text strings.Builder
		var last *run
		for i := range line {
			r := &line[i]
			if last != nil {
				if r.text == last.text && math.Abs(r.x0-last.x0) < 0.2*r.size {
					continue // the same text drawn twice to fake bold
				}
				size := max(last.size, r.size)
				if r.x0-last.x1 > spaceGap*size &&
					!strings.HasSuffix(last.text, " ") && !strings.HasPrefix(r.text, " ") {
					text.WriteByte(' ')
				}
			}
			text.WriteString(r.text)
			last = r
		}
		line = line[:0]
		s := strings.TrimSpace(text.String())
		if !first {
			gap := prevY - lineY
			switch {
			case gap < 0 || gap > 2*lineSize:
				b.WriteString("\n\n")
			case hyphenated(b.String(), s):
				cur := b.String()
				b.Reset()
				b.WriteString(cur[:len(cur)-1])
			default:
				b.WriteString("\n")
			}
		}
		first = false
		prevY = lineY
		b.WriteString(s)
	}
	for _, r := range runs {
		if strings.TrimSpace(r.text) == "" && len(line) == 0 {
			continue
		}
		if len(line) > 0 && math.Abs(r.y-lineY) > 0.5*max(lineSize, r.size) {
			flush()
		}
		if len(line) == 0 {
			lineY, lineSize = r.y, r.size
		}
		lineSize = max(lineSize, r.size)
		line = append(line, r)
	}
	flush()
	return b.String()
}

// hyphenated reports whether text ends in a word broken with a hyphen that next
// continues: a letter and "-" before, a lower-case letter after.
func hyphenated(text, next string) bool {
	if !strings.HasSuffix(text, "-") || len(text) < 2 {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(text[:len(text)-1])
	after, _ := utf8.DecodeRuneInString(next)
	return unicode.IsLetter(before) && unicode.IsLower(after)
}
