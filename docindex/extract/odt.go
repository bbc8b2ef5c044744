package extract

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

const (
	odfText  = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
	odfTable = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
	odfOff   = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
)

// odfSkip lists elements whose content is not document text: tracked changes and
// comments, note markers, generated indexes (they repeat the headings), declarations.
var odfSkip = map[xml.Name]bool{
	{Space: odfText, Local: "tracked-changes"}:    true,
	{Space: odfText, Local: "note-citation"}:      true,
	{Space: odfText, Local: "table-of-content"}:   true,
	{Space: odfText, Local: "illustration-index"}: true,
	{Space: odfText, Local: "table-index"}:        true,
	{Space: odfText, Local: "object-index"}:       true,
	{Space: odfText, Local: "user-index"}:         true,
	{Space: odfText, Local: "alphabetical-index"}: true,
	{Space: odfText, Local: "bibliography"}:       true,
	{Space: odfText, Local: "sequence-decls"}:     true,
	{Space: odfText, Local: "variable-decls"}:     true,
	{Space: odfOff, Local: "annotation"}:          true,
	{Space: odfOff, Local: "automatic-styles"}:    true,
	{Space: odfOff, Local: "font-face-decls"}:     true,
	{Space: odfOff, Local: "scripts"}:             true,
	{Space: odfTable, Local: "table-columns"}:     true,
	{Space: odfTable, Local: "table-column"}:      true,
}

// odt extracts content.xml of an OpenDocument text: text:h as Markdown headings,
// list items as "- " items, tables as Markdown tables, frames and notes as their own
// paragraphs. Whitespace follows ODF rules: runs of blanks collapse, text:s, text:tab
// and text:line-break are explicit.
func (e *Extractor) odt(ctx context.Context, path string) (*Document, error) {
	k, err := openPkg(path)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	if !k.has("content.xml") {
		return nil, fmt.Errorf("no content.xml: %w", ErrCorrupt)
	}
	if odfEncrypted(ctx, k) {
		return nil, ErrEncrypted
	}
	d := &Document{Title: k.coreTitle(ctx, "meta.xml")}
	b := newBlocks(e.maxTextBytes)
	lists := 0 // depth of open text:list elements
	firstHeading := ""
	inBody := false
	err = k.walk(ctx, "content.xml", func(dec *xml.Decoder, tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			if odfSkip[t.Name] {
				return dec.Skip()
			}
			if t.Name.Space == odfOff && t.Name.Local == "body" {
				inBody = true
			}
			switch t.Name.Space {
			case odfText:
				switch t.Name.Local {
				case "h":
					p := b.startPara()
					p.heading = 1
					if v, err := strconv.Atoi(attr(t, "outline-level")); err == nil && v > 0 {
						p.heading = v
					}
				case "p":
					p := b.startPara()
					if s := attr(t, "style-name"); s == "Title" {
						p.heading = 1
					} else if lists > 0 {
						p.list = lists - 1
					}
				case "list":
					lists++
				case "s":
					n, err := strconv.Atoi(attr(t, "c"))
					if err != nil || n < 1 {
						n = 1
					}
					b.text(strings.Repeat(" ", min(n, 100)))
				case "tab":
					b.text("\t")
				case "line-break":
					b.text("\n")
				}
			case odfTable:
				switch t.Name.Local {
				case "table":
					b.startTable()
				case "table-row":
					b.startRow()
				case "table-cell", "covered-table-cell":
					b.startCell()
				}
			}
		case xml.CharData:
			if inBody {
				b.text(collapseSpace(string(t)))
			}
		case xml.EndElement:
			switch t.Name.Space {
			case odfText:
				switch t.Name.Local {
				case "h", "p":
					if p := b.para(); p != nil && p.heading > 0 && firstHeading == "" {
						firstHeading = strings.TrimSpace(p.text.String())
					}
					b.endPara()
				case "list":
					lists--
				}
			case odfTable:
				switch t.Name.Local {
				case "table":
					b.endTable()
				case "table-row":
					b.endRow()
				case "table-cell", "covered-table-cell":
					b.endCell()
				}
			}
			if b.full() {
				return errStop
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, errBadXML) && b.size == 0 {
			return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
		}
		w, err := partWarning(err)
		if err != nil {
			return nil, err
		}
		d.Warnings = append(d.Warnings, w)
	}
	if b.full() {
		d.Warnings = append(d.Warnings, capWarning(e.maxTextBytes))
	}
	if d.Title == "" {
		d.Title = firstHeading
	}
	d.Pages = []Page{{Text: b.String()}}
	return d, nil
}

// collapseSpace turns every run of XML whitespace into one space, as ODF readers do.
func collapseSpace(s string) string {
	if !strings.ContainsAny(s, " \t\r\n") {
		return s
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// odfEncrypted reports whether the manifest declares encrypted parts (a password
// protected document keeps content.xml encrypted).
func odfEncrypted(ctx context.Context, k *pkg) bool {
	enc := false
	_ = k.walk(ctx, "META-INF/manifest.xml", func(dec *xml.Decoder, tok xml.Token) error {
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "encryption-data" {
			enc = true
			return errStop
		}
		return nil
	})
	return enc
}
