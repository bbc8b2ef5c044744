package imagestest

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Page is one page of a PDF made by PDF.
type Page struct {
	// Text is lines of real text (Helvetica 18 pt) from the top of the page: a text layer.
	Text []string
	// Images are PNGs drawn below the text at 150 dpi (scaled down to fit the page). A PNG
	// with transparency gets a soft mask, as producers write it. The same bytes on several
	// pages are one image object drawn on each.
	Images [][]byte
	// Scan is a PNG that covers the whole page, as a scanner writes a page: the page takes
	// the size of the scan at 200 dpi. Text, when set too, is drawn over it.
	Scan []byte
}

// PDF writes a PDF of the pages.
func PDF(t testing.TB, pages ...Page) []byte {
	t.Helper()
	w := &pdfWriter{images: map[string]int{}}
	b, err := w.write(pages)
	if err != nil {
		t.Fatalf("imagestest: pdf: %v", err)
	}
	return b
}

// TextPNG renders lines of text, black on white, into a grayscale PNG at 150 dpi, with
// pdftoppm from a PDF in Helvetica 28 pt sized to fit the text.
func TextPNG(t testing.TB, lines ...string) []byte {
	t.Helper()
	longest := 0
	for _, l := range lines {
		longest = max(longest, len(l))
	}
	const size, lead = 28.0, 36.0
	w := &pdfWriter{images: map[string]int{}, fontSize: size, lead: lead,
		width: 72 + float64(longest)*size*0.6, height: 48 + lead*float64(len(lines))}
	pdf, err := w.write([]Page{{Text: lines}})
	if err != nil {
		t.Fatalf("imagestest: pdf: %v", err)
	}
	return Render(t, pdf, 1, 150)
}

// Render renders page of pdf at dpi into a grayscale PNG with pdftoppm.
func Render(t testing.TB, pdf []byte, page, dpi int) []byte {
	t.Helper()
	bin, err := exec.LookPath("pdftoppm")
	if err != nil {
		t.Fatalf("imagestest: pdftoppm is not installed: run scripts/extract-deps.sh (Debian poppler-utils)")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-r", fmt.Sprint(dpi), "-f", fmt.Sprint(page), "-l", fmt.Sprint(page),
		"-gray", "-png", "-singlefile", in, filepath.Join(dir, "out")).CombinedOutput()
	if err != nil {
		t.Fatalf("imagestest: pdftoppm: %v: %s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.png"))
	if err != nil {
		t.Fatalf("imagestest: %v", err)
	}
	return b
}

// ScannedPDF makes an image-only PDF, one page per entry of pages: each page's lines are
// rendered to an image at 200 dpi and the PDF holds only that image, as a scanner makes
// it. No text can be extracted from it.
func ScannedPDF(t testing.TB, pages ...[]string) []byte {
	t.Helper()
	ps := make([]Page, len(pages))
	for i, lines := range pages {
		pdf := PDF(t, Page{Text: lines})
		ps[i] = Page{Scan: Render(t, pdf, 1, 200)}
	}
	return PDF(t, ps...)
}

// Recode re-encodes a PNG as "jpeg" or "gif".
func Recode(t testing.TB, pngData []byte, format string) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		t.Fatalf("imagestest: decode png: %v", err)
	}
	var buf bytes.Buffer
	switch format {
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	case "gif":
		err = gif.Encode(&buf, img, nil)
	default:
		t.Fatalf("imagestest: unknown format %q", format)
	}
	if err != nil {
		t.Fatalf("imagestest: encode %s: %v", format, err)
	}
	return buf.Bytes()
}

// Blank returns a white PNG of w x h pixels; with alpha its pixels are half transparent.
func Blank(w, h int, alpha bool) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	a := uint8(255)
	if alpha {
		a = 128
	}
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{255, 255, 255, a})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// pdfWriter writes small PDFs: Helvetica text, image XObjects with Flate-compressed
// samples (and soft masks), a correct cross-reference table.
type pdfWriter struct {
	objs     []string
	images   map[string]int // PNG bytes -> object number, so shared images are one object
	fontSize float64        // default 18
	lead     float64        // line distance, default 24
	width    float64        // of text pages, default 612
	height   float64        // of text pages, default 792
}

func (w *pdfWriter) add(s string) int { w.objs = append(w.objs, s); return len(w.objs) }

