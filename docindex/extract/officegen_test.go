package extract

import (
	"archive/zip"
	"os"
	"path/filepath"
	"testing"
)

// Office fixtures, written as the producers write them: the parts, namespaces and
// constructs Word, PowerPoint and LibreOffice emit (localised style ids, alternate
// content, text boxes, tracked deletions, field codes, merged and nested tables).

type part struct{ name, body string }

func writeZip(t *testing.T, path string, parts ...part) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, p := range parts {
		method := zip.Deflate
		if p.name == "mimetype" {
			method = zip.Store // ODF requires the first entry stored
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: p.name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(p.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

const docxContentTypes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>`

const docxRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/></Relationships>`

func coreXML(title string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:title>` + title + `</dc:title><dc:creator>docindex</dc:creator></cp:coreProperties>`
}

// German Word names its heading styles "berschrift1"; the names stay "heading 1".
const docxStylesXML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:style w:type="paragraph" w:default="1" w:styleId="Standard"><w:name w:val="Normal"/><w:rPr><w:sz w:val="22"/></w:rPr></w:style>
<w:style w:type="paragraph" w:styleId="Titel"><w:name w:val="Title"/><w:basedOn w:val="Standard"/></w:style>
<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/><w:basedOn w:val="Standard"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>
<w:style w:type="paragraph" w:styleId="berschrift2"><w:name w:val="heading 2"/><w:basedOn w:val="Standard"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>
<w:style w:type="paragraph" w:styleId="MeineUeberschrift"><w:name w:val="My Heading"/><w:basedOn w:val="berschrift2"/></w:style>
<w:style w:type="paragraph" w:styleId="Listenabsatz"><w:name w:val="List Paragraph"/><w:basedOn w:val="Standard"/></w:style>
<w:style w:type="character" w:styleId="Fett"><w:name w:val="Strong"/></w:style>
</w:styles>`

const docxDocument = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" mc:Ignorable="wps"><w:body>
<w:p><w:pPr><w:pStyle w:val="Titel"/></w:pPr><w:r><w:t>Quarterly Report</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="berschrift1"/></w:pPr><w:r><w:t xml:space="preserve">Revenue </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>grew</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">Sales rose by </w:t></w:r><w:r><w:rPr><w:rStyle w:val="Fett"/></w:rPr><w:t>twelve percent</w:t></w:r><w:r><w:t xml:space="preserve"> in the north</w:t></w:r><w:del w:id="1" w:author="x"><w:r><w:delText> and nowhere else</w:delText></w:r></w:del><w:r><w:t>.</w:t></w:r><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> PAGE </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t xml:space="preserve"> See page 3</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>
<w:p><w:r><w:t>Line one</w:t></w:r><w:r><w:br/><w:t>line two</w:t><w:tab/><w:t>after tab</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="MeineUeberschrift"/></w:pPr><w:r><w:t>Regional detail</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="Listenabsatz"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>North: strong</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="Listenabsatz"/><w:numPr><w:ilvl w:val="1"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>Oslo office</w:t></w:r></w:p>
<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/></w:tblPr><w:tblGrid><w:gridCol/><w:gridCol/></w:tblGrid>
<w:tr><w:tc><w:p><w:r><w:t>Region</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Revenue</w:t></w:r></w:p></w:tc></w:tr>
<w:tr><w:tc><w:p><w:r><w:t>North | East</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>1.2M</w:t></w:r></w:p><w:p><w:r><w:t>est.</w:t></w:r></w:p></w:tc></w:tr>
<w:tr><w:tc><w:p><w:r><w:t>South</w:t></w:r></w:p></w:tc><w:tc><w:tbl><w:tr><w:tc><w:p><w:r><w:t>Q1</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>0.4M</w:t></w:r></w:p></w:tc></w:tr></w:tbl></w:tc></w:tr>
</w:tbl>
<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><a:graphic><a:graphicData><wps:wsp><wps:txbx><w:txbxContent><w:p><w:r><w:t>Text box note</w:t></w:r></w:p></w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent><w:p><w:r><w:t>Text box note</w:t></w:r></w:p></w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r><w:r><w:t>Closing paragraph.</w:t></w:r></w:p>
<w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr>
</w:body></w:document>`

func writeDOCX(t *testing.T, dir string) string {
	return writeZip(t, filepath.Join(dir, "report.docx"),
		part{"[Content_Types].xml", docxContentTypes},
		part{"_rels/.rels", docxRels},
		part{"docProps/core.xml", coreXML("Q3 Report &amp; Outlook")},
		part{"word/styles.xml", docxStylesXML},
		part{"word/document.xml", docxDocument},
	)
}

const pptxNS = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`

func pptxShape(ph, text string) string {
	nv := `<p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr>`
	if ph != "" {
		nv = `<p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr><p:ph type="` + ph + `"/></p:nvPr></p:nvSpPr>`
	}
	return `<p:sp>` + nv + `<p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/>` + text + `</p:txBody></p:sp>`
}

func pptxPara(runs ...string) string {
	s := `<a:p><a:pPr lvl="0"/>`
	for _, r := range runs {
		s += `<a:r><a:rPr lang="en-US" dirty="0"/><a:t>` + r + `</a:t></a:r>`
	}
	return s + `<a:endParaRPr lang="en-US"/></a:p>`
}

func pptxSlide(shapes ...string) string {
	s := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:sld ` + pptxNS + `><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>`
	for _, sh := range shapes {
		s += sh
	}
	return s + `</p:spTree></p:cSld></p:sld>`
}

// writePPTX writes three slides whose files are numbered against their order in
// the presentation (slide3.xml is shown second), a table, a group, a slide number
// placeholder and speaker notes.
func writePPTX(t *testing.T, dir string) string {
	table := `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="4" name="t"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl><a:tblGrid><a:gridCol w="1"/><a:gridCol w="1"/></a:tblGrid>` +
		`<a:tr h="1"><a:tc><a:txBody><a:bodyPr/>` + pptxPara("Metric") + `</a:txBody></a:tc><a:tc><a:txBody><a:bodyPr/>` + pptxPara("Value") + `</a:txBody></a:tc></a:tr>` +
		`<a:tr h="1"><a:tc><a:txBody><a:bodyPr/>` + pptxPara("Latency") + `</a:txBody></a:tc><a:tc><a:txBody><a:bodyPr/>` + pptxPara("42 ms") + `</a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>`
	group := `<p:grpSp><p:nvGrpSpPr><p:cNvPr id="5" name="g"/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>` + pptxShape("", pptxPara("Grouped caption")) + `</p:grpSp>`
	notes := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:notes ` + pptxNS + `><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>` +
		pptxShape("sldImg", "") + pptxShape("body", pptxPara("Remember to mention the pilot customers.")) + pptxShape("sldNum", pptxPara("1")) + `</p:spTree></p:cSld></p:notes>`
	rel := func(id, typ, target string) string {
		return `<Relationship Id="` + id + `" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/` + typ + `" Target="` + target + `"/>`
	}
	rels := func(r ...string) string {
		s := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`
		for _, x := range r {
			s += x
		}
		return s + `</Relationships>`
	}
	return writeZip(t, filepath.Join(dir, "deck.pptx"),
		part{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/></Types>`},
		part{"_rels/.rels", rels(rel("rId1", "officeDocument", "ppt/presentation.xml"))},
		part{"docProps/core.xml", coreXML("")},
		part{"ppt/presentation.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:presentation ` + pptxNS + `><p:sldMasterIdLst/><p:sldIdLst><p:sldId id="256" r:id="rId2"/><p:sldId id="257" r:id="rId4"/><p:sldId id="258" r:id="rId3"/></p:sldIdLst><p:sldSz cx="1" cy="1"/></p:presentation>`},
		part{"ppt/_rels/presentation.xml.rels", rels(rel("rId1", "slideMaster", "slideMasters/slideMaster1.xml"), rel("rId2", "slide", "slides/slide1.xml"), rel("rId3", "slide", "slides/slide2.xml"), rel("rId4", "slide", "slides/slide3.xml"))},
		part{"ppt/slides/slide1.xml", pptxSlide(pptxShape("body", pptxPara("Welcome to the ", "launch")+pptxPara("Agenda follows")), pptxShape("ctrTitle", pptxPara("Product Launch")), pptxShape("sldNum", pptxPara("1")))},
		part{"ppt/slides/_rels/slide1.xml.rels", rels(rel("rId1", "slideLayout", "../slideLayouts/slideLayout1.xml"), rel("rId2", "notesSlide", "../notesSlides/notesSlide1.xml"))},
		part{"ppt/notesSlides/notesSlide1.xml", notes},
		part{"ppt/slides/slide3.xml", pptxSlide(pptxShape("title", pptxPara("Performance")), table, group)},
		part{"ppt/slides/slide2.xml", pptxSlide(pptxShape("title", pptxPara("Next steps")), pptxShape("", pptxPara("Ship it")))},
	)
}

const odtContent = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" office:version="1.3">
<office:automatic-styles><style:style style:name="P1" style:family="paragraph"><style:text-properties fo:font-weight="bold" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"/></style:style></office:automatic-styles>
<office:body><office:text>
<text:sequence-decls><text:sequence-decl text:display-outline-level="0" text:name="Table"/></text:sequence-decls>
<text:table-of-content text:name="TOC"><text:index-body><text:p>Field Notes ..... 1</text:p></text:index-body></text:table-of-content>
<text:h text:style-name="Heading_20_1" text:outline-level="1">Field Notes</text:h>
<text:p text:style-name="P1">The   river   was <text:span text:style-name="T1">high</text:span>,<text:s text:c="2"/>and the<text:tab/>bridge closed.<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>Footnote about the bridge.</text:p></text:note-body></text:note></text:p>
<text:h text:outline-level="2">Observations<text:line-break/>in May</text:h>
<text:list><text:list-item><text:p>Herons nesting</text:p><text:list><text:list-item><text:p>Three pairs</text:p></text:list-item></text:list></text:list-item><text:list-item><text:p>Water cold</text:p></text:list-item></text:list>
<table:table table:name="T1"><table:table-column table:number-columns-repeated="2"/><table:table-header-rows><table:table-row><table:table-cell><text:p>Site</text:p></table:table-cell><table:table-cell><text:p>Count</text:p></table:table-cell></table:table-row></table:table-header-rows>
<table:table-row><table:table-cell><text:p>Upper weir</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="7"><text:p>7</text:p></table:table-cell></table:table-row></table:table>
<text:p>See<office:annotation><dc:creator>rev</dc:creator><text:p>reviewer comment</text:p></office:annotation> appendix.</text:p>
</office:text></office:body></office:document-content>`

func writeODT(t *testing.T, dir string) string {
	return writeZip(t, filepath.Join(dir, "notes.odt"),
		part{"mimetype", "application/vnd.oasis.opendocument.text"},
		part{"META-INF/manifest.xml", `<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>`},
		part{"meta.xml", `<?xml version="1.0" encoding="UTF-8"?><office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>River Survey</dc:title></office:meta></office:document-meta>`},
		part{"content.xml", odtContent},
	)
}
