package images

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind says what an Image is, so a Describer can choose how to read it: a vision model
// transcribes a rendered page but describes a photo.
type Kind string

const (
	// KindPage is a whole page rendered to an image because it holds no text layer
	// (a scanned page). Its text is what matters.
	KindPage Kind = "page"
	// KindEmbedded is an image inside a document (a figure, a photo, a scan placed in a PDF).
	KindEmbedded Kind = "embedded"
	// KindFile is an uploaded image file.
	KindFile Kind = "file"
)

// Image is one image to describe.
type Image struct {
	Kind        Kind
	Page        int    // 1-based page or slide it appears on; 0 when the source has no pages
	Name        string // where it came from: "page-3.png", "word/media/image1.png", the file's name
	ContentType string // image/png, image/jpeg, image/gif, image/tiff, image/webp, image/bmp
	Data        []byte // the encoded image, at most the Collector's byte limit
}

// Describer turns an image into text for indexing: a description from a vision model, or
// the words printed on it from OCR. An image without anything worth indexing gives "" and
// no error. Describers must be safe for concurrent use: workers index files in parallel.
type Describer interface {
	Describe(ctx context.Context, img Image) (string, error)
}

// Mode selects the images of a document, as a collection's imageDescriptionMode.
type Mode string

const (
	ModeAll        Mode = "all"         // every image
	ModeEmptyPages Mode = "empty_pages" // only pages (slides) without extractable text
)

// Formats the Collector finds images in; Source.Format takes these (the names the extract
// package gives) and FormatImage for an image file. Other formats hold no images it reads.
const (
	FormatPDF   = "pdf"
	FormatDOCX  = "docx"
	FormatPPTX  = "pptx"
	FormatImage = "image"
)

// Source is a document whose images are wanted.
type Source struct {
	Path   string // the file on local disk
	Name   string // the original file name (names an image file's Image)
	Format string // FormatPDF, FormatDOCX, FormatPPTX, FormatImage; others give no images
	// PageCount is the number of pages (PDF) or slides (PPTX); 0 asks pdfinfo for a PDF.
	PageCount int
	// TextPages lists the pages (slides) that hold text, as extraction found them;
	// ModeEmptyPages leaves them alone. For a DOCX, any entry means the document holds text.
	TextPages []int
}

// Description is the text a Describer gave for one image.
type Description struct {
	Page int    // as Image.Page
	Kind Kind   // as Image.Kind
	Name string // as Image.Name
	Text string // what the Describer returned, cleaned and capped
}

// Section returns the description as a section of text to index, labelled with where the
// image was, so a reader of a search hit knows the text came from an image.
func (d Description) Section() string {
	switch {
	case d.Kind == KindPage:
		return fmt.Sprintf("[Scanned page %d]\n%s", d.Page, d.Text)
	case d.Page > 0:
		return fmt.Sprintf("[Image on page %d]\n%s", d.Page, d.Text)
	}
	return "[Image]\n" + d.Text
}

// Defaults of the Collector's options.
const (
	DefaultDPI           = 200
	DefaultMaxImages     = 50
	DefaultMaxImageBytes = 20 << 20 // what vision APIs commonly accept
	DefaultMaxTextBytes  = 64 << 10
	DefaultToolTimeout   = 2 * time.Minute
	// DefaultMaxPixels bounds the longer side of a rendered page: a poster-sized page at
	// 200 dpi would be a gigapixel image.
	DefaultMaxPixels = 5000
)

// Collector finds the images of documents. It holds only its configuration and is safe
// for concurrent use.
type Collector struct {
	pdftoppm, pdfimages, pdfinfo string
	dpi, maxPixels               int
	maxImages                    int
	maxBytes                     int64
	maxText                      int
	timeout                      time.Duration
}

// Option configures a Collector.
type Option func(*Collector)

// WithDPI sets the resolution pages are rendered at (default 200: enough for OCR of body text).
func WithDPI(n int) Option {
	return func(c *Collector) {
		if n > 0 {
			c.dpi = n
		}
	}
}

// WithMaxImages caps the images described per document (default 50); past it a warning
// says how many were left out.
func WithMaxImages(n int) Option {
	return func(c *Collector) {
		if n > 0 {
			c.maxImages = n
		}
	}
}

// WithMaxImageBytes caps the size of one image (default 20 MiB); larger images are
// skipped with a warning.
func WithMaxImageBytes(n int64) Option {
	return func(c *Collector) {
		if n > 0 {
			c.maxBytes = n
		}
	}
}

// WithMaxTextBytes caps the text kept from one description (default 64 KiB).
func WithMaxTextBytes(n int) Option {
	return func(c *Collector) {
		if n > 0 {
			c.maxText = n
		}
	}
}

