package dataset

// Imported datasets: a CSV, TSV, XLSX or JSON Lines file becomes one typed table (one per sheet
// of a workbook). The file is read twice from disk: the first pass finds the header, the columns
// and their types, so the table definition is known before anything is written; the second pass
// streams the rows into PostgreSQL with COPY inside the transaction that (re)creates the table.
// Memory stays bounded by the width of a row, not the length of the file.
//
// Decisions:
//   - Table name: the file name without its extension, sanitized to ^[a-z_][a-z0-9_]{0,62}$
//     ("Sales 2024.csv" -> "sales_2024"). A workbook with one sheet holding data gives one table
//     named after the file; with several, "<file>_<sheet>" each. Empty sheets are skipped.
//   - Types: when the collection's `tables` defines a table of that name, its columns are used and
//     every row is validated and coerced as ingest does (the header must name only defined
//     columns and every non-nullable one). Otherwise each column gets the first of integer,
//     numeric, boolean, timestamp that every non-empty cell satisfies, else text. Integers and
//     decimals with leading zeros ("007") stay text, and 0/1 columns are integers.
//   - Header: the first non-empty record. Names are sanitized like table names ("Order ID" ->
//     "order_id"), a leading digit gets "c_", an empty name becomes column_<n>, duplicates get
//     _2, _3, ... Empty cells are null.
//   - Row errors: a record that cannot be stored (a value that does not fit its column, a CSV
//     record whose field count differs from the header's, a JSON Lines line that is no object)
//     is rejected alone; its index is its 0-based position after the header (for JSON Lines its
//     0-based line number). A file that cannot be parsed at all fails with ErrBadFile.
//   - Ownership: each imported table carries a comment naming the file it came from, so a
//     reindex replaces exactly that file's tables and a delete drops them. A table imported from
//     another file with the same name replaces the earlier one (the last import owns it).
//   - A table defined in `tables` keeps its definition when its file is deleted: it is emptied,
//     not dropped. Defined tables that no file produced yet are created empty on each import,
//     so every table of the schema exists once the collection holds any import.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/unicode/norm"
)

// Format of an importable file.
type Format string

// Importable formats.
const (
	CSV   Format = "csv"
	TSV   Format = "tsv"
	XLSX  Format = "xlsx"
	JSONL Format = "jsonl"
)

// MaxImportErrors is how many rejected rows an import reports in detail; the rest are counted.
const MaxImportErrors = 20

// maxLine bounds one CSV record or JSON Lines line, so a file without line breaks cannot take
// the worker's memory.
const maxLine = 16 << 20

// ErrBadFile is wrapped by every error that says the file itself cannot be imported (unknown
// format, unparseable content, a header that does not fit the defined table): retrying the same
// content cannot succeed.
var ErrBadFile = errors.New("cannot import file")

func badFile(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadFile, fmt.Sprintf(format, args...))
}

var (
	extFormats = map[string]Format{".csv": CSV, ".tsv": TSV, ".tab": TSV, ".xlsx": XLSX, ".xlsm": XLSX,
		".jsonl": JSONL, ".ndjson": JSONL, ".jsonlines": JSONL}
	typeFormats = map[string]Format{"text/csv": CSV, "application/csv": CSV, "text/comma-separated-values": CSV,
		"text/tab-separated-values": TSV, "text/tsv": TSV,
		"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": XLSX,
		"application/vnd.ms-excel.sheet.macroenabled.12":                    XLSX,
		"application/jsonl": JSONL, "application/x-ndjson": JSONL, "application/x-jsonlines": JSONL,
		"application/jsonlines": JSONL, "application/json-lines": JSONL, "application/ndjson": JSONL}
)

// DetectFormat picks the format from the file name's extension, else from the content type.
func DetectFormat(fileName, contentType string) (Format, error) {
	if f, ok := extFormats[strings.ToLower(filepath.Ext(fileName))]; ok {
		return f, nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	if f, ok := typeFormats[mt]; ok {
		return f, nil
	}
	return "", badFile("%q (%s) is not CSV, TSV, XLSX or JSON Lines", fileName, contentType)
}

// SanitizeIdent turns free text (a file, sheet or header name) into an identifier matching
// ^[a-z_][a-z0-9_]{0,62}$: a valid identifier stays as it is; otherwise letters are lower-cased
// and stripped of accents, every run of other characters becomes one underscore, a leading digit
// gets prefix ("t_", "c_"), and an empty result gives fallback.
func SanitizeIdent(s, prefix, fallback string) string {
	if ValidIdent(s) {
		return s
	}
	var b strings.Builder
	under := false
	for _, r := range norm.NFD.String(strings.ToLower(s)) {
		switch {
		case unicode.Is(unicode.Mn, r): // accents once decomposed: "ä" -> "a"
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			under = false
		case !under && b.Len() > 0:
			b.WriteByte('_')
			under = true
		}
	}
	name := strings.TrimRight(b.String(), "_")
	if name == "" {
		return fallback
	}
	if name[0] >= '0' && name[0] <= '9' {
		name = prefix + name
	}
	return clip(name, 63)
}

func clip(name string, n int) string {
	if len(name) > n {
		name = strings.TrimRight(name[:n], "_")
	}
	return name
}

// dedupe makes name unique among taken by appending _2, _3, ... and records it.
func dedupe(name string, taken map[string]bool) string {
	out := name
	for i := 2; taken[out]; i++ {
		suffix := "_" + strconv.Itoa(i)
		out = clip(name, 63-len(suffix)) + suffix
	}
	taken[out] = true
	return out
}

// FileTableName is the table a single-table file imports into ("Sales 2024.csv" -> "sales_2024").
func FileTableName(fileName string) string {
	base := filepath.Base(strings.ReplaceAll(fileName, "\\", "/"))
	base = strings.TrimSuffix(base, filepath.Ext(base))
	return SanitizeIdent(base, "t_", "data")
}

// ---- reading records ----

// record is one row of a sheet before typing: cells for CSV and XLSX, fields for JSON Lines.
type record struct {
	cells  []string
	fields []field
	bad    string // why the record cannot be a row (JSON Lines); "" when it is fine
	blank  bool   // holds no value: skipped, but counted in the row index
}

type field struct {
	key string
	raw json.RawMessage
}

// rowReader yields the records of one sheet; io.EOF ends it, other errors mean the file cannot be
// parsed.
type rowReader interface {
	next() (record, error)
	close() error
}

type sheet struct {
	name string // "" for single-table formats
	open func() (rowReader, error)
}

// source is an opened file: its sheets, each readable any number of times.
type source struct {
	format Format
	sheets []sheet
	strict bool // a record must have as many fields as the header (CSV, TSV)
	close  func() error
}

func openSource(path, fileName, contentType string) (*source, error) {
	format, err := DetectFormat(fileName, contentType)
	if err != nil {
		return nil, err
	}
	switch format {
	case CSV, TSV:
		return openCSV(path, format)
	case JSONL:
		open := func() (rowReader, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, fmt.Errorf("open file: %w", err)
			}
			return &jsonlReader{f: f, r: bufio.NewReaderSize(f, 64<<10)}, nil
		}
		return &source{format: JSONL, sheets: []sheet{{open: open}}, close: func() error { return nil }}, nil
	default:
		return openXLSX(path)
	}
}

