package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ErrNoTesseract is returned by NewOCR when the tesseract command is not installed.
var ErrNoTesseract = errors.New("tesseract is not installed (Debian: apt-get install tesseract-ocr tesseract-ocr-eng)")

// OCR is a Describer that reads the words printed on an image with the tesseract command.
// It describes nothing that is not text: a photo gives "".
type OCR struct {
	bin     string
	lang    string
	timeout time.Duration
}

// OCROption configures an OCR.
type OCROption func(*OCR)

// WithLanguages sets tesseract's languages, as its -l flag takes them ("eng", "eng+deu");
// each needs its model installed (tesseract-ocr-<lang>). Default "eng".
func WithLanguages(lang string) OCROption {
	return func(o *OCR) {
		if lang != "" {
			o.lang = lang
		}
	}
}

// WithTesseract sets the tesseract binary instead of looking it up on PATH.
func WithTesseract(path string) OCROption { return func(o *OCR) { o.bin = path } }

// WithOCRTimeout bounds the reading of one image (default 2 minutes).
func WithOCRTimeout(d time.Duration) OCROption {
	return func(o *OCR) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// NewOCR returns an OCR describer, or ErrNoTesseract when tesseract is not on PATH.
func NewOCR(opts ...OCROption) (*OCR, error) {
	o := &OCR{lang: "eng", timeout: 2 * time.Minute}
	for _, opt := range opts {
		opt(o)
	}
	if o.bin == "" {
		p, err := exec.LookPath("tesseract")
		if err != nil {
			return nil, ErrNoTesseract
		}
		o.bin = p
	}
	return o, nil
}

// Describe returns the text tesseract reads on the image, "" when there is none.
func (o *OCR) Describe(ctx context.Context, img Image) (string, error) {
	if len(img.Data) == 0 {
		return "", errors.New("ocr: empty image")
	}
	// tesseract takes input that is not an image for a list of image paths to read: never
	// give it anything but an image, or an upload could make it read files on the server.
	if typeOf(img.Data) == "" {
		return "", errors.New("ocr: not an image of a readable type (PNG, JPEG, GIF, TIFF, WebP, BMP)")
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	// The image goes in on stdin and the text comes out on stdout: no temporary files.
	cmd := exec.CommandContext(ctx, o.bin, "stdin", "stdout", "-l", o.lang)
	cmd.Stdin = bytes.NewReader(img.Data)
	// tesseract's OpenMP threads spin on the cores workers share; one thread per image is
	// faster under load (the tesseract FAQ advises it when several run at once).
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("ocr: %w", ctx.Err())
		}
		return "", fmt.Errorf("ocr: tesseract could not read the image: %s", tesseractError(stderr.String(), err))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// tesseractError picks the line of tesseract's stderr that says what went wrong; it also
// prints notes ("Estimating resolution as ...") that are not errors.
func tesseractError(stderr string, err error) string {
	var first string
	for line := range strings.SplitSeq(stderr, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "Estimating resolution") || strings.HasPrefix(line, "Warning") {
			continue
		}
		if strings.Contains(line, "rror") || strings.Contains(line, "annot") || strings.Contains(line, "ailed") {
			return line
		}
		if first == "" {
			first = line
		}
	}
	if first != "" {
		return first
	}
	return err.Error()
}
