package extract

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Page is the text of one page of a document.
type Page struct {
	Number int    // 1-based page (PDF pages, PPTX slides); 0 when the format has no pages
	Text   string // Markdown where the format has structure (HTML, DOCX headings, tables), else plain text
}

// Document is what Extract returns for a readable file.
type Document struct {
	Format    string   // "pdf", "docx", "pptx", "odt", "xlsx", "csv", "html", "markdown", "text", "json"
	Title     string   // from the file's metadata or its first heading; "" when it has none
	Pages     []Page   // pages that hold text, in order; pages without text are left out
	PageCount int      // pages in the source (PDF/PPTX), 0 when not paged
	Warnings  []string // why part of the file could not be read; non-empty means the file ends indexed_with_warning
}

// Text returns the text of all pages joined by blank lines.
func (d *Document) Text() string {
	parts := make([]string, 0, len(d.Pages))
	for _, p := range d.Pages {
		parts = append(parts, p.Text)
	}
	return strings.Join(parts, "\n\n")
}

// permanentError is a sentinel that also matches ErrUnsupported, so that callers who
// fail a job at once on ErrUnsupported do the same for files that can never be read.
type permanentError struct{ msg string }

func (e *permanentError) Error() string        { return e.msg }
func (e *permanentError) Is(target error) bool { return target == ErrUnsupported }

var (
	// ErrUnsupported marks a permanent failure: a format we cannot read. Callers fail
	// the job at once instead of retrying.
	ErrUnsupported = errors.New("unsupported file format")
	// ErrEncrypted marks a password-protected file. errors.Is(err, ErrUnsupported) holds too.
	ErrEncrypted error = &permanentError{"file is encrypted (password protected)"}
	// ErrCorrupt marks a file whose format we know but whose content is damaged or not
	// what its type claims. errors.Is(err, ErrUnsupported) holds too.
	ErrCorrupt error = &permanentError{"file is corrupt or not of its declared type"}
)

// Defaults of the options.
const (
	DefaultMaxTextBytes = 32 << 20
	DefaultMaxPages     = 0 // no limit
	DefaultPDFTimeout   = 5 * time.Minute
)

// Extractor extracts text from files. It is safe for concurrent use; it holds only
// its configuration.
type Extractor struct {
	pdftotext    string // path of pdftotext; "" uses the pure Go reader
	pdfinfo      string // path of pdfinfo; "" counts pages from pdftotext's output
	maxPages     int
	maxTextBytes int
	pdfTimeout   time.Duration
}

// Option configures an Extractor.
type Option func(*Extractor)

// WithPdftotext sets the pdftotext binary used for PDFs. "" disables it, so that the
// pure Go reader is used. By default pdftotext is looked up on PATH when New runs.
// pdfinfo (same package) is looked up next to it for page count and title.
func WithPdftotext(path string) Option {
	return func(e *Extractor) {
		e.pdftotext = path
		e.pdfinfo = ""
		if path != "" {
			if p := filepath.Join(filepath.Dir(path), "pdfinfo"); isExecutable(p) {
				e.pdfinfo = p
			} else if p, err := exec.LookPath("pdfinfo"); err == nil {
				e.pdfinfo = p
			}
		}
	}
}

// WithMaxPages caps the pages (PDF) and slides (PPTX) read; past the cap the rest is
// left out with a warning. 0 means no limit.
func WithMaxPages(n int) Option {
	return func(e *Extractor) { e.maxPages = max(n, 0) }
}

// WithMaxTextBytes caps the extracted text of one file (and the input read from text
// formats). Past the cap the text is cut and a warning says so. n <= 0 restores the
// default.
func WithMaxTextBytes(n int) Option {
	return func(e *Extractor) {
		if n <= 0 {
			n = DefaultMaxTextBytes
		}
		e.maxTextBytes = n
	}
}

// WithPDFTimeout bounds the time pdftotext and pdfinfo may run on one file.
func WithPDFTimeout(d time.Duration) Option {
	return func(e *Extractor) {
		if d <= 0 {
			d = DefaultPDFTimeout
		}
		e.pdfTimeout = d
	}
}

