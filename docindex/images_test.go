package docindex_test

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/images"
	"github.com/docindex/docindex/docindex/images/imagestest"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

// Words printed on images in these tests; search must find them after OCR.
var (
	imgZeppelin = []string{"The zeppelin hangar", "was painted orange."}
	imgComet    = []string{"Comet tails point", "away from the sun."}
	imgWalrus   = []string{"A walrus sleeps", "on the harbour ice."}
	imgProse    = []string{"Minutes of the village council meeting held in spring.", "The council agreed to repair the old footbridge."}
)

// imgEnv is a server with workers and an owner, for uploading files with images.
type imgEnv struct {
	s   *docindextest.Server
	tok string
}

func newImgEnv(t *testing.T, opts ...docindex.Option) *imgEnv {
	t.Helper()
	s := docindextest.NewServer(t, append([]docindex.Option{docindex.WithEmbedders(hash.New())}, opts...)...)
	s.StartWorkers(nil)
	return &imgEnv{s: s, tok: s.Token(docindextest.User{Email: "owner@example.com", Name: "Owner"})}
}

func needOCR(t *testing.T) {
	t.Helper()
	if _, err := images.NewOCR(); err != nil {
		t.Fatalf("%v: run scripts/ocr-deps.sh", err)
	}
}

// collection creates a rag collection with image descriptions in mode ("" for none).
func (e *imgEnv) collection(t *testing.T, name, mode string) string {
	t.Helper()
	body := map[string]any{"name": name}
	if mode != "" {
		body["imageDescriptionsEnabled"] = true
		body["imageDescriptionMode"] = mode
	}
	r := e.s.Do("POST", "/api/collections", e.tok, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create collection: %d %s", r.Status, r.Body)
	}
	return r.Map(t)["id"].(string)
}

// upload uploads a file and returns its id.
func (e *imgEnv) upload(t *testing.T, collection, name, ctype string, data []byte) string {
	t.Helper()
	r := e.s.Upload(e.tok, docindextest.FileUpload{CollectionID: collection, Name: name, ContentType: ctype, Body: bytes.NewReader(data)})
	if r.Status != http.StatusCreated {
		t.Fatalf("upload %s: %d %s", name, r.Status, r.Body)
	}
	var body struct {
		File struct {
			ID string `json:"id"`
		} `json:"file"`
	}
	r.JSON(t, &body)
	return body.File.ID
}

// fileState is how indexing left a file.
type fileState struct {
	status, warning string
	pages           sql.NullInt64
}

func (e *imgEnv) state(t *testing.T, id string) fileState {
	t.Helper()
	var st fileState
	var warning sql.NullString
	err := e.s.DB.QueryRowContext(context.Background(),
		"SELECT status, warning, page_count FROM docindex.files WHERE id = ?", id).Scan(&st.status, &warning, &st.pages)
	if err != nil {
		t.Fatalf("file %s: %v", id, err)
	}
	st.warning = warning.String
	return st
}

type imgHit struct {
	FileID   string         `json:"fileId"`
	Text     string         `json:"text"`
	Metadata map[string]any `json:"metadata"`
}

func (h imgHit) pages() []int {
	var out []int
	ps, _ := h.Metadata["pages"].([]any)
	for _, p := range ps {
		if f, ok := p.(float64); ok {
			out = append(out, int(f))
		}
	}
	return out
}

func (e *imgEnv) search(t *testing.T, collection, query, mode string) []imgHit {
	t.Helper()
	r := e.s.Do("POST", "/api/collections/"+collection+"/search", e.tok, map[string]any{"query": query, "mode": mode, "topK": 20})
	if r.Status != http.StatusOK {
		t.Fatalf("search %q: %d %s", query, r.Status, r.Body)
	}
	var res struct {
		Results []imgHit `json:"results"`
	}
	r.JSON(t, &res)
	return res.Results
}

// found returns the hit of file whose text holds word, failing when there is none.
func (e *imgEnv) found(t *testing.T, collection, file, word string) imgHit {
	t.Helper()
	for _, h := range e.search(t, collection, word, "fulltext") {
		if h.FileID == file && strings.Contains(strings.ToLower(h.Text), strings.ToLower(word)) {
			return h
		}
	}
	t.Fatalf("%q not found in file %s", word, file)
	return imgHit{}
}

func (e *imgEnv) notFound(t *testing.T, collection, word string) {
	t.Helper()
	if hits := e.search(t, collection, word, "fulltext"); len(hits) != 0 {
		t.Errorf("%q found: %q", word, hits[0].Text)
	}
}

