package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

func (c *Collector) pdf(ctx context.Context, w *walk, src Source, mode Mode) error {
	if mode == ModeEmptyPages {
		return c.pdfPages(ctx, w, src)
	}
	return c.pdfEmbedded(ctx, w, src)
}

// run runs a poppler tool under the collector's timeout and returns its standard output.
func (c *Collector) run(ctx context.Context, bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(bin), ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("%s: %s", filepath.Base(bin), msg)
	}
	return out, nil
}

// pageSizes asks pdfinfo for the page count and each page's larger side in points.
func (c *Collector) pageSizes(ctx context.Context, path string) (int, map[int]float64, error) {
	// -l past the last page is clamped by pdfinfo; it makes it print every page's size.
	out, err := c.run(ctx, c.pdfinfo, "-f", "1", "-l", strconv.Itoa(math.MaxInt32), path)
	if err != nil {
		return 0, nil, err
	}
	n, sizes := 0, map[int]float64{}
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "Pages:":
			n, _ = strconv.Atoi(f[1])
		case len(f) >= 6 && f[0] == "Page" && f[2] == "size:":
			p, _ := strconv.Atoi(f[1])
			wd, _ := strconv.ParseFloat(f[3], 64)
			ht, _ := strconv.ParseFloat(f[5], 64)
			sizes[p] = max(wd, ht)
		}
	}
	return n, sizes, nil
}

// pdfPages renders the pages without text, one at a time.
func (c *Collector) pdfPages(ctx context.Context, w *walk, src Source) error {
	if c.pdftoppm == "" {
		w.warn("pages without text were not read: pdftoppm is not installed (install poppler-utils)")
		return nil
	}
	text := map[int]bool{}
	for _, p := range src.TextPages {
		text[p] = true
	}
	if src.PageCount > 0 && len(text) >= src.PageCount {
		return nil // every page holds text: nothing to render, no need to ask pdfinfo
	}
	count, sizes := src.PageCount, map[int]float64{}
	if c.pdfinfo != "" {
		n, s, err := c.pageSizes(ctx, src.Path)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			w.warn(fmt.Sprintf("pages without text were not read: %v", err))
			return nil
		}
		sizes = s
		if count == 0 {
			count = n
		}
	}
	if count == 0 {
		w.warn("pages without text were not read: the page count is unknown (install poppler-utils)")
		return nil
	}
	dir, err := os.MkdirTemp("", "docindex-pages-*")
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	defer os.RemoveAll(dir)
	for p := 1; p <= count; p++ {
		if text[p] {
			continue
		}
		if w.full() {
			w.skipped++
			continue
		}
		dpi := c.dpi
		if side := sizes[p]; side > 0 {
			// Keep the longer side within maxPixels; at least 36 dpi, or nothing is legible.
			dpi = max(min(dpi, int(float64(c.maxPixels)*72/side)), 36)
		}
		base := filepath.Join(dir, "page")
		_, err := c.run(ctx, c.pdftoppm, "-r", strconv.Itoa(dpi), "-f", strconv.Itoa(p), "-l", strconv.Itoa(p),
			"-png", "-singlefile", src.Path, base)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			w.warn(fmt.Sprintf("page %d could not be rendered: %v", p, err))
			continue
		}
		data, err := os.ReadFile(base + ".png")
		os.Remove(base + ".png")
		if err != nil {
			w.warn(fmt.Sprintf("page %d could not be rendered: %v", p, err))
			continue
		}
		img := Image{Kind: KindPage, Page: p, Name: fmt.Sprintf("page-%d.png", p), ContentType: "image/png", Data: data}
		if int64(len(data)) > c.maxBytes {
			w.warn(fmt.Sprintf("image %s: %d bytes is more than the %d bytes an image may have", where(img), len(data), c.maxBytes))
			continue
		}
		if err := w.emit(img); err != nil {
			return err
		}
	}
	return nil
}

// listed is one row of pdfimages -list.
type listed struct {
	page, num     int
	width, height int
	object        string // "num gen" of the image XObject; "" for an inline image
}

// listImages runs pdfimages -list and keeps the images worth describing: real images and
// stencil masks (the text layer of MRC-compressed scans), not the masks and soft masks
// that only give other images their transparency.
func (c *Collector) listImages(ctx context.Context, path string) ([]listed, error) {
	out, err := c.run(ctx, c.pdfimages, "-list", path)
	if err != nil {
		return nil, err
	}
	var rows []listed
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 11 {
			continue
		}
		page, err1 := strconv.Atoi(f[0])
		num, err2 := strconv.Atoi(f[1])
		wd, err3 := strconv.Atoi(f[3])
		ht, err4 := strconv.Atoi(f[4])
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			continue // the header lines
		}
		if f[2] != "image" && f[2] != "stencil" {
			continue
		}
		r := listed{page: page, num: num, width: wd, height: ht}
		// Inline images print "[inline]" where an XObject prints its object number and generation.
		if f[10] != "[inline]" && len(f) >= 12 {
			r.object = f[10] + " " + f[11]
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// pdfEmbedded extracts the images drawn in a PDF. An XObject drawn on several pages (a
// logo in the header) is described once, on its first page.
func (c *Collector) pdfEmbedded(ctx context.Context, w *walk, src Source) error {
	if c.pdfimages == "" {
		w.warn("images in the PDF were not read: pdfimages is not installed (install poppler-utils)")
		return nil
	}
	rows, err := c.listImages(ctx, src.Path)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.warn(fmt.Sprintf("images in the PDF were not read: %v", err))
		return nil
	}
	seen := map[string]bool{}
	var keep []listed
	for _, r := range rows {
		if smallSize(r.width, r.height) || (r.object != "" && seen[r.object]) {
			continue
		}
		if r.object != "" {
			seen[r.object] = true
		}
		if len(keep) >= c.maxImages-w.n {
			w.skipped++
			continue
		}
		keep = append(keep, r)
	}
	if len(keep) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "docindex-images-*")
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	defer os.RemoveAll(dir)
	// One run up to the last page wanted: image numbers then count from the first page,
	// as in the listing. -p puts the page into the file names.
	last := keep[len(keep)-1].page
	if _, err := c.run(ctx, c.pdfimages, "-png", "-p", "-l", strconv.Itoa(last), src.Path, filepath.Join(dir, "img")); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.warn(fmt.Sprintf("images in the PDF were not read: %v", err))
		return nil
	}
	for _, r := range keep {
		file := filepath.Join(dir, fmt.Sprintf("img-%03d-%03d.png", r.page, r.num))
		data, err := os.ReadFile(file)
		os.Remove(file)
		img := Image{Kind: KindEmbedded, Page: r.page, Name: fmt.Sprintf("image-%d.png", r.num+1)}
		if err != nil {
			w.warn(fmt.Sprintf("image %s could not be extracted: %v", where(img), err))
			continue
		}
		img.Data = data
		if err := c.media(w, img); err != nil {
			return err
		}
	}
	return nil
}
