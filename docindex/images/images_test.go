package images_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/docindex/docindex/docindex/images"
	"github.com/docindex/docindex/docindex/images/imagestest"
)

// Words printed on the fixtures; OCR must read them back.
var (
	zeppelin = []string{"The zeppelin hangar", "was painted orange."}
	walrus   = []string{"A walrus sleeps", "on the harbour ice."}
	comet    = []string{"Comet tails point", "away from the sun."}
)

// A page of real text: long enough to count as text for ModeEmptyPages.
var prose = []string{"This page holds a real text layer with enough words", "to count as a page with text of its own."}

// Rendered fixtures are made once: pdftoppm is slow on a loaded machine.
var (
	pngOnce sync.Map // key -> []byte
)

func textPNG(t *testing.T, lines ...string) []byte {
	t.Helper()
	key := strings.Join(lines, "\n")
	if b, ok := pngOnce.Load(key); ok {
		return b.([]byte)
	}
	b := imagestest.TextPNG(t, lines...)
	pngOnce.Store(key, b)
	return b
}

func newOCR(t *testing.T) *images.OCR {
	t.Helper()
	o, err := images.NewOCR()
	if err != nil {
		t.Fatalf("%v: run scripts/ocr-deps.sh", err)
	}
	return o
}

func newCollector(t *testing.T, opts ...images.Option) *images.Collector {
	t.Helper()
	for _, tool := range []string{"pdftoppm", "pdfimages", "pdfinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: run scripts/extract-deps.sh (Debian poppler-utils)", tool)
		}
	}
	return images.NewCollector(opts...)
}