// openCSV settles the delimiter and the encoding once: a tab for TSV; for CSV a comma, unless the
// first line holds none and does hold semicolons or tabs (files saved by spreadsheets in locales
// with a decimal comma). A file that is not valid UTF-8 is read as Windows-1252, what such
// spreadsheets write.
func openCSV(path string, format Format) (*source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open file: %w", err)
	}
	defer f.Close()
	utf8OK, first, err := scanText(f)
	if err != nil {
		return nil, err
	}
	// A NUL in the header line: a binary file (a zip-based workbook starts with them).
	if strings.ContainsRune(first, 0) {
		return nil, badFile("not a text file (a workbook or another binary format named .csv?)")
	}
	comma := ','
	if format == TSV {
		comma = '\t'
	} else if !strings.ContainsRune(first, ',') {
		if semi, tabs := strings.Count(first, ";"), strings.Count(first, "\t"); semi > 0 && semi >= tabs {
			comma = ';'
		} else if tabs > 0 {
			comma = '\t'
		}
	}
	open := func() (rowReader, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("open file: %w", err)
		}
		var r io.Reader = skipBOM(bufio.NewReaderSize(f, 64<<10))
		if !utf8OK {
			r = charmap.Windows1252.NewDecoder().Reader(r)
		}
		cr := csv.NewReader(r)
		cr.Comma = comma
		cr.FieldsPerRecord = -1
		cr.LazyQuotes = true
		cr.ReuseRecord = true
		return &csvReader{f: f, r: cr}, nil
	}
	return &source{format: format, sheets: []sheet{{open: open}}, strict: true, close: func() error { return nil }}, nil
}

// scanText reports whether the whole file is valid UTF-8 and returns its first line (BOM
// stripped, at most 64 KiB), reading in blocks.
func scanText(f *os.File) (bool, string, error) {
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(64 << 10)
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	if i := bytes.IndexAny(head, "\r\n"); i >= 0 {
		head = head[:i]
	}
	first := string(head)
	buf := make([]byte, 64<<10)
	carry := 0
	for {
		n, err := br.Read(buf[carry:])
		n += carry
		// Keep an incomplete rune at the end of the block for the next one.
		end := n
		for i := 0; i < utf8.UTFMax-1 && end > 0; i++ {
			if r := buf[end-1]; r < utf8.RuneSelf {
				break
			} else if utf8.RuneStart(r) {
				if !utf8.FullRune(buf[end-1 : n]) {
					end--
				}
				break
			}
			end--
		}
		if err == io.EOF {
			end = n
		}
		if !utf8.Valid(buf[:end]) {
			return false, first, nil
		}
		carry = copy(buf, buf[end:n])
		if err == io.EOF {
			return true, first, nil
		}
		if err != nil {
			return false, "", fmt.Errorf("read file: %w", err)
		}
	}
}

func skipBOM(r *bufio.Reader) *bufio.Reader {
	if b, err := r.Peek(3); err == nil && bytes.Equal(b, []byte("\ufeff")) {
		_, _ = r.Discard(3)
	}
	return r
}

type csvReader struct {
	f *os.File
	r *csv.Reader
}

func (c *csvReader) next() (record, error) {
	cells, err := c.r.Read()
	if err == io.EOF {
		return record{}, io.EOF
	}
	if err != nil {
		return record{}, badFile("%v", err)
	}
	return record{cells: cells, blank: allBlank(cells)}, nil
}

func (c *csvReader) close() error { return c.f.Close() }

func allBlank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

type jsonlReader struct {
	f    *os.File
	r    *bufio.Reader
	line []byte
}

