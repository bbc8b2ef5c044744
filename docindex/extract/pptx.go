package extract

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
)

const relNS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

// pptx gives one page per slide, in presentation order: the title placeholder as a
// "# " heading, then the other text of the slide (shapes, tables as Markdown
// tables, grouped shapes), then the speaker notes under "Notes:".
func (e *Extractor) pptx(ctx context.Context, path string) (*Document, error) {
	k, err := openPkg(path)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	const main = "ppt/presentation.xml"
	if !k.has(main) {
		return nil, fmt.Errorf("no %s: %w", main, ErrCorrupt)
	}
	rels := k.rels(ctx, main)
	var slides []string
	err = k.walk(ctx, main, func(dec *xml.Decoder, tok xml.Token) error {
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "sldId" {
			for _, a := range se.Attr {
				if a.Name.Local == "id" && a.Name.Space == relNS {
					if r, ok := rels[a.Value]; ok {
						slides = append(slides, r.target)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}

	d := &Document{Title: k.coreTitle(ctx, "docProps/core.xml"), PageCount: len(slides)}
	size := 0
	for i, slide := range slides {
		if e.maxPages > 0 && i >= e.maxPages {
			d.Warnings = append(d.Warnings, fmt.Sprintf("page cap reached: slides %d to %d left out", i+1, len(slides)))
			break
		}
		if size >= e.maxTextBytes {
			d.Warnings = append(d.Warnings, capWarning(e.maxTextBytes))
			break
		}
		title, body, err := slideText(ctx, k, slide, e.maxTextBytes-size, false)
		if err != nil {
			w, err := partWarning(err)
			if err != nil {
				return nil, err
			}
			d.Warnings = append(d.Warnings, fmt.Sprintf("slide %d: %s", i+1, w))
		}
		if d.Title == "" && i == 0 {
			d.Title = title
		}
		var parts []string
		if title != "" {
			parts = append(parts, "# "+strings.Join(strings.Fields(title), " "))
		}
		if body != "" {
			parts = append(parts, body)
		}
		for _, r := range k.rels(ctx, slide) {
			if strings.HasSuffix(r.typ, "/notesSlide") {
				if _, notes, err := slideText(ctx, k, r.target, e.maxTextBytes-size, true); err == nil && notes != "" {
					parts = append(parts, "Notes:\n\n"+notes)
				}
			}
		}
		text := strings.Join(parts, "\n\n")
		size += len(text)
		d.Pages = append(d.Pages, Page{Number: i + 1, Text: text})
	}
	return d, nil
}

// slideText reads a slide (or a notes page, where only the body placeholder counts:
// the rest is the slide image and page number). The title placeholder's text comes
// back separately.
func slideText(ctx context.Context, k *pkg, part string, max int, notes bool) (title, body string, err error) {
	tb, bb := newBlocks(max), newBlocks(max)
	cur := bb
	shapeKind := ""     // placeholder type of the current shape
	var shapes []string // stack of placeholder types for grouped shapes
	inText := false
	err = k.walk(ctx, part, func(dec *xml.Decoder, tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "Fallback":
				return dec.Skip()
			case "sp":
				shapes = append(shapes, shapeKind)
				shapeKind = ""
				cur = bb
			case "ph":
				shapeKind = attr(t, "type")
				if shapeKind == "" {
					shapeKind = "body" // a placeholder without type is a body placeholder
				}
				if !notes && (shapeKind == "title" || shapeKind == "ctrTitle") {
					cur = tb
				}
			case "txBody":
				if notes && shapeKind != "body" {
					return dec.Skip()
				}
				if !notes && (shapeKind == "sldNum" || shapeKind == "dt" || shapeKind == "ftr") {
					return dec.Skip()
				}
			case "p":
				if t.Name.Space == "http://schemas.openxmlformats.org/drawingml/2006/main" {
					cur.startPara()
				}
			case "t":
				inText = true
			case "br":
				cur.text("\n")
			case "tbl":
				cur.startTable()
			case "tr":
				cur.startRow()
			case "tc":
				cur.startCell()
			case "rPr", "pPr", "endParaRPr", "spPr", "style":
				return dec.Skip()
			}
		case xml.CharData:
			if inText {
				cur.text(string(t))
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				if t.Name.Space == "http://schemas.openxmlformats.org/drawingml/2006/main" {
					cur.endPara()
				}
			case "tc":
				cur.endCell()
			case "tr":
				cur.endRow()
			case "tbl":
				cur.endTable()
			case "sp":
				if n := len(shapes); n > 0 {
					shapeKind, shapes = shapes[n-1], shapes[:n-1]
				}
				cur = bb
			}
		}
		return nil
	})
	return tb.String(), bb.String(), err
}
