package extract

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// WordprocessingML namespaces (transitional and strict).
func isW(n xml.Name) bool {
	return n.Space == "http://schemas.openxmlformats.org/wordprocessingml/2006/main" ||
		n.Space == "http://purl.oclc.org/ooxml/wordprocessingml/main"
}

// docStyle is what a paragraph style contributes: a heading level or list item.
type docStyle struct {
	heading int
	list    bool
	basedOn string
}

var headingName = regexp.MustCompile(`(?i)^heading\s*([1-9])$`)

// docxStyles maps paragraph style ids to heading levels, from the style names
// ("heading 1", "Title") or outline levels, following basedOn chains. Style ids are
// localised ("berschrift1"), names are not.
func docxStyles(ctx context.Context, k *pkg) map[string]docStyle {
	styles := map[string]docStyle{}
	var id string
	var cur docStyle
	_ = k.walk(ctx, "word/styles.xml", func(dec *xml.Decoder, tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			if !isW(t.Name) {
				return nil
			}
			switch t.Name.Local {
			case "style":
				id, cur = "", docStyle{}
				if attr(t, "type") == "paragraph" {
					id = attr(t, "styleId")
				}
			case "name":
				if id != "" {
					name := attr(t, "val")
					if m := headingName.FindStringSubmatch(name); m != nil {
						cur.heading, _ = strconv.Atoi(m[1])
					} else if strings.EqualFold(name, "title") {
						cur.heading = 1
					}
				}
			case "basedOn":
				cur.basedOn = attr(t, "val")
			case "outlineLvl":
				if v, err := strconv.Atoi(attr(t, "val")); err == nil && v < 9 && cur.heading == 0 {
					cur.heading = v + 1
				}
			case "numPr":
				cur.list = true
			case "rPr", "tblPr", "trPr", "tcPr", "tblStylePr":
				// Formatting and table-style conditions hold nothing we use.
				return dec.Skip()
			}
		case xml.EndElement:
			if isW(t.Name) && t.Name.Local == "style" && id != "" {
				styles[id] = cur
				id = ""
			}
		}
		return nil
	})
	// Resolve inheritance (bounded, styles can be cyclic in broken files).
	for id, s := range styles {
		for i, b := 0, s.basedOn; i < 10 && b != "" && s.heading == 0; i++ {
			p, ok := styles[b]
			if !ok {
				break
			}
			s.heading, s.list = p.heading, s.list || p.list
			b = p.basedOn
		}
		styles[id] = s
	}
	return styles
}

// docx extracts word/document.xml: headings as Markdown headings, list items as
// "- " items, tables as Markdown tables, text boxes as their own paragraphs. Deleted
// revisions, field codes and the fallback copies of alternate content are left out.
func (e *Extractor) docx(ctx context.Context, path string) (*Document, error) {
	k, err := openPkg(path)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	if !k.has("word/document.xml") {
		return nil, fmt.Errorf("no word/document.xml: %w", ErrCorrupt)
	}
	d := &Document{Title: k.coreTitle(ctx, "docProps/core.xml")}
	styles := docxStyles(ctx, k)
	b := newBlocks(e.maxTextBytes)
	inText, runs := false, 0
	firstHeading := ""
	err = k.walk(ctx, "word/document.xml", func(dec *xml.Decoder, tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "Fallback" && strings.Contains(t.Name.Space, "markup-compatibility") {
				// The fallback repeats the chosen content for old readers.
				return dec.Skip()
			}
			if !isW(t.Name) {
				return nil
			}
			switch t.Name.Local {
			case "p":
				b.startPara()
			case "pStyle":
				if p := b.para(); p != nil {
					s := styles[attr(t, "val")]
					if p.heading == 0 {
						p.heading = s.heading
					}
					if s.list && p.list < 0 {
						p.list = 0
					}
				}
			case "outlineLvl":
				if p := b.para(); p != nil {
					if v, err := strconv.Atoi(attr(t, "val")); err == nil && v < 9 {
						p.heading = v + 1
					}
				}
			case "numPr":
				if p := b.para(); p != nil && p.list < 0 {
					p.list = 0
				}
			case "ilvl":
				if p := b.para(); p != nil {
					if v, err := strconv.Atoi(attr(t, "val")); err == nil && v >= 0 {
						p.list = v
					}
				}
			case "numId":
				// numId 0 removes the numbering a style would give.
				if p := b.para(); p != nil && attr(t, "val") == "0" {
					p.list = -1
				}
			case "r":
				runs++
			case "t":
				inText = true
			case "tab":
				if runs > 0 {
					b.text("\t")
				}
			case "br", "cr":
				if runs > 0 {
					b.text("\n")
				}
			case "noBreakHyphen":
				b.text("-")
			case "tbl":
				b.startTable()
			case "tr":
				b.startRow()
			case "tc":
				b.startCell()
			case "del", "moveFrom", "pPrChange", "rPrChange", "sectPrChange", "tblPrChange", "trPrChange", "tcPrChange",
				"instrText", "delInstrText", "footnoteReference", "endnoteReference", "commentReference", "rPr", "sectPr":
				return dec.Skip()
			}
		case xml.CharData:
			if inText {
				b.text(string(t))
			}
		case xml.EndElement:
			if !isW(t.Name) {
				return nil
			}
			switch t.Name.Local {
			case "t":
				inText = false
			case "r":
				runs--
			case "p":
				if p := b.para(); p != nil && p.heading > 0 && firstHeading == "" {
					firstHeading = strings.TrimSpace(p.text.String())
				}
				b.endPara()
			case "tc":
				b.endCell()
			case "tr":
				b.endRow()
			case "tbl":
				b.endTable()
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