func (j *jsonlReader) next() (record, error) {
	j.line = j.line[:0]
	for {
		chunk, err := j.r.ReadSlice('\n')
		j.line = append(j.line, chunk...)
		if len(j.line) > maxLine {
			return record{}, badFile("a line is longer than %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(j.line) == 0 {
			return record{}, io.EOF
		}
		if err != nil && err != io.EOF {
			return record{}, fmt.Errorf("read file: %w", err)
		}
		break
	}
	line := bytes.TrimSpace(bytes.TrimPrefix(j.line, []byte("\ufeff")))
	if len(line) == 0 {
		return record{blank: true}, nil
	}
	return parseObject(line), nil
}

func (j *jsonlReader) close() error { return j.f.Close() }

// parseObject reads one JSON object keeping its keys in order (the columns follow the order in
// which keys first appear).
func parseObject(line []byte) record {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return record{bad: "invalid JSON: " + err.Error()}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return record{bad: "row must be a JSON object"}
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return record{bad: "invalid JSON: " + err.Error()}
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return record{bad: "invalid JSON: " + err.Error()}
		}
		fields = append(fields, field{key: key, raw: raw})
	}
	if _, err := dec.Token(); err != nil {
		return record{bad: "invalid JSON: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return record{bad: "invalid JSON: more than one value on the line"}
	}
	return record{fields: fields}
}

// ---- XLSX ----

// excelErrors are the error values a formula cell can hold: imported as null.
var excelErrors = map[string]bool{"#NULL!": true, "#DIV/0!": true, "#VALUE!": true, "#REF!": true,
	"#NAME?": true, "#NUM!": true, "#N/A": true, "#GETTING_DATA": true, "#SPILL!": true, "#CALC!": true,
	"#FIELD!": true, "#BLOCKED!": true, "#CONNECT!": true, "#BUSY!": true, "#UNKNOWN!": true}

func openXLSX(path string) (*source, error) {
	// Built-in date formats render as ISO dates, which the reader below recognizes; big sheets
	// are unzipped to temporary files by excelize (over UnzipXMLSizeLimit), not into memory.
	f, err := excelize.OpenFile(path, excelize.Options{ShortDatePattern: "yyyy-mm-dd",
		LongDatePattern: "yyyy-mm-dd", LongTimePattern: "hh:mm:ss"})
	if err != nil {
		return nil, badFile("open workbook: %v", err)
	}
	date1904 := false
	if props, err := f.GetWorkbookProps(); err == nil && props.Date1904 != nil {
		date1904 = *props.Date1904
	}
	src := &source{format: XLSX, close: f.Close}
	for _, name := range f.GetSheetList() {
		name := name
		src.sheets = append(src.sheets, sheet{name: name, open: func() (rowReader, error) {
			raw, err := f.Rows(name)
			if err != nil {
				return nil, badFile("sheet %q: %v", name, err)
			}
			shown, err := f.Rows(name)
			if err != nil {
				raw.Close()
				return nil, badFile("sheet %q: %v", name, err)
			}
			return &xlsxReader{sheet: name, raw: raw, shown: shown, date1904: date1904}, nil
		}})
	}
	return src, nil
}

// xlsxReader walks a sheet with two of excelize's streaming iterators in step: one gives the
// stored values (full-precision numbers, "1"/"0" booleans, date serials), the other the values as
// displayed, which tell a date from a number and a boolean from an integer (the streaming API
// does not expose cell styles).
type xlsxReader struct {
	sheet      string
	raw, shown *excelize.Rows
	date1904   bool
}

func (x *xlsxReader) next() (record, error) {
	if !x.raw.Next() {
		if err := x.raw.Error(); err != nil {
			return record{}, badFile("sheet %q: %v", x.sheet, err)
		}
		return record{}, io.EOF
	}
	x.shown.Next()
	raw, err := x.raw.Columns(excelize.Options{RawCellValue: true})
	if err != nil {
		return record{}, badFile("sheet %q: %v", x.sheet, err)
	}
	shown, err := x.shown.Columns()
	if err != nil {
		return record{}, badFile("sheet %q: %v", x.sheet, err)
	}
	cells := make([]string, len(raw))
	for i, r := range raw {
		s := ""
		if i < len(shown) {
			s = shown[i]
		}
		cells[i] = x.cell(r, s)
	}
	return record{cells: cells, blank: allBlank(cells)}, nil
}

var (
	dateLike  = regexp.MustCompile(`\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\d{1,2}:\d{2}|(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b`)
	plainNum  = regexp.MustCompile(`^-?\d+(\.\d+)?$`)
	sigDigits = regexp.MustCompile(`[1-9](\d*[1-9])?`)
)

// cell picks the value of one cell from its stored and displayed forms.
func (x *xlsxReader) cell(raw, shown string) string {
	switch {
	case raw == "" || excelErrors[raw]:
		return ""
	case raw == shown:
		return raw // text, or a number shown as stored
	case (raw == "1" || raw == "0") && (shown == "TRUE" || shown == "FALSE"):
		return strings.ToLower(shown)
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return shown
	}
	if plainNum.MatchString(shown) {
		return shown // a number excelize rounded to the 15 digits Excel shows
	}
	if dateLike.MatchString(shown) {
		if v < 1 {
			return shown // a time of day without a date: kept as displayed
		}
		t, err := excelize.ExcelDateToTime(v, x.date1904)
		if err != nil {
			return shown
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	// A number behind a display format ("1,234.50", "12%", "$5"): the stored value, at the 15
	// significant digits Excel keeps.
	mant := raw
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	if len(sigDigits.FindString(strings.Replace(mant, ".", "", 1))) > 15 {
		return strconv.FormatFloat(v, 'G', 15, 64)
	}
	return raw
}

func (x *xlsxReader) close() error {
	err := x.raw.Close()
	if err2 := x.shown.Close(); err == nil {
		err = err2
	}
	return err
}

// ---- type inference ----

// caps is the set of types a value fits.
type caps uint8

const (
	capInt caps = 1 << iota
	capNum
	capBool
	capTime
	capAll = capInt | capNum | capBool | capTime
)

// colStats accumulates what the values of one column fit.
type colStats struct {
	caps caps
	seen bool
}

// text reports that the column is text whatever comes: its later values need no look.
func (c *colStats) text() bool { return c.seen && c.caps == 0 }

func (c *colStats) add(k caps) {
	if !c.seen {
		c.caps, c.seen = capAll, true
	}
	c.caps &= k
}

func (c colStats) typ() string {
	switch {
	case !c.seen:
		return "text"
	case c.caps&capInt != 0:
		return "integer"
	case c.caps&capNum != 0:
		return "numeric"
	case c.caps&capBool != 0:
		return "boolean"
	case c.caps&capTime != 0:
		return "timestamp"
	}
	return "text"
}

var leadingZero = regexp.MustCompile(`^[+-]?0\d`)

// textCaps says which types a non-empty cell of a CSV or XLSX file fits.
func textCaps(s string) caps {
	s = strings.TrimSpace(s)
	var k caps
	if s == "" {
		return 0
	}
	if c := s[0]; (c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.') && !leadingZero.MatchString(s) && isDecimal(s) {
		k |= capNum
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			k |= capInt
		}
	}
	switch strings.ToLower(s) {
	case "true", "false", "t", "f", "yes", "no", "y", "n", "1", "0":
		k |= capBool
	}
	if k == 0 && isTime(s) {
		k |= capTime
	}
	return k
}

func isTime(s string) bool {
	if len(s) < 10 || s[4] != '-' {
		return false // every accepted layout starts with YYYY-
	}
	for _, l := range timeLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return true
		}
	}
	return false
}

