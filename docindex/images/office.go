package images

import (
	"archive/zip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
)

// maxXML bounds the XML parts read to find images (relationships, the slide list).
const maxXML = 16 << 20

const (
	relNS     = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
	relImage  = relNS + "/image"
	relSlide  = relNS + "/slide"
	mediaDOCX = "word/media/"
)

// docx hands over word/media/* in name order (Word numbers them as they are inserted).
// A document has no pages: with ModeEmptyPages its images count only when it has no text.
func (c *Collector) docx(ctx context.Context, w *walk, src Source, mode Mode) error {
	if mode == ModeEmptyPages && len(src.TextPages) > 0 {
		return nil
	}
	zr, err := zip.OpenReader(src.Path)
	if err != nil {
		w.warn(fmt.Sprintf("images in the document were not read: %v", err))
		return nil
	}
	defer zr.Close()
	var media []*zip.File
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, mediaDOCX) && !strings.HasSuffix(f.Name, "/") {
			media = append(media, f)
		}
	}
	slices.SortFunc(media, func(a, b *zip.File) int { return naturalCompare(a.Name, b.Name) })
	for _, f := range media {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.zipImage(w, f, 0); err != nil {
			return err
		}
	}
	return nil
}

// pptx hands over the images each slide refers to, in slide order, each once.
func (c *Collector) pptx(ctx context.Context, w *walk, src Source, mode Mode) error {
	zr, err := zip.OpenReader(src.Path)
	if err != nil {
		w.warn(fmt.Sprintf("images in the presentation were not read: %v", err))
		return nil
	}
	defer zr.Close()
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[f.Name] = f
	}
	slides, err := slideParts(files)
	if err != nil {
		w.warn(fmt.Sprintf("images in the presentation were not read: %v", err))
		return nil
	}
	text := map[int]bool{}
	for _, p := range src.TextPages {
		text[p] = true
	}
	seen := map[string]bool{}
	for i, slide := range slides {
		if err := ctx.Err(); err != nil {
			return err
		}
		if mode == ModeEmptyPages && text[i+1] {
			continue
		}
		rels, err := relsOf(files, slide)
		if err != nil {
			w.warn(fmt.Sprintf("slide %d: %v", i+1, err))
			continue
		}
		for _, r := range rels {
			if r.typ != relImage || seen[r.target] {
				continue
			}
			seen[r.target] = true
			f := files[r.target]
			if f == nil {
				w.warn(fmt.Sprintf("slide %d: image %s is missing from the file", i+1, r.target))
				continue
			}
			if err := c.zipImage(w, f, i+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// zipImage reads one image from the archive within the size limit and hands it over.
func (c *Collector) zipImage(w *walk, f *zip.File, page int) error {
	img := Image{Kind: KindEmbedded, Page: page, Name: f.Name}
	if f.UncompressedSize64 > uint64(c.maxBytes) {
		w.warn(fmt.Sprintf("image %s: %d bytes is more than the %d bytes an image may have", where(img), f.UncompressedSize64, c.maxBytes))
		return nil
	}
	if w.full() {
		w.skipped++
		return nil
	}
	rc, err := f.Open()
	if err != nil {
		w.warn(fmt.Sprintf("image %s could not be read: %v", where(img), err))
		return nil
	}
	// The header's size may lie: read one byte past the limit to notice.
	data, err := io.ReadAll(io.LimitReader(rc, c.maxBytes+1))
	rc.Close()
	if err != nil {
		w.warn(fmt.Sprintf("image %s could not be read: %v", where(img), err))
		return nil
	}
	img.Data = data
	return c.media(w, img)
}

// rel is one relationship of a package part, its target resolved to a part name.
type rel struct{ id, typ, target string }

// relsOf reads the relationships of part (its _rels/<name>.rels), in file order.
func relsOf(files map[string]*zip.File, part string) ([]rel, error) {
	dir, name := path.Split(part)
	f := files[dir+"_rels/"+name+".rels"]
	if f == nil {
		return nil, nil
	}
	var out []rel
	err := walkXML(f, func(se xml.StartElement) {
		if se.Name.Local != "Relationship" || attr(se, "TargetMode") == "External" {
			return
		}
		t := attr(se, "Target")
		if strings.HasPrefix(t, "/") {
			t = strings.TrimPrefix(t, "/")
		} else {
			t = path.Join(dir, t)
		}
		out = append(out, rel{id: attr(se, "Id"), typ: attr(se, "Type"), target: t})
	})
	return out, err
}

// slideParts lists the slide parts in presentation order (the order of sldIdLst, which
// need not be the order of the slide file names).
func slideParts(files map[string]*zip.File) ([]string, error) {
	const main = "ppt/presentation.xml"
	f := files[main]
	if f == nil {
		return nil, errors.New("no " + main)
	}
	rels, err := relsOf(files, main)
	if err != nil {
		return nil, err
	}
	byID := map[string]string{}
	for _, r := range rels {
		if r.typ == relSlide {
			byID[r.id] = r.target
		}
	}
	var slides []string
	err = walkXML(f, func(se xml.StartElement) {
		if se.Name.Local != "sldId" {
			return
		}
		for _, a := range se.Attr {
			if a.Name.Local == "id" && a.Name.Space == relNS {
				if t, ok := byID[a.Value]; ok {
					slides = append(slides, t)
				}
			}
		}
	})
	return slides, err
}

// walkXML calls fn with every start element of a zipped XML part.
func walkXML(f *zip.File, fn func(xml.StartElement)) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	defer rc.Close()
	dec := xml.NewDecoder(io.LimitReader(rc, maxXML))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			fn(se)
		}
	}
}

func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// naturalCompare orders names with numbers by their value: image2 before image10.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		if da != "" && db != "" {
			na, _ := strconv.ParseUint(da, 10, 64)
			nb, _ := strconv.ParseUint(db, 10, 64)
			if na != nb {
				if na < nb {
					return -1
				}
				return 1
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return strings.Compare(a[:1], b[:1])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitsPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