func deflate(b []byte) []byte {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

func (w *pdfWriter) stream(dict string, data []byte) string {
	data = deflate(data)
	return fmt.Sprintf("<<%s /Length %d /Filter /FlateDecode>>\nstream\n%s\nendstream", dict, len(data), data)
}

// image adds (once) the image XObject of a PNG and returns its object number and size.
func (w *pdfWriter) image(data []byte) (int, int, int, error) {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("decode png: %w", err)
	}
	b := img.Bounds()
	if n, ok := w.images[string(data)]; ok {
		return n, b.Dx(), b.Dy(), nil
	}
	if g, ok := img.(*image.Gray); ok && g.Stride == b.Dx() {
		// pdftoppm -gray gives these: the samples are the pixels as they are.
		n := w.add(w.stream(fmt.Sprintf(" /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8", b.Dx(), b.Dy()), g.Pix))
		w.images[string(data)] = n
		return n, b.Dx(), b.Dy(), nil
	}
	gray, opaque := true, true
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if c.R != c.G || c.G != c.B {
				gray = false
			}
			if c.A != 255 {
				opaque = false
			}
		}
	}
	var samples, alpha []byte
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if gray {
				samples = append(samples, c.R)
			} else {
				samples = append(samples, c.R, c.G, c.B)
			}
			alpha = append(alpha, c.A)
		}
	}
	space := "/DeviceRGB"
	if gray {
		space = "/DeviceGray"
	}
	smask := ""
	if !opaque {
		m := w.add(w.stream(fmt.Sprintf(" /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8", b.Dx(), b.Dy()), alpha))
		smask = fmt.Sprintf(" /SMask %d 0 R", m)
	}
	n := w.add(w.stream(fmt.Sprintf(" /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s /BitsPerComponent 8%s", b.Dx(), b.Dy(), space, smask), samples))
	w.images[string(data)] = n
	return n, b.Dx(), b.Dy(), nil
}

func pdfString(s string) string {
	return "(" + strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s) + ")"
}

func (w *pdfWriter) write(pages []Page) ([]byte, error) {
	if w.fontSize == 0 {
		w.fontSize, w.lead = 18, 24
	}
	if w.width == 0 {
		w.width, w.height = 612, 792
	}
	w.add("<< /Type /Catalog /Pages 2 0 R >>")
	w.add("") // the page tree, written last
	font := w.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids []string
	for _, p := range pages {
		width, height := w.width, w.height
		var content strings.Builder
		xobjs := map[string]int{}
		if p.Scan != nil {
			n, px, py, err := w.image(p.Scan)
			if err != nil {
				return nil, err
			}
			width, height = float64(px)*72/200, float64(py)*72/200
			xobjs["Scan"] = n
			fmt.Fprintf(&content, "q %.2f 0 0 %.2f 0 0 cm /Scan Do Q\n", width, height)
		}
		y := height - 24 - w.fontSize
		for _, line := range p.Text {
			fmt.Fprintf(&content, "BT /F1 %.1f Tf 36 %.2f Td %s Tj ET\n", w.fontSize, y, pdfString(line))
			y -= w.lead
		}
		for i, data := range p.Images {
			n, px, py, err := w.image(data)
			if err != nil {
				return nil, err
			}
			iw, ih := float64(px)*72/150, float64(py)*72/150
			if limit := width - 72; iw > limit {
				iw, ih = limit, ih*limit/iw
			}
			y -= ih
			name := fmt.Sprintf("Im%d", i+1)
			xobjs[name] = n
			fmt.Fprintf(&content, "q %.2f 0 0 %.2f 36 %.2f cm /%s Do Q\n", iw, ih, y, name)
			y -= 12
		}
		var res strings.Builder
		fmt.Fprintf(&res, "<< /Font << /F1 %d 0 R >>", font)
		if len(xobjs) > 0 {
			res.WriteString(" /XObject <<")
			for name, n := range xobjs {
				fmt.Fprintf(&res, " /%s %d 0 R", name, n)
			}
			res.WriteString(" >>")
		}
		res.WriteString(" >>")
		c := w.add(w.stream("", []byte(content.String())))
		pg := w.add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources %s /Contents %d 0 R >>", width, height, res.String(), c))
		kids = append(kids, fmt.Sprintf("%d 0 R", pg))
	}
	w.objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))

	var out bytes.Buffer
	out.WriteString("%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(w.objs))
	for i, o := range w.objs {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(w.objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(w.objs)+1, xref)
	return out.Bytes(), nil
}

// Media is an image file inside a DOCX or PPTX.
type Media struct {
	Name string // the file name in the media folder, e.g. "image1.png"
	Data []byte
}

// DOCX writes a Word document with the paragraphs and, after them, the media drawn inline.
func DOCX(t testing.TB, paragraphs []string, media ...Media) []byte {
	t.Helper()
	var body strings.Builder
	for _, p := range paragraphs {
		fmt.Fprintf(&body, `<w:p><w:r><w:t xml:space="preserve">%s</w:t></w:r></w:p>`, xmlEscape(p))
	}
	rels := []string{}
	for i, m := range media {
		id := fmt.Sprintf("rIdImg%d", i+1)
		rels = append(rels, relXML(id, "image", "media/"+m.Name))
		fmt.Fprintf(&body, `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="3000000" cy="1000000"/><wp:docPr id="%d" name="Picture %d"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="%d" name="%s"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="%s"/></pic:blipFill><pic:spPr/></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`,
			i+1, i+1, i+1, xmlEscape(m.Name), id)
	}
	doc := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="` + relNS + `" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><w:body>` +
		body.String() + `<w:sectPr/></w:body></w:document>`
	parts := []Media{
		{"[Content_Types].xml", []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Default Extension="jpeg" ContentType="image/jpeg"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`)},
		{"_rels/.rels", []byte(relsXML(relXML("rId1", "officeDocument", "word/document.xml")))},
		{"word/document.xml", []byte(doc)},
		{"word/_rels/document.xml.rels", []byte(relsXML(rels...))},
	}
	for _, m := range media {
		parts = append(parts, Media{"word/media/" + m.Name, m.Data})
	}
	return zipOf(t, parts)
}