// jsonCaps says which types a JSON value fits: JSON's own types decide, strings may be
// timestamps (JSON has no date type) but never numbers or booleans.
func jsonCaps(raw json.RawMessage) (caps, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	switch raw[0] {
	case 't', 'f':
		return capBool, true
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil && isTime(strings.TrimSpace(s)) {
			return capTime, true
		}
		return 0, true
	case '{', '[':
		return 0, true
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return capInt | capNum, true
	}
	return capNum, true
}

// ---- planning (first pass) ----

// PlannedTable is one table an import will (re)create.
type PlannedTable struct {
	Name     string
	Sheet    string // the workbook sheet it comes from; "" for CSV, TSV and JSON Lines
	Table    Table
	Declared bool // the definition comes from the collection's tables, not from the data
	Records  int  // records after the header, blank ones included

	sheet  sheet
	header []string       // CSV, XLSX: the column name of each cell position
	keys   map[string]int // JSON Lines: key -> column index; -1 for a key the table does not define
}

// Plan is the outcome of the first pass: what tables a file will become. Close it when done.
type Plan struct {
	Format   Format
	Tables   []PlannedTable
	Defined  Tables // the collection's defined tables (created empty when no file produced them yet)
	strict   bool
	closeSrc func() error
}

// Close releases the opened file.
func (p *Plan) Close() error { return p.closeSrc() }

// PlanImport reads the file once: finds the sheets with data, their header and the type of each
// column, or matches them to the defined tables (declared: the collection's `tables` that are
// not owned by an inferred import, see Declared). Errors wrapping ErrBadFile mean the file cannot
// be imported.
func PlanImport(path, fileName, contentType string, declared Tables) (*Plan, error) {
	src, err := openSource(path, fileName, contentType)
	if err != nil {
		return nil, err
	}
	p := &Plan{Format: src.format, Defined: declared, strict: src.strict, closeSrc: src.close}
	if err := p.scan(src, fileName); err != nil {
		src.close()
		return nil, err
	}
	return p, nil
}

// scanned is what the first pass learns about one sheet.
type scanned struct {
	sheet   sheet
	names   []string // source column names: header cells or JSON keys in order of appearance
	keys    map[string]int
	stats   []colStats
	records int
}

func (p *Plan) scan(src *source, fileName string) error {
	var found []scanned
	for _, sh := range src.sheets {
		s, ok, err := scanSheet(sh, src.format, src.strict)
		if err != nil {
			return err
		}
		if ok {
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		return badFile("%q holds no data", fileName)
	}
	base := FileTableName(fileName)
	taken := map[string]bool{}
	for _, s := range found {
		name := base
		if len(found) > 1 {
			part := clip(SanitizeIdent(s.sheet.name, "", "sheet"), 31)
			name = clip(base, 62-len(part)) + "_" + part
		}
		name = dedupe(name, taken)
		pt, err := p.table(name, s)
		if err != nil {
			return err
		}
		p.Tables = append(p.Tables, pt)
	}
	return nil
}

// scanSheet is the first pass over one sheet; ok is false for a sheet without any value.
func scanSheet(sh sheet, format Format, strict bool) (scanned, bool, error) {
	r, err := sh.open()
	if err != nil {
		return scanned{}, false, err
	}
	defer r.close()
	s := scanned{sheet: sh, keys: map[string]int{}}
	objects := 0
	headerDone := format == JSONL
	for {
		rec, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if sh.name != "" {
				return scanned{}, false, fmt.Errorf("sheet %q: %w", sh.name, err)
			}
			return scanned{}, false, err
		}
		if !headerDone {
			if rec.blank {
				continue
			}
			s.names = append([]string(nil), rec.cells...)
			s.stats = make([]colStats, len(s.names))
			headerDone = true
			continue
		}
		s.records++
		if rec.blank || rec.bad != "" {
			continue
		}
		if format == JSONL {
			objects++
			for _, f := range rec.fields {
				i, ok := s.keys[f.key]
				if !ok {
					i = len(s.names)
					s.keys[f.key] = i
					s.names = append(s.names, f.key)
					s.stats = append(s.stats, colStats{})
				}
				if s.stats[i].text() {
					continue
				}
				if k, ok := jsonCaps(f.raw); ok {
					s.stats[i].add(k)
				}
			}
			continue
		}
		cells := rec.cells
		if strict {
			if len(trimCells(cells, len(s.names))) != len(s.names) {
				continue // rejected in the second pass
			}
		} else if n := len(trimCells(cells, 0)); n > len(s.names) {
			// A workbook row may reach past the header: the extra columns get generated names.
			for len(s.names) < n {
				s.names = append(s.names, "")
				s.stats = append(s.stats, colStats{})
			}
		}
		for i, c := range cells {
			if i < len(s.stats) && !s.stats[i].text() && strings.TrimSpace(c) != "" {
				s.stats[i].add(textCaps(c))
			}
		}
	}
	if format == JSONL && s.records > 0 && len(s.names) == 0 {
		if objects == 0 {
			return scanned{}, false, badFile("no line is a JSON object")
		}
		return scanned{}, false, badFile("the JSON objects hold no keys")
	}
	if format == JSONL {
		return s, s.records > 0, nil
	}
	return s, headerDone, nil
}