// The acceptance test: a scanned PDF, uploaded through the HTTP API into a collection
// with image descriptions in empty_pages mode, becomes searchable by the words printed on it,
// offline (OCR with tesseract is the default describer).
func TestScannedPDFBecomesSearchable(t *testing.T) {
	needOCR(t)
	e := newImgEnv(t)
	scan := imagestest.ScannedPDF(t, imgZeppelin, imgComet)
	withOCR := e.collection(t, "scans", "empty_pages")
	plain := e.collection(t, "plain", "")
	id := e.upload(t, withOCR, "scan.pdf", "application/pdf", scan)
	other := e.upload(t, plain, "scan.pdf", "application/pdf", scan)
	e.s.WaitIdle(90 * time.Second)

	if st := e.state(t, id); st.status != "indexed" || st.warning != "" || st.pages.Int64 != 2 {
		t.Errorf("file: %+v; want indexed without warning, 2 pages", st)
	}
	// Both pages are short: they may share a chunk, which then spans both.
	h := e.found(t, withOCR, id, "zeppelin")
	if !slices.Contains(h.pages(), 1) || !strings.Contains(h.Text, "[Scanned page 1]\nThe zeppelin hangar") {
		t.Errorf("zeppelin hit: pages %v, text %q; want page 1, labelled", h.pages(), h.Text)
	}
	if h := e.found(t, withOCR, id, "comet"); !slices.Contains(h.pages(), 2) || !strings.Contains(h.Text, "[Scanned page 2]\nComet tails") {
		t.Errorf("comet hit: pages %v, text %q; want page 2", h.pages(), h.Text)
	}
	// The default hybrid search finds it too.
	if hits := e.search(t, withOCR, "painted orange hangar", "hybrid"); len(hits) == 0 || hits[0].FileID != id {
		t.Errorf("hybrid search: %+v", hits)
	}
	// Without image descriptions the same file has no text: a warning, nothing to find.
	if st := e.state(t, other); st.status != "indexed_with_warning" || !strings.Contains(st.warning, "no text") {
		t.Errorf("file without descriptions: %+v", st)
	}
	e.notFound(t, plain, "zeppelin")
}

// empty_pages reads only the pages without text; all reads every image, pages with text too.
func TestImageDescriptionModes(t *testing.T) {
	needOCR(t)
	e := newImgEnv(t)
	scanned := imagestest.Render(t, imagestest.PDF(t, imagestest.Page{Text: imgComet}), 1, 200)
	pdf := imagestest.PDF(t,
		imagestest.Page{Text: imgProse, Images: [][]byte{imagestest.TextPNG(t, imgWalrus...)}},
		imagestest.Page{Scan: scanned},
	)
	empty := e.collection(t, "empty_pages", "empty_pages")
	all := e.collection(t, "all_images", "all")
	inEmpty := e.upload(t, empty, "mixed.pdf", "application/pdf", pdf)
	inAll := e.upload(t, all, "mixed.pdf", "application/pdf", pdf)
	e.s.WaitIdle(90 * time.Second)

	for _, id := range []string{inEmpty, inAll} {
		if st := e.state(t, id); st.status != "indexed" {
			t.Errorf("file %s: %+v", id, st)
		}
	}
	// empty_pages: the text page is left alone (its figure is not read), the scanned page is read.
	e.found(t, empty, inEmpty, "footbridge")
	if h := e.found(t, empty, inEmpty, "comet"); !slices.Contains(h.pages(), 2) {
		t.Errorf("empty_pages: comet on pages %v, want 2", h.pages())
	}
	e.notFound(t, empty, "walrus")
	// all: the figure on the text page is read and labelled with its page; so is the scan,
	// which in a PDF is an image like any other.
	h := e.found(t, all, inAll, "walrus")
	if !slices.Contains(h.pages(), 1) || !strings.Contains(h.Text, "[Image on page 1]") {
		t.Errorf("all: walrus hit pages %v, text %q", h.pages(), h.Text)
	}
	e.found(t, all, inAll, "comet")
	e.found(t, all, inAll, "footbridge")
}