// Slide is one slide of a PPTX made by PPTX.
type Slide struct {
	Text  string  // a text shape; "" for a slide without text
	Media []Media // pictures on the slide (ppt/media/<Name>)
}

// PPTX writes a presentation of the slides. The slide files are numbered against their
// order (the first slide is the last file), as PowerPoint leaves them after reordering.
// layout, when given, are pictures on the slide layout every slide uses (a logo).
func PPTX(t testing.TB, layout []Media, slides ...Slide) []byte {
	t.Helper()
	const ns = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="` + relNS + `" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`
	spTree := func(text string, pics int) string {
		s := `<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>`
		if text != "" {
			s += `<p:sp><p:nvSpPr><p:cNvPr id="2" name="t"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:p><a:r><a:t>` + xmlEscape(text) + `</a:t></a:r></a:p></p:txBody></p:sp>`
		}
		for i := range pics {
			s += fmt.Sprintf(`<p:pic><p:nvPicPr><p:cNvPr id="%d" name="Picture"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr><p:blipFill><a:blip r:embed="rIdImg%d"/></p:blipFill><p:spPr/></p:pic>`, 10+i, i+1)
		}
		return s + `</p:spTree></p:cSld>`
	}
	parts := []Media{
		{"[Content_Types].xml", []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/></Types>`)},
		{"_rels/.rels", []byte(relsXML(relXML("rId1", "officeDocument", "ppt/presentation.xml")))},
	}
	var ids strings.Builder
	presRels := []string{relXML("rIdLayout", "slideLayout", "slideLayouts/slideLayout1.xml")}
	media := map[string][]byte{}
	for i, s := range slides {
		file := len(slides) - i
		id := fmt.Sprintf("rId%d", 100+i)
		fmt.Fprintf(&ids, `<p:sldId id="%d" r:id="%s"/>`, 256+i, id)
		presRels = append(presRels, relXML(id, "slide", fmt.Sprintf("slides/slide%d.xml", file)))
		rels := []string{relXML("rIdL", "slideLayout", "../slideLayouts/slideLayout1.xml")}
		for j, m := range s.Media {
			rels = append(rels, relXML(fmt.Sprintf("rIdImg%d", j+1), "image", "../media/"+m.Name))
			media[m.Name] = m.Data
		}
		parts = append(parts,
			Media{fmt.Sprintf("ppt/slides/slide%d.xml", file), []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:sld ` + ns + `>` + spTree(s.Text, len(s.Media)) + `</p:sld>`)},
			Media{fmt.Sprintf("ppt/slides/_rels/slide%d.xml.rels", file), []byte(relsXML(rels...))})
	}
	var layoutRels []string
	for j, m := range layout {
		layoutRels = append(layoutRels, relXML(fmt.Sprintf("rIdImg%d", j+1), "image", "../media/"+m.Name))
		media[m.Name] = m.Data
	}
	parts = append(parts,
		Media{"ppt/presentation.xml", []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:presentation ` + ns + `><p:sldIdLst>` + ids.String() + `</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/></p:presentation>`)},
		Media{"ppt/_rels/presentation.xml.rels", []byte(relsXML(presRels...))},
		Media{"ppt/slideLayouts/slideLayout1.xml", []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:sldLayout ` + ns + `>` + spTree("", len(layout)) + `</p:sldLayout>`)},
		Media{"ppt/slideLayouts/_rels/slideLayout1.xml.rels", []byte(relsXML(layoutRels...))})
	for _, name := range slices.Sorted(maps.Keys(media)) {
		parts = append(parts, Media{"ppt/media/" + name, media[name]})
	}
	return zipOf(t, parts)
}

const relNS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

func relXML(id, typ, target string) string {
	return `<Relationship Id="` + id + `" Type="` + relNS + `/` + typ + `" Target="` + target + `"/>`
}

func relsXML(rels ...string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		strings.Join(rels, "") + `</Relationships>`
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

func zipOf(t testing.TB, parts []Media) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		fw, err := zw.Create(p.Name)
		if err != nil {
			t.Fatalf("imagestest: zip: %v", err)
		}
		if _, err := fw.Write(p.Data); err != nil {
			t.Fatalf("imagestest: zip: %v", err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("imagestest: zip: %v", err)
	}
	return buf.Bytes()
}