// trimCells drops empty cells at the end past min: "a,b,c," under a three-column header has
// three fields.
func trimCells(cells []string, min int) []string {
	n := len(cells)
	for n > min && strings.TrimSpace(cells[n-1]) == "" {
		n--
	}
	return cells[:n]
}

// table turns a scanned sheet into a planned table: the defined one when the collection defines
// a table of that name, else the inferred one.
func (p *Plan) table(name string, s scanned) (PlannedTable, error) {
	pt := PlannedTable{Name: name, Sheet: s.sheet.name, Records: s.records, sheet: s.sheet}
	// Source names -> column names, sanitized and unique.
	taken := map[string]bool{}
	for r := range reserved {
		taken[r] = true
	}
	cols := make([]string, len(s.names))
	for i, n := range s.names {
		cols[i] = dedupe(SanitizeIdent(strings.TrimSpace(n), "c_", "column_"+strconv.Itoa(i+1)), taken)
	}
	def, declared := p.Defined[name]
	if !declared {
		t := Table{}
		yes := true
		for i, c := range cols {
			t.Columns = append(t.Columns, Column{Name: c, Type: s.stats[i].typ(), Nullable: &yes})
		}
		pt.Table = t
		if p.Format == JSONL {
			pt.keys = make(map[string]int, len(s.keys))
			for k, i := range s.keys {
				pt.keys[k] = i
			}
		} else {
			pt.header = cols
		}
		return pt, nil
	}
	pt.Table, pt.Declared = def, true
	index := map[string]int{}
	for i, c := range def.Columns {
		index[c.Name] = i
	}
	if p.Format == JSONL {
		// Keys are matched like ingest matches them, by exact name (a sanitized spelling is
		// accepted too); unknown keys reject their rows, as in ingest.
		pt.keys = make(map[string]int, len(s.keys))
		for k := range s.keys {
			i, ok := index[k]
			if !ok {
				i, ok = index[SanitizeIdent(strings.TrimSpace(k), "c_", "")]
			}
			if !ok {
				i = -1
			}
			pt.keys[k] = i
		}
		return pt, nil
	}
	present := map[string]bool{}
	for i, c := range cols {
		if _, ok := index[c]; !ok {
			if strings.TrimSpace(s.names[i]) == "" {
				return pt, badFile("table %q: column %d has no header, and the table defines no %q", name, i+1, c)
			}
			return pt, badFile("table %q: header %q (column %q) is not a column of the defined table", name, s.names[i], c)
		}
		present[c] = true
	}
	for _, c := range def.Columns {
		if !present[c.Name] && !c.IsNullable() {
			return pt, badFile("table %q: the header lacks the required column %q", name, c.Name)
		}
	}
	pt.header = cols
	return pt, nil
}

// ---- binding rows (second pass) ----

// binder turns records into rows of a planned table, in its column order.
type binder struct {
	pt     *PlannedTable
	strict bool
	pos    []int // CSV, XLSX: table column -> cell position, -1 when the file lacks it
	width  int   // header width
	vals   []json.RawMessage
	have   []bool
}

func newBinder(pt *PlannedTable, strict bool) *binder {
	b := &binder{pt: pt, strict: strict, width: len(pt.header)}
	n := len(pt.Table.Columns)
	b.vals, b.have = make([]json.RawMessage, n), make([]bool, n)
	if pt.header != nil {
		b.pos = make([]int, n)
		for i := range b.pos {
			b.pos[i] = -1
		}
		for p, name := range pt.header {
			for i, c := range pt.Table.Columns {
				if c.Name == name {
					b.pos[i] = p
				}
			}
		}
	}
	return b
}

// bind returns the row's values, or why the record is rejected.
func (b *binder) bind(rec record) ([]any, error) {
	if rec.bad != "" {
		return nil, errors.New(rec.bad)
	}
	for i := range b.vals {
		b.vals[i], b.have[i] = nil, false
	}
	if b.pos != nil {
		cells := rec.cells
		if b.strict {
			if n := len(trimCells(cells, b.width)); n != b.width {
				return nil, fmt.Errorf("record has %d fields, the header has %d", n, b.width)
			}
		}
		for i, p := range b.pos {
			if p < 0 {
				continue
			}
			b.have[i] = true
			if p < len(cells) && strings.TrimSpace(cells[p]) != "" {
				b.vals[i] = jsonString(cells[p])
			}
		}
	} else {
		for _, f := range rec.fields {
			i, ok := b.pt.keys[f.key]
			if !ok || i < 0 {
				return nil, fmt.Errorf("unknown column %q", f.key)
			}
			b.have[i] = true
			raw := f.raw
			// An inferred text column holds nested objects and arrays as their JSON text; a
			// defined one refuses them, as ingest does.
			if !b.pt.Declared && len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') {
				var buf bytes.Buffer
				if json.Compact(&buf, raw) == nil {
					raw = jsonString(buf.String())
				}
			}
			b.vals[i] = raw
		}
	}
	row := make([]any, len(b.pt.Table.Columns))
	for i, c := range b.pt.Table.Columns {
		v, err := Coerce(c.Type, b.vals[i])
		if err != nil {
			return nil, fmt.Errorf("column %q: %v", c.Name, err)
		}
		if v == nil {
			if !c.IsNullable() {
				if !b.have[i] {
					return nil, fmt.Errorf("column %q is required", c.Name)
				}
				return nil, fmt.Errorf("column %q must not be null", c.Name)
			}
			continue
		}
		// PostgreSQL text cannot hold NUL.
		if x, ok := v.(string); ok && strings.IndexByte(x, 0) >= 0 {
			return nil, fmt.Errorf("column %q: text contains a NUL character", c.Name)
		}
		row[i] = v
	}
	return row, nil
}