// wantWords fails unless every word occurs in text, case-insensitively.
func wantWords(t *testing.T, text string, words ...string) {
	t.Helper()
	low := strings.ToLower(text)
	for _, w := range words {
		if !strings.Contains(low, strings.ToLower(w)) {
			t.Errorf("%q not read; got %q", w, text)
		}
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// collect gathers what Collect hands over.
func collect(t *testing.T, c *images.Collector, src images.Source, mode images.Mode) ([]images.Image, []string) {
	t.Helper()
	var got []images.Image
	warns, err := c.Collect(context.Background(), src, mode, func(img images.Image) error {
		got = append(got, img)
		return nil
	})
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	return got, warns
}

// where lists kind, page and name of images, for comparisons.
func where(imgs []images.Image) []string {
	var out []string
	for _, img := range imgs {
		out = append(out, string(img.Kind)+":"+strconv.Itoa(img.Page)+":"+img.Name)
	}
	return out
}

func decode(t *testing.T, img images.Image) image.Image {
	t.Helper()
	if img.ContentType != "image/png" {
		t.Fatalf("%s: content type %q, want image/png", img.Name, img.ContentType)
	}
	m, err := png.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", img.Name, err)
	}
	return m
}

func TestOCRReadsPrintedText(t *testing.T) {
	o := newOCR(t)
	p := textPNG(t, zeppelin...)
	for _, tc := range []struct {
		format string
		ctype  string
		data   []byte
	}{
		{"png", "image/png", p},
		{"jpeg", "image/jpeg", imagestest.Recode(t, p, "jpeg")},
		{"gif", "image/gif", imagestest.Recode(t, p, "gif")},
	} {
		t.Run(tc.format, func(t *testing.T) {
			text, err := o.Describe(context.Background(), images.Image{Kind: images.KindFile, Name: "x." + tc.format, ContentType: tc.ctype, Data: tc.data})
			if err != nil {
				t.Fatal(err)
			}
			wantWords(t, text, "zeppelin", "hangar", "orange")
		})
	}
}

func TestOCRBlankAndBadImages(t *testing.T) {
	o := newOCR(t)
	ctx := context.Background()
	// A blank image holds no text: no description and no error.
	if text, err := o.Describe(ctx, images.Image{Name: "blank.png", Data: imagestest.Blank(200, 100, false)}); err != nil || text != "" {
		t.Errorf("blank image: %q, %v; want no text and no error", text, err)
	}
	// tesseract reads a text file as a list of images to open: anything but an image is refused
	// before it runs, so an upload cannot make it read files on the server.
	if _, err := o.Describe(ctx, images.Image{Name: "list.png", Data: []byte(writeFile(t, "secret.png", textPNG(t, walrus...)) + "\n")}); err == nil {
		t.Error("a list of paths was described; want an error")
	}
	// A PNG signature over garbage: tesseract fails and says so.
	_, err := o.Describe(ctx, images.Image{Name: "broken.png", Data: append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("garbage"), 50)...)})
	if err == nil || !strings.Contains(err.Error(), "tesseract") {
		t.Errorf("broken PNG: %v; want an error from tesseract", err)
	}
	if _, err := o.Describe(ctx, images.Image{Name: "empty.png"}); err == nil {
		t.Error("an empty image was described")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := o.Describe(cctx, images.Image{Name: "x.png", Data: textPNG(t, walrus...)}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v; want context.Canceled", err)
	}
	if _, err := images.NewOCR(images.WithTesseract("")); err != nil && !errors.Is(err, images.ErrNoTesseract) {
		t.Errorf("NewOCR: %v", err)
	}
	bad, err := images.NewOCR(images.WithTesseract("/nonexistent/tesseract"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Describe(ctx, images.Image{Name: "x.png", Data: textPNG(t, walrus...)}); err == nil {
		t.Error("a missing binary described an image")
	}
}

func TestCollectPDFEmptyPagesRendersPagesWithoutText(t *testing.T) {
	c := newCollector(t)
	scan := imagestest.Render(t, imagestest.PDF(t, imagestest.Page{Text: walrus}), 1, 100)
	pdf := imagestest.PDF(t,
		imagestest.Page{Text: prose, Images: [][]byte{textPNG(t, comet...)}}, // text and a figure: left alone
		imagestest.Page{Scan: scan},  // scanned: rendered
		imagestest.Page{Text: prose}, // text: left alone
	)
	path := writeFile(t, "mixed.pdf", pdf)
	got, warns := collect(t, c, images.Source{Path: path, Format: images.FormatPDF, PageCount: 3, TextPages: []int{1, 3}}, images.ModeEmptyPages)
	if len(warns) != 0 || !slices.Equal(where(got), []string{"page:2:page-2.png"}) {
		t.Fatalf("got %v, warnings %v; want page 2 rendered", where(got), warns)
	}
	// Rendered at 200 dpi: the scan (a letter page at 100 dpi) makes a page of 306 x 396 pt, as
	// wide as the scan's 850 pixels at 200 dpi.
	if b := decode(t, got[0]).Bounds(); b.Dx() != 850 {
		t.Errorf("page rendered %d px wide, want 850 (200 dpi)", b.Dx())
	}
	// The page count comes from pdfinfo when the caller does not know it.
	got, _ = collect(t, c, images.Source{Path: path, Format: images.FormatPDF}, images.ModeEmptyPages)
	if !slices.Equal(where(got), []string{"page:1:page-1.png", "page:2:page-2.png", "page:3:page-3.png"}) {
		t.Errorf("without text pages: %v; want all three pages", where(got))
	}
	// WithDPI sets the resolution.
	got, _ = collect(t, newCollector(t, images.WithDPI(72)), images.Source{Path: path, Format: images.FormatPDF, TextPages: []int{1, 3}}, images.ModeEmptyPages)
	if len(got) != 1 || decode(t, got[0]).Bounds().Dx() != 306 {
		t.Errorf("at 72 dpi: %v", where(got))
	}
}

func TestCollectPDFAllGivesEmbeddedImagesOnce(t *testing.T) {
	c := newCollector(t)
	figA, figB := textPNG(t, comet...), textPNG(t, walrus...)
	icon := imagestest.Blank(8, 8, false)
	translucent := imagestest.Blank(120, 60, true) // drawn with a soft mask, which is no image of its own
	pdf := imagestest.PDF(t,
		imagestest.Page{Text: prose, Images: [][]byte{icon, figA}},
		imagestest.Page{Images: [][]byte{figB, figA, translucent}},
	)
	got, warns := collect(t, c, images.Source{Path: writeFile(t, "figs.pdf", pdf), Format: images.FormatPDF, TextPages: []int{1}}, images.ModeAll)
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	if len(got) != 3 {
		t.Fatalf("got %v; want figure A on page 1, figure B and the translucent image on page 2", where(got))
	}
	ref := func(b []byte) image.Rectangle {
		m, _ := png.Decode(bytes.NewReader(b))
		return m.Bounds()
	}
	for i, want := range []struct {
		page int
		size image.Rectangle
	}{{1, ref(figA)}, {2, ref(figB)}, {2, ref(translucent)}} {
		if got[i].Kind != images.KindEmbedded || got[i].Page != want.page {
			t.Errorf("image %d: %s on page %d, want embedded on page %d", i, got[i].Kind, got[i].Page, want.page)
		}
		if b := decode(t, got[i]).Bounds(); b.Size() != want.size.Size() {
			t.Errorf("image %d: %v pixels, want %v (extracted at its own resolution)", i, b.Size(), want.size.Size())
		}
	}
}

func TestCollectDOCX(t *testing.T) {
	c := newCollector(t)
	docx := imagestest.DOCX(t, prose,
		imagestest.Media{Name: "image10.png", Data: textPNG(t, walrus...)},
		imagestest.Media{Name: "image2.png", Data: textPNG(t, comet...)},
		imagestest.Media{Name: "image3.emf", Data: []byte("\x01\x00\x00\x00 a vector picture")},
		imagestest.Media{Name: "image4.png", Data: imagestest.Blank(16, 16, false)}, // an icon
	)
	path := writeFile(t, "doc.docx", docx)
	got, warns := collect(t, c, images.Source{Path: path, Format: images.FormatDOCX, TextPages: []int{0}}, images.ModeAll)
	if len(warns) != 0 || !slices.Equal(where(got), []string{"embedded:0:word/media/image2.png", "embedded:0:word/media/image10.png"}) {
		t.Errorf("all: %v, warnings %v; want image2 then image10, no vector picture, no icon", where(got), warns)
	}
	// A document with text has no empty page; one without text is all empty.
	if got, _ := collect(t, c, images.Source{Path: path, Format: images.FormatDOCX, TextPages: []int{0}}, images.ModeEmptyPages); len(got) != 0 {
		t.Errorf("empty_pages with text: %v; want none", where(got))
	}
	if got, _ := collect(t, c, images.Source{Path: path, Format: images.FormatDOCX}, images.ModeEmptyPages); len(got) != 2 {
		t.Errorf("empty_pages without text: %v; want both images", where(got))
	}
}

func TestCollectPPTXUsesSlideNumbers(t *testing.T) {
	c := newCollector(t)
	a := imagestest.Media{Name: "image1.png", Data: textPNG(t, comet...)}
	b := imagestest.Media{Name: "image2.png", Data: textPNG(t, walrus...)}
	logo := imagestest.Media{Name: "logo.png", Data: textPNG(t, zeppelin...)}
	pptx := imagestest.PPTX(t, []imagestest.Media{logo},
		imagestest.Slide{Text: "Quarterly results for the northern region and beyond", Media: []imagestest.Media{a}},
		imagestest.Slide{Media: []imagestest.Media{b, a}},
	)
	path := writeFile(t, "deck.pptx", pptx)
	got, warns := collect(t, c, images.Source{Path: path, Format: images.FormatPPTX, PageCount: 2, TextPages: []int{1}}, images.ModeAll)
	if len(warns) != 0 || !slices.Equal(where(got), []string{"embedded:1:ppt/media/image1.png", "embedded:2:ppt/media/image2.png"}) {
		t.Errorf("all: %v, warnings %v; want image1 on slide 1, image2 on slide 2, no layout logo", where(got), warns)
	}
	got, _ = collect(t, c, images.Source{Path: path, Format: images.FormatPPTX, PageCount: 2, TextPages: []int{1}}, images.ModeEmptyPages)
	if !slices.Equal(where(got), []string{"embedded:2:ppt/media/image2.png", "embedded:2:ppt/media/image1.png"}) {
		t.Errorf("empty_pages: %v; want the images of slide 2 only", where(got))
	}
}

func TestCollectImageFileAndLimits(t *testing.T) {
	c := newCollector(t)
	p := textPNG(t, walrus...)
	path := writeFile(t, "photo.upload", imagestest.Recode(t, p, "jpeg"))
	got, warns := collect(t, c, images.Source{Path: path, Name: "photo.jpg", Format: images.FormatImage}, images.ModeEmptyPages)
	if len(warns) != 0 || len(got) != 1 || got[0].Kind != images.KindFile || got[0].ContentType != "image/jpeg" || got[0].Name != "photo.jpg" {
		t.Fatalf("image file: %+v, warnings %v", where(got), warns)
	}
	if ct, ok := images.ImageType(path); !ok || ct != "image/jpeg" {
		t.Errorf("ImageType(jpeg) = %q, %v", ct, ok)
	}
	if ct, ok := images.ImageType(writeFile(t, "notes.png", []byte("plain text, whatever the name says"))); ok {
		t.Errorf("ImageType(text) = %q, true", ct)
	}
	// Not an image: a warning, nothing described.
	got, warns = collect(t, c, images.Source{Path: writeFile(t, "x.png", []byte("text")), Name: "x.png", Format: images.FormatImage}, images.ModeAll)
	if len(got) != 0 || len(warns) != 1 {
		t.Errorf("text as image: %v, %v", where(got), warns)
	}
	// Too large: a warning naming the limit.
	small := newCollector(t, images.WithMaxImageBytes(100))
	got, warns = collect(t, small, images.Source{Path: path, Name: "photo.jpg", Format: images.FormatImage}, images.ModeAll)
	if len(got) != 0 || len(warns) != 1 || !strings.Contains(warns[0], "100 bytes") {
		t.Errorf("too large: %v, %v", where(got), warns)
	}
	// The cap: the first images, and a warning counting the rest.
	docx := writeFile(t, "many.docx", imagestest.DOCX(t, nil,
		imagestest.Media{Name: "image1.png", Data: p}, imagestest.Media{Name: "image2.png", Data: textPNG(t, comet...)},
		imagestest.Media{Name: "image3.png", Data: textPNG(t, zeppelin...)}))
	got, warns = collect(t, newCollector(t, images.WithMaxImages(1)), images.Source{Path: docx, Format: images.FormatDOCX}, images.ModeAll)
	if len(got) != 1 || got[0].Name != "word/media/image1.png" || len(warns) != 1 || !strings.Contains(warns[0], "2 more images") {
		t.Errorf("cap: %v, %v", where(got), warns)
	}
	pdf := writeFile(t, "scan.pdf", imagestest.PDF(t, imagestest.Page{Scan: imagestest.Blank(300, 300, false)},
		imagestest.Page{Scan: imagestest.Blank(300, 300, false)}, imagestest.Page{Scan: imagestest.Blank(300, 300, false)}))
	got, warns = collect(t, newCollector(t, images.WithMaxImages(2)), images.Source{Path: pdf, Format: images.FormatPDF}, images.ModeEmptyPages)
	if len(got) != 2 || len(warns) != 1 || !strings.Contains(warns[0], "1 more images") {
		t.Errorf("page cap: %v, %v", where(got), warns)
	}
	// Formats without images give nothing; an unknown mode is an error.
	if got, warns := collect(t, c, images.Source{Path: path, Format: "markdown"}, images.ModeAll); len(got)+len(warns) != 0 {
		t.Errorf("markdown: %v, %v", where(got), warns)
	}
	if _, err := c.Collect(context.Background(), images.Source{Path: path, Format: images.FormatImage}, "some", func(images.Image) error { return nil }); err == nil {
		t.Error("unknown mode accepted")
	}
	// A damaged office file is a warning, not a failure of the file.
	if got, warns := collect(t, c, images.Source{Path: writeFile(t, "bad.docx", []byte("PK not a zip")), Format: images.FormatDOCX}, images.ModeAll); len(got) != 0 || len(warns) != 1 {
		t.Errorf("damaged docx: %v, %v", where(got), warns)
	}
}

func TestDescribeOCRsAndKeepsGoingPastFailures(t *testing.T) {
	c, o := newCollector(t), newOCR(t)
	broken := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("garbage"), 50)...)
	docx := writeFile(t, "d.docx", imagestest.DOCX(t, nil,
		imagestest.Media{Name: "image1.png", Data: broken},
		imagestest.Media{Name: "image2.png", Data: textPNG(t, walrus...)},
		imagestest.Media{Name: "image3.png", Data: imagestest.Blank(300, 200, false)}, // nothing to read: no description
	))
	src := images.Source{Path: docx, Name: "d.docx", Format: images.FormatDOCX}
	descs, warns, err := c.Describe(context.Background(), o, src, images.ModeAll)
	if err != nil {
		t.Fatal(err)
	}
	if len(descs) != 1 || descs[0].Name != "word/media/image2.png" || descs[0].Kind != images.KindEmbedded {
		t.Fatalf("descriptions %+v; want one, of image2", descs)
	}
	wantWords(t, descs[0].Text, "walrus", "harbour")
	if len(warns) != 1 || !strings.Contains(warns[0], "word/media/image1.png") {
		t.Errorf("warnings %v; want one naming the broken image", warns)
	}
	if s := descs[0].Section(); !strings.HasPrefix(s, "[Image]\n") {
		t.Errorf("section %q", s)
	}
	// A cancelled run is an error, not a warning per image.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := c.Describe(ctx, o, src, images.ModeAll); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestDescribeScannedPDF(t *testing.T) {
	c, o := newCollector(t), newOCR(t)
	pdf := writeFile(t, "scan.pdf", imagestest.ScannedPDF(t, zeppelin, comet))
	descs, warns, err := c.Describe(context.Background(), o, images.Source{Path: pdf, Format: images.FormatPDF}, images.ModeEmptyPages)
	if err != nil || len(warns) != 0 {
		t.Fatalf("%v, warnings %v", err, warns)
	}
	if len(descs) != 2 || descs[0].Page != 1 || descs[1].Page != 2 {
		t.Fatalf("descriptions %+v; want pages 1 and 2", descs)
	}
	wantWords(t, descs[0].Text, "zeppelin", "orange")
	wantWords(t, descs[1].Text, "comet", "sun")
	if s := descs[1].Section(); !strings.HasPrefix(s, "[Scanned page 2]\n") {
		t.Errorf("section %q", s)
	}
}

func TestSectionAndHasText(t *testing.T) {
	for _, tc := range []struct {
		d    images.Description
		want string
	}{
		{images.Description{Kind: images.KindPage, Page: 3, Text: "x"}, "[Scanned page 3]\nx"},
		{images.Description{Kind: images.KindEmbedded, Page: 2, Text: "x"}, "[Image on page 2]\nx"},
		{images.Description{Kind: images.KindEmbedded, Text: "x"}, "[Image]\nx"},
		{images.Description{Kind: images.KindFile, Text: "x"}, "[Image]\nx"},
	} {
		if got := tc.d.Section(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.d, got, tc.want)
		}
	}
	for s, want := range map[string]bool{
		"":                        false,
		"- 3 -":                   false,
		"Scanned with CamScanner": false,
		strings.Join(prose, " "):  true,
	} {
		if images.HasText(s) != want {
			t.Errorf("HasText(%q) = %v", s, !want)
		}
	}
}