// New returns an Extractor. pdftotext is used for PDFs when it is on PATH.
func New(opts ...Option) *Extractor {
	e := &Extractor{maxPages: DefaultMaxPages, maxTextBytes: DefaultMaxTextBytes, pdfTimeout: DefaultPDFTimeout}
	if p, err := exec.LookPath("pdftotext"); err == nil {
		WithPdftotext(p)(e)
	}
	for _, o := range opts {
		o(e)
	}
	return e
}

// UsesPdftotext reports whether PDFs go through pdftotext (else the pure Go reader).
func (e *Extractor) UsesPdftotext() bool { return e.pdftotext != "" }

// Extract reads the file at path. name is the original file name (its extension helps
// detection) and contentType the type the client declared, which may be empty or
// generic; the content is sniffed as well. The returned error wraps ErrUnsupported
// (or ErrEncrypted, ErrCorrupt) when retrying cannot help.
func (e *Extractor) Extract(ctx context.Context, path, name, contentType string) (*Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	format, err := formatOf(path, name, contentType)
	if err != nil {
		return nil, err
	}
	var doc *Document
	switch format {
	case "text":
		doc, err = e.text(path)
	case "markdown":
		doc, err = e.markdown(path)
	case "json":
		doc, err = e.json(path)
	case "csv":
		doc, err = e.csv(ctx, path, name)
	case "html":
		doc, err = e.html(path)
	case "pdf":
		doc, err = e.pdf(ctx, path)
	case "docx":
		doc, err = e.docx(ctx, path)
	case "pptx":
		doc, err = e.pptx(ctx, path)
	case "odt":
		doc, err = e.odt(ctx, path)
	case "xlsx":
		doc, err = e.xlsx(ctx, path)
	default:
		return nil, fmt.Errorf("extract: format %q: %w", format, ErrUnsupported)
	}
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", format, err)
	}
	doc.Format = format
	doc.finish()
	return doc, nil
}

// finish normalises the text of every page, drops empty pages and adds the warning
// that a file without any text deserves.
func (d *Document) finish() {
	pages := d.Pages[:0]
	for _, p := range d.Pages {
		p.Text = cleanText(p.Text)
		if p.Text != "" {
			pages = append(pages, p)
		}
	}
	d.Pages = pages
	d.Title = strings.TrimSpace(strings.Join(strings.Fields(cleanText(d.Title)), " "))
	if len(d.Pages) == 0 {
		msg := "no text could be extracted"
		if d.Format == "pdf" && d.PageCount > 0 {
			msg = "no text layer: the PDF may hold scanned images (no OCR is done)"
		}
		d.Warnings = append(d.Warnings, msg)
	}
}

// cleanText makes text safe to store and chunk: valid UTF-8, \n line ends, no control
// characters (PostgreSQL rejects NUL), no trailing blanks, at most one blank line in a row.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	blank := 0
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.Map(func(r rune) rune {
			switch {
			case r == '\t':
				return r
			case r == '\r' || r == '\f' || r == '\v' || r == '\u00a0':
				return ' '
			case r < 0x20 || r == 0x7f || r == '\uFEFF':
				return -1
			}
			return r
		}, line)
		line = strings.TrimRight(line, " \t")
		if line == "" {
			blank++
			continue
		}
		if b.Len() > 0 {
			if blank > 0 {
				b.WriteString("\n\n")
			} else {
				b.WriteByte('\n')
			}
		}
		blank = 0
		b.WriteString(line)
	}
	return b.String()
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// textBuf collects extracted text up to a byte cap. Writers check full() to stop
// early; the cut is reported as a warning by the caller.
type textBuf struct {
	b    strings.Builder
	max  int
	full bool
}

func newTextBuf(max int) *textBuf { return &textBuf{max: max} }

func (t *textBuf) WriteString(s string) {
	if t.full {
		return
	}
	if room := t.max - t.b.Len(); len(s) > room {
		s = truncateUTF8(s, room)
		t.full = true
	}
	t.b.WriteString(s)
}

func (t *textBuf) String() string { return t.b.String() }
func (t *textBuf) Len() int       { return t.b.Len() }

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func capWarning(n int) string {
	return fmt.Sprintf("text cut at %d bytes: the file holds more text than the extraction limit", n)
}