// jsonString quotes a cell as a JSON string for Coerce, without the encoder when nothing needs
// escaping (the common case).
func jsonString(s string) json.RawMessage {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			raw, _ := json.Marshal(s)
			return raw
		}
	}
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// ---- ownership ----

// Owner says where an imported table came from; it is stored as the table's comment.
type Owner struct {
	FileID   uuid.UUID `json:"fileId"`
	Declared bool      `json:"declared"`
}

const ownerTag = "docindex-import "

// Owners returns the owner of every table in the collection's schema that has one (none when
// the schema does not exist).
func Owners(ctx context.Context, db bun.IDB, collectionID uuid.UUID) (map[string]Owner, error) {
	rows, err := db.QueryContext(ctx, `SELECT c.relname, coalesce(obj_description(c.oid, 'pg_class'), '')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = ? AND c.relkind IN ('r', 'p')`, Schema(collectionID))
	if err != nil {
		return nil, fmt.Errorf("table owners: %w", err)
	}
	defer rows.Close()
	out := map[string]Owner{}
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			return nil, fmt.Errorf("table owners: %w", err)
		}
		if rest, ok := strings.CutPrefix(comment, ownerTag); ok {
			var o Owner
			if json.Unmarshal([]byte(rest), &o) == nil {
				out[name] = o
			}
		}
	}
	return out, rows.Err()
}

func setOwner(ctx context.Context, tx bun.IDB, schema, table string, o Owner) error {
	raw, _ := json.Marshal(o)
	// COMMENT takes no parameters; bun quotes the value as a literal.
	if _, err := tx.ExecContext(ctx, "COMMENT ON TABLE ?.? IS ?", bun.Ident(schema), bun.Ident(table), ownerTag+string(raw)); err != nil {
		return fmt.Errorf("record owner of %s: %w", table, err)
	}
	return nil
}

// Declared returns the tables of a collection's schema (its liveSchema) whose definition was
// given by the user, not inferred by an import: those a later import must follow.
func Declared(ctx context.Context, db bun.IDB, collectionID uuid.UUID, live Tables) (Tables, error) {
	owners, err := Owners(ctx, db, collectionID)
	if err != nil {
		return nil, err
	}
	out := Tables{}
	for name, t := range live {
		if o, ok := owners[name]; ok && !o.Declared {
			continue
		}
		out[name] = t
	}
	return out, nil
}

// lockTables serializes imports and deletes touching the same tables (a replace is a drop and a
// create, which two transactions must not interleave). Locks are taken in name order.
func lockTables(ctx context.Context, tx bun.IDB, schema string, names []string) error {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	for _, n := range sorted {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 7041))", schema+"."+n); err != nil {
			return fmt.Errorf("lock table %s: %w", n, err)
		}
	}
	return nil
}

// DropImported removes what a file imported, inside the caller's transaction: its inferred
// tables are dropped (returned, so the caller removes them from the liveSchema) and its defined
// tables emptied.
func DropImported(ctx context.Context, tx bun.IDB, collectionID, fileID uuid.UUID) ([]string, error) {
	schema := Schema(collectionID)
	owners, err := Owners(ctx, tx, collectionID)
	if err != nil {
		return nil, err
	}
	var mine []string
	for name, o := range owners {
		if o.FileID == fileID {
			mine = append(mine, name)
		}
	}
	if len(mine) == 0 {
		return nil, nil
	}
	if err := lockTables(ctx, tx, schema, mine); err != nil {
		return nil, err
	}
	// Another import may have replaced a table while we waited for its lock: look again.
	if owners, err = Owners(ctx, tx, collectionID); err != nil {
		return nil, err
	}
	var dropped []string
	sort.Strings(mine)
	for _, name := range mine {
		o := owners[name]
		if o.FileID != fileID {
			continue
		}
		if err := release(ctx, tx, schema, name, o); err != nil {
			return nil, err
		}
		if !o.Declared {
			dropped = append(dropped, name)
		}
	}
	return dropped, nil
}

// release drops an inferred table or empties a defined one (which then belongs to no file).
func release(ctx context.Context, tx bun.IDB, schema, name string, o Owner) error {
	if !o.Declared {
		if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS ?.?", bun.Ident(schema), bun.Ident(name)); err != nil {
			return fmt.Errorf("drop table %s: %w", name, err)
		}
		return nil
	}
	if _, err := tx.ExecContext(ctx, "TRUNCATE ?.?", bun.Ident(schema), bun.Ident(name)); err != nil {
		return fmt.Errorf("empty table %s: %w", name, err)
	}
	return setOwner(ctx, tx, schema, name, Owner{Declared: true})
}

// ---- running (second pass) ----

// ImportRowError is a rejected record: its table and 0-based index after the header.
type ImportRowError struct {
	Table string `json:"table"`
	RowError
}