// Images in a DOCX are read in all mode; one that cannot be read is a warning, not a failure.
func TestDOCXImagesAreDescribed(t *testing.T) {
	needOCR(t)
	e := newImgEnv(t)
	docx := imagestest.DOCX(t, imgProse,
		imagestest.Media{Name: "image1.png", Data: imagestest.TextPNG(t, imgZeppelin...)},
		imagestest.Media{Name: "image2.png", Data: append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("damaged"), 40)...)},
	)
	col := e.collection(t, "docs", "all")
	id := e.upload(t, col, "report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", docx)
	e.s.WaitIdle(60 * time.Second)

	st := e.state(t, id)
	if st.status != "indexed_with_warning" || !strings.Contains(st.warning, "word/media/image2.png") {
		t.Errorf("file: %+v; want indexed_with_warning naming the damaged image", st)
	}
	e.found(t, col, id, "footbridge")
	if h := e.found(t, col, id, "zeppelin"); !strings.Contains(h.Text, "[Image]") {
		t.Errorf("zeppelin hit %q: want it labelled as an image", h.Text)
	}
}

// An image file is indexed from its description where descriptions are enabled, and stays
// unsupported where they are not.
func TestImageFileUpload(t *testing.T) {
	needOCR(t)
	e := newImgEnv(t)
	png := imagestest.TextPNG(t, imgWalrus...)
	col := e.collection(t, "photos", "empty_pages")
	plain := e.collection(t, "no_images", "")
	id := e.upload(t, col, "whiteboard.png", "image/png", png)
	jpg := e.upload(t, col, "whiteboard.jpg", "", imagestest.Recode(t, png, "jpeg"))
	blank := e.upload(t, col, "blank.png", "image/png", imagestest.Blank(300, 200, false))
	rejected := e.upload(t, plain, "whiteboard.png", "image/png", png)
	e.s.WaitIdle(60 * time.Second)

	for _, f := range []string{id, jpg} {
		if st := e.state(t, f); st.status != "indexed" {
			t.Errorf("image file %s: %+v", f, st)
		}
	}
	if h := e.found(t, col, id, "walrus"); h.pages() != nil {
		t.Errorf("image hit has pages %v; an image file has none", h.pages())
	}
	e.found(t, col, jpg, "harbour")
	if st := e.state(t, blank); st.status != "indexed_with_warning" || !strings.Contains(st.warning, "no text") {
		t.Errorf("blank image: %+v", st)
	}
	if st := e.state(t, rejected); st.status != "failed" || !strings.Contains(st.warning, "image descriptions") {
		t.Errorf("image without descriptions: %+v; want failed, saying why", st)
	}
}

// WithImageDescriber sets the describer (a vision model will); nil turns descriptions off.
func TestImageDescriberOption(t *testing.T) {
	needOCR(t)
	ocr, err := images.NewOCR()
	if err != nil {
		t.Fatal(err)
	}
	e := newImgEnv(t, docindex.WithImageDescriber(markingDescriber{ocr}))
	col := e.collection(t, "custom", "all")
	id := e.upload(t, col, "a.png", "image/png", imagestest.TextPNG(t, imgComet...))
	e.s.WaitIdle(60 * time.Second)
	if h := e.found(t, col, id, "comet"); !strings.Contains(h.Text, "described: ") {
		t.Errorf("hit %q: want the text of the configured describer", h.Text)
	}

	off := newImgEnv(t, docindex.WithImageDescriber(nil))
	col = off.collection(t, "off", "empty_pages")
	img := off.upload(t, col, "a.png", "image/png", imagestest.TextPNG(t, imgComet...))
	scan := off.upload(t, col, "scan.pdf", "application/pdf", imagestest.PDF(t, imagestest.Page{Text: imgProse}, imagestest.Page{Scan: imagestest.Blank(400, 400, false)}))
	text := off.upload(t, col, "text.pdf", "application/pdf", imagestest.PDF(t, imagestest.Page{Text: imgProse}))
	off.s.WaitIdle(60 * time.Second)
	if st := off.state(t, img); st.status != "failed" || !strings.Contains(st.warning, "no image describer") {
		t.Errorf("image without a describer: %+v", st)
	}
	if st := off.state(t, scan); st.status != "indexed_with_warning" || !strings.Contains(st.warning, "no image describer") {
		t.Errorf("pdf with an empty page, without a describer: %+v", st)
	}
	// A file without anything to describe is not warned about.
	if st := off.state(t, text); st.status != "indexed" {
		t.Errorf("pdf of text only, without a describer: %+v", st)
	}
}

// markingDescriber marks what it describes, to show which describer ran.
type markingDescriber struct{ images.Describer }

func (u markingDescriber) Describe(ctx context.Context, img images.Image) (string, error) {
	text, err := u.Describer.Describe(ctx, img)
	return "described: " + text, err
}
