package images

import (
	"bytes"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig of GIFs, for the size check
	_ "image/jpeg"
	_ "image/png"
	"os"

	"github.com/gabriel-vasile/mimetype"
)

// readable are the image types a Describer is given: what tesseract (through leptonica)
// reads and, apart from TIFF and BMP, what vision APIs accept.
var readable = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true,
	"image/tiff": true, "image/webp": true, "image/bmp": true,
}

// typeOf returns the image type of data by its content, "" when it is no image of a
// readable type.
func typeOf(data []byte) string {
	m := mimetype.Detect(data)
	if readable[m.String()] {
		return m.String()
	}
	return ""
}

// ImageType returns the MIME type of the file at path when its content is an image of a
// type Describers are given (PNG, JPEG, GIF, TIFF, WebP, BMP), and false otherwise. The
// content decides: a declared type or an extension may lie.
func ImageType(path string) (string, bool) {
	m, err := mimetype.DetectFile(path)
	if err != nil || !readable[m.String()] {
		return "", false
	}
	return m.String(), true
}

// tooSmall reports whether an image is too small to hold text or meaning (an icon, a
// bullet, a rule). Types the standard library cannot measure are never too small.
func tooSmall(data []byte) bool {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return false
	}
	return smallSize(cfg.Width, cfg.Height)
}

func smallSize(w, h int) bool {
	return w < minSide || h < minSide || w*h < minArea
}

// A line of text needs about 10 pixels of height to be read; an image below 32x32 is an icon.
const (
	minSide = 10
	minArea = 32 * 32
)

// file hands over an image file as one image.
func (c *Collector) file(w *walk, src Source) error {
	fi, err := os.Stat(src.Path)
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	if fi.Size() > c.maxBytes {
		w.warn(fmt.Sprintf("image %s: %d bytes is more than the %d bytes an image may have", src.Name, fi.Size(), c.maxBytes))
		return nil
	}
	data, err := os.ReadFile(src.Path)
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	ct := typeOf(data)
	if ct == "" {
		w.warn(fmt.Sprintf("image %s: not an image of a readable type (PNG, JPEG, GIF, TIFF, WebP, BMP)", src.Name))
		return nil
	}
	// An uploaded image is described whatever its size: it is the whole file.
	return w.emit(Image{Kind: KindFile, Name: src.Name, ContentType: ct, Data: data})
}

// media hands over an image read from a document, after the checks every embedded image
// passes: readable type, size limit, not an icon.
func (c *Collector) media(w *walk, img Image) error {
	if int64(len(img.Data)) > c.maxBytes {
		w.warn(fmt.Sprintf("image %s: %d bytes is more than the %d bytes an image may have", where(img), len(img.Data), c.maxBytes))
		return nil
	}
	img.ContentType = typeOf(img.Data)
	if img.ContentType == "" || tooSmall(img.Data) {
		// Vector pictures (EMF, WMF, SVG) and icons: nothing a describer reads.
		return nil
	}
	return w.emit(img)
}