// ImportResult says what an import wrote.
type ImportResult struct {
	// Tables are the definitions of the tables the file (re)created.
	Tables Tables
	// Dropped are inferred tables the file had created before and produces no longer.
	Dropped []string
	// Rows is the number of rows stored per table (after last-wins on a primary key).
	Rows map[string]int
	// Records counts the records read (after the header, blank ones left out).
	Records int
	// Rejected counts rejected records; Errors details the first MaxImportErrors of them.
	Rejected int
	Errors   []ImportRowError
}

// Warning is the file's warning for a result with rejected rows ("" when there are none).
func (r *ImportResult) Warning() string {
	if r.Rejected == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d rows rejected", r.Rejected, r.Records)
	if len(r.Errors) < r.Rejected {
		fmt.Fprintf(&b, " (first %d shown)", len(r.Errors))
	}
	for i, e := range r.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		msg := e.Error
		if len(msg) > 120 {
			msg = msg[:117] + "..."
		}
		fmt.Fprintf(&b, "%s row %d: %s", e.Table, e.Index, msg)
	}
	return b.String()
}

// Commit runs inside the import's transaction, just before it commits: the caller records the
// outcome (file status, the collection's liveSchema). An error rolls the whole import back.
type Commit func(ctx context.Context, tx bun.Tx, res *ImportResult) error

// Run reads the file a second time and (re)creates the planned tables with their rows in one
// transaction: tables this file imported before and no longer produces go, defined tables not
// yet created are created empty, and commit (may be nil) records the outcome. Rows that cannot be
// stored are rejected one by one.
func (p *Plan) Run(ctx context.Context, db *bun.DB, collectionID, fileID uuid.UUID, commit Commit) (*ImportResult, error) {
	schema := Schema(collectionID)
	// The schema in its own short transaction, serialized: two first imports into a collection
	// would otherwise race on CREATE SCHEMA.
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 7041))", schema); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS ?", bun.Ident(schema))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("import: create schema: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck
	res, err := p.run(ctx, conn, tx, schema, collectionID, fileID)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if commit != nil {
		if err := commit(ctx, tx, res); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("import: commit: %w", err)
	}
	return res, nil
}

func (p *Plan) run(ctx context.Context, conn bun.Conn, tx bun.Tx, schema string, collectionID, fileID uuid.UUID) (*ImportResult, error) {
	res := &ImportResult{Tables: Tables{}, Rows: map[string]int{}}
	owners, err := Owners(ctx, tx, collectionID)
	if err != nil {
		return nil, err
	}
	produced := map[string]bool{}
	var names []string
	for _, pt := range p.Tables {
		produced[pt.Name] = true
		names = append(names, pt.Name)
	}
	for name, o := range owners {
		if o.FileID == fileID && !produced[name] {
			names = append(names, name)
		}
	}
	for name := range p.Defined {
		if !produced[name] {
			names = append(names, name)
		}
	}
	if err := lockTables(ctx, tx, schema, names); err != nil {
		return nil, err
	}
	if owners, err = Owners(ctx, tx, collectionID); err != nil {
		return nil, err
	}
	// What this file imported before and no longer produces (a reindex after the naming rules
	// changed, say).
	for _, name := range sortedKeys(owners) {
		o := owners[name]
		if o.FileID != fileID || produced[name] {
			continue
		}
		if err := release(ctx, tx, schema, name, o); err != nil {
			return nil, err
		}
		if !o.Declared {
			res.Dropped = append(res.Dropped, name)
		}
	}
	for i := range p.Tables {
		pt := &p.Tables[i]
		n, err := p.load(ctx, conn, tx, schema, pt, res)
		if err != nil {
			return nil, err
		}
		if err := setOwner(ctx, tx, schema, pt.Name, Owner{FileID: fileID, Declared: pt.Declared}); err != nil {
			return nil, err
		}
		res.Rows[pt.Name] = n
		res.Tables[pt.Name] = Tables{pt.Name: pt.Table}.Normalized()[pt.Name]
	}
	// Defined tables no file has produced yet exist empty, so listing the schema's tables works.
	for _, name := range p.Defined.Names() {
		if produced[name] {
			continue
		}
		var exists bool
		if err := tx.QueryRowContext(ctx, "SELECT to_regclass(?) IS NOT NULL", pgx.Identifier{schema, name}.Sanitize()).Scan(&exists); err != nil {
			return nil, fmt.Errorf("look up table %s: %w", name, err)
		}
		if exists {
			continue
		}
		if _, err := tx.ExecContext(ctx, createImported(schema, name, p.Defined[name])); err != nil {
			return nil, fmt.Errorf("create table %s: %w", name, err)
		}
		if err := setOwner(ctx, tx, schema, name, Owner{Declared: true}); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// createImported is the DDL of an imported table: exactly the defined columns (no bookkeeping
// columns: the whole table belongs to one file), the primary key when one is defined.
func createImported(schema, name string, t Table) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + pgx.Identifier{schema, name}.Sanitize() + " (")
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		// columnTypes values are constants of this package; names are checked identifiers.
		b.WriteString(pgx.Identifier{c.Name}.Sanitize() + " " + columnTypes[c.Type])
		if !c.IsNullable() {
			b.WriteString(" NOT NULL")
		}
	}
	if pk, ok := t.Primary(); ok {
		b.WriteString(", PRIMARY KEY (" + pgx.Identifier{pk.Name}.Sanitize() + ")")
	}
	b.WriteString(")")
	return b.String()
}

// stageOrd is the staging table's column of record order; no sanitized name can take it.
const stageOrd = "#ord"