// WithToolTimeout bounds one run of a poppler tool (default 2 minutes).
func WithToolTimeout(d time.Duration) Option {
	return func(c *Collector) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithPopplerDir takes pdftoppm, pdfimages and pdfinfo from dir instead of PATH; "" means
// none, so that PDFs give no images.
func WithPopplerDir(dir string) Option {
	return func(c *Collector) {
		c.pdftoppm, c.pdfimages, c.pdfinfo = "", "", ""
		if dir == "" {
			return
		}
		for _, t := range []struct {
			name string
			dst  *string
		}{{"pdftoppm", &c.pdftoppm}, {"pdfimages", &c.pdfimages}, {"pdfinfo", &c.pdfinfo}} {
			if p, err := exec.LookPath(dir + "/" + t.name); err == nil {
				*t.dst = p
			}
		}
	}
}

// NewCollector returns a Collector using the poppler tools on PATH.
func NewCollector(opts ...Option) *Collector {
	c := &Collector{dpi: DefaultDPI, maxPixels: DefaultMaxPixels, maxImages: DefaultMaxImages,
		maxBytes: DefaultMaxImageBytes, maxText: DefaultMaxTextBytes, timeout: DefaultToolTimeout}
	c.pdftoppm, _ = exec.LookPath("pdftoppm")
	c.pdfimages, _ = exec.LookPath("pdfimages")
	c.pdfinfo, _ = exec.LookPath("pdfinfo")
	for _, o := range opts {
		o(c)
	}
	return c
}

// errStop ends a walk early without being an error.
var errStop = errors.New("stop")

// Collect calls fn with each image of src that mode selects, one at a time and in page
// order, so that only one image is held in memory. It returns warnings about images that
// were left out (too large, unreadable, past the cap, a missing tool) and an error only
// when fn fails or ctx ends; fn's error is returned as is.
func (c *Collector) Collect(ctx context.Context, src Source, mode Mode, fn func(Image) error) ([]string, error) {
	if mode != ModeAll && mode != ModeEmptyPages {
		return nil, fmt.Errorf("images: unknown mode %q (want all or empty_pages)", mode)
	}
	w := &walk{c: c, fn: fn}
	var err error
	switch src.Format {
	case FormatPDF:
		err = c.pdf(ctx, w, src, mode)
	case FormatDOCX:
		err = c.docx(ctx, w, src, mode)
	case FormatPPTX:
		err = c.pptx(ctx, w, src, mode)
	case FormatImage:
		err = c.file(w, src)
	default:
		return nil, nil
	}
	if w.skipped > 0 {
		w.warn(fmt.Sprintf("image cap reached: %d more images left out (at most %d per file)", w.skipped, c.maxImages))
	}
	if errors.Is(err, errStop) {
		err = nil
	}
	if err == nil {
		err = ctx.Err()
	}
	return w.warnings, err
}

// walk hands images to the callback and keeps count and warnings.
type walk struct {
	c        *Collector
	fn       func(Image) error
	n        int // images handed over
	skipped  int // images past the cap
	warnings []string
}

func (w *walk) warn(s string) { w.warnings = append(w.warnings, s) }

// full reports whether the cap is reached; the caller counts what it leaves out.
func (w *walk) full() bool { return w.n >= w.c.maxImages }

func (w *walk) emit(img Image) error {
	if w.full() {
		w.skipped++
		return nil
	}
	w.n++
	return w.fn(img)
}

// Describe collects the images of src for mode and describes each with d. Empty
// descriptions are dropped. An image that fails to be described adds a warning and the
// others go on; the error is ctx's when it ends, or one from reading the document that
// retrying may cure.
func (c *Collector) Describe(ctx context.Context, d Describer, src Source, mode Mode) ([]Description, []string, error) {
	var out []Description
	var warns []string
	cw, err := c.Collect(ctx, src, mode, func(img Image) error {
		text, err := d.Describe(ctx, img)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			warns = append(warns, fmt.Sprintf("image %s: %v", where(img), err))
			return nil
		}
		if text = cleanText(text, c.maxText); text != "" {
			out = append(out, Description{Page: img.Page, Kind: img.Kind, Name: img.Name, Text: text})
		}
		return nil
	})
	return out, append(cw, warns...), err
}

// where names an image in a warning.
func where(img Image) string {
	if img.Page > 0 {
		return fmt.Sprintf("%s (page %d)", img.Name, img.Page)
	}
	return img.Name
}

// cleanText keeps the lines of s that hold a letter or digit (OCR turns rules and
// specks into lone punctuation), with their spaces collapsed, at most one blank line in
// a row, valid UTF-8 without control characters, cut at max bytes.
func cleanText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	blank := false
	for line := range strings.SplitSeq(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		line = strings.Join(strings.FieldsFunc(line, func(r rune) bool {
			return unicode.IsSpace(r) || unicode.IsControl(r) || r == '\uFEFF'
		}), " ")
		if strings.IndexFunc(line, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
			blank = b.Len() > 0
			continue
		}
		if b.Len() > 0 {
			if blank {
				b.WriteString("\n\n")
			} else {
				b.WriteByte('\n')
			}
		}
		blank = false
		b.WriteString(line)
		if b.Len() >= max {
			break
		}
	}
	out := b.String()
	if len(out) > max {
		n := max
		for n > 0 && !utf8.RuneStart(out[n]) {
			n--
		}
		out = out[:n]
	}
	return out
}

// HasText reports whether a page's extracted text counts as text for ModeEmptyPages:
// at least a few letters or digits. Scanners stamp a page number or "Scanned with ..."
// into an otherwise image-only page; such a page still needs its image read.
func HasText(s string) bool {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if n++; n >= minPageText {
				return true
			}
		}
	}
	return false
}

// minPageText is the count of letters and digits from which a page holds text.
const minPageText = 32