// load replaces one table and streams its rows in with COPY. With a primary key the rows go
// through a staging table first, so that of several records with one key the last wins, as in
// ingest. It returns the number of rows stored.
func (p *Plan) load(ctx context.Context, conn bun.Conn, tx bun.Tx, schema string, pt *PlannedTable, res *ImportResult) (int, error) {
	for _, c := range pt.Table.Columns {
		if !ValidIdent(c.Name) {
			return 0, fmt.Errorf("table %s: invalid column name %q", pt.Name, c.Name)
		}
	}
	target := pgx.Identifier{schema, pt.Name}.Sanitize()
	if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+target); err != nil {
		return 0, fmt.Errorf("drop table %s: %w", pt.Name, err)
	}
	if _, err := tx.ExecContext(ctx, createImported(schema, pt.Name, pt.Table)); err != nil {
		return 0, fmt.Errorf("create table %s: %w", pt.Name, err)
	}
	cols := make([]string, len(pt.Table.Columns))
	for i, c := range pt.Table.Columns {
		cols[i] = c.Name
	}
	pk, hasPK := pt.Table.Primary()
	into := pgx.Identifier{schema, pt.Name}
	const stage = "docindex_import_stage"
	if hasPK {
		if _, err := tx.ExecContext(ctx, "CREATE TEMP TABLE "+stage+" (LIKE "+target+") ON COMMIT DROP"); err != nil {
			return 0, fmt.Errorf("staging table: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "ALTER TABLE "+stage+" ADD COLUMN "+pgx.Identifier{stageOrd}.Sanitize()+" bigint"); err != nil {
			return 0, fmt.Errorf("staging table: %w", err)
		}
		into = pgx.Identifier{stage}
		cols = append(cols, stageOrd)
	}

	r, err := pt.sheet.open()
	if err != nil {
		return 0, err
	}
	defer r.close()
	b := newBinder(pt, p.strict)
	headerDone := p.Format == JSONL
	index := -1
	var ord int64
	next := func() ([]any, error) {
		for {
			rec, err := r.next()
			if err != nil {
				return nil, err // io.EOF ends the copy
			}
			if !headerDone {
				if !rec.blank {
					headerDone = true
				}
				continue
			}
			index++
			if rec.blank {
				continue
			}
			res.Records++
			row, err := b.bind(rec)
			if err != nil {
				res.Rejected++
				if len(res.Errors) < MaxImportErrors {
					res.Errors = append(res.Errors, ImportRowError{Table: pt.Name, RowError: RowError{Index: index, Error: err.Error()}})
				}
				continue
			}
			if hasPK {
				ord++
				row = append(row, ord)
			}
			return row, nil
		}
	}
	colList := make([]string, len(cols))
	for i, c := range cols {
		colList[i] = pgx.Identifier{c}.Sanitize()
	}
	copySQL := "COPY " + into.Sanitize() + " (" + strings.Join(colList, ", ") + ") FROM STDIN"
	var copied int64
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("import needs a database opened with the pgx stdlib driver")
		}
		// The COPY runs on the connection of tx, so inside its transaction. It is the text
		// format written here, not pgx's CopyFrom: that one looks the column types up through
		// a per-connection cache keyed by the SQL text, stale once a table is recreated with
		// other types.
		tag, err := sc.Conn().PgConn().CopyFrom(ctx, &copyStream{next: next}, copySQL)
		copied = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("copy rows into %s: %w", pt.Name, err)
	}
	if !hasPK {
		return int(copied), nil
	}
	list := make([]string, len(pt.Table.Columns))
	for i, c := range pt.Table.Columns {
		list[i] = pgx.Identifier{c.Name}.Sanitize()
	}
	pkIdent := pgx.Identifier{pk.Name}.Sanitize()
	merged, err := tx.ExecContext(ctx, "INSERT INTO "+target+" ("+strings.Join(list, ", ")+") SELECT DISTINCT ON ("+pkIdent+") "+
		strings.Join(list, ", ")+" FROM "+stage+" ORDER BY "+pkIdent+", "+pgx.Identifier{stageOrd}.Sanitize()+" DESC")
	if err != nil {
		return 0, fmt.Errorf("merge rows into %s: %w", pt.Name, err)
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE "+stage); err != nil {
		return 0, fmt.Errorf("staging table: %w", err)
	}
	n, _ := merged.RowsAffected()
	return int(n), nil
}

// copyStream encodes rows in COPY's text format as the server reads them, so no more than a
// buffer of rows is ever held.
type copyStream struct {
	next func() ([]any, error)
	buf  bytes.Buffer
	err  error
}

func (c *copyStream) Read(p []byte) (int, error) {
	for c.buf.Len() < len(p) && c.err == nil {
		row, err := c.next()
		if err != nil {
			c.err = err
			break
		}
		for i, v := range row {
			if i > 0 {
				c.buf.WriteByte('\t')
			}
			appendCopyValue(&c.buf, v)
		}
		c.buf.WriteByte('\n')
	}
	if c.buf.Len() > 0 {
		return c.buf.Read(p)
	}
	return 0, c.err
}

// appendCopyValue writes one value of a bound row: nil, int64, bool, time.Time or a string
// (text, or a validated decimal literal for numeric columns).
func appendCopyValue(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString(`\N`)
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case bool:
		if x {
			b.WriteByte('t')
		} else {
			b.WriteByte('f')
		}
	case time.Time:
		b.WriteString(x.UTC().Format("2006-01-02 15:04:05.999999999Z07:00"))
	case string:
		for i := 0; i < len(x); i++ {
			switch c := x[i]; c {
			case '\\':
				b.WriteString(`\\`)
			case '\t':
				b.WriteString(`\t`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			default:
				b.WriteByte(c)
			}
		}
	default:
		fmt.Fprint(b, x)
	}
}
