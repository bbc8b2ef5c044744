package extract

import (
	"archive/zip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"golang.org/x/net/html/charset"
)

// maxPartBytes bounds the uncompressed bytes read from one zip entry. It is far above
// any real document part and stops a zip bomb from keeping a worker busy for long;
// memory is bounded anyway, since parts are decoded as streams.
const maxPartBytes = 1 << 30

// errPartTooLarge reports a zip entry cut at maxPartBytes.
var errPartTooLarge = errors.New("part larger than 1 GiB: rest left out")

// pkg is an opened zip container (OOXML, ODF).
type pkg struct {
	zr    *zip.ReadCloser
	files map[string]*zip.File
}

func openPkg(p string) (*pkg, error) {
	zr, err := zip.OpenReader(p)
	if err != nil {
		if errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrAlgorithm) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("open zip: %v: %w", err, ErrCorrupt)
		}
		return nil, fmt.Errorf("open zip: %w", err)
	}
	k := &pkg{zr: zr, files: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		k.files[strings.TrimPrefix(f.Name, "/")] = f
	}
	return k, nil
}

func (k *pkg) Close() error { return k.zr.Close() }

func (k *pkg) has(name string) bool { return k.files[name] != nil }

// walk streams the XML tokens of entry name to fn. It stops when fn returns errStop
// (not an error) or another error, checking ctx every few thousand tokens. A missing
// entry is reported as fs-style not found.
func (k *pkg) walk(ctx context.Context, name string, fn func(dec *xml.Decoder, tok xml.Token) error) error {
	f := k.files[name]
	if f == nil {
		return fmt.Errorf("%s: %w", name, errMissingPart)
	}
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("%s: %v: %w", name, err, ErrCorrupt)
	}
	defer rc.Close()
	lr := &io.LimitedReader{R: rc, N: maxPartBytes}
	dec := xml.NewDecoder(lr)
	dec.Strict = false
	dec.CharsetReader = charset.NewReaderLabel
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if lr.N == 0 {
				return fmt.Errorf("%s: %w", name, errPartTooLarge)
			}
			return fmt.Errorf("%s: %v: %w", name, err, errBadXML)
		}
		if err := fn(dec, tok); err != nil {
			if err == errStop {
				return nil
			}
			return err
		}
	}
}

var (
	errStop        = errors.New("stop")
	errMissingPart = errors.New("part missing")
	errBadXML      = errors.New("malformed XML")
)

// partWarning turns an error from reading a part after some text was read into a
// warning; errors of the context stay errors.
func partWarning(err error) (string, error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "", err
	}
	return fmt.Sprintf("%v: the rest of this part was left out", err), nil
}

func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// coreTitle reads dc:title from an OOXML docProps/core.xml or ODF meta.xml.
func (k *pkg) coreTitle(ctx context.Context, name string) string {
	var title strings.Builder
	in := false
	_ = k.walk(ctx, name, func(dec *xml.Decoder, tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			in = t.Name.Local == "title" && strings.Contains(t.Name.Space, "purl.org/dc/elements")
		case xml.CharData:
			if in {
				title.Write(t)
			}
		case xml.EndElement:
			if in {
				return errStop
			}
		}
		return nil
	})
	return strings.TrimSpace(title.String())
}

// rels reads an OOXML relationships part: id -> (type, target resolved against the
// directory of the source part).
type rel struct{ typ, target string }

func (k *pkg) rels(ctx context.Context, source string) map[string]rel {
	dir, file := path.Split(source)
	out := map[string]rel{}
	_ = k.walk(ctx, dir+"_rels/"+file+".rels", func(dec *xml.Decoder, tok xml.Token) error {
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "Relationship" || attr(se, "TargetMode") == "External" {
			return nil
		}
		t := attr(se, "Target")
		if strings.HasPrefix(t, "/") {
			t = strings.TrimPrefix(t, "/")
		} else {
			t = path.Join(dir, t)
		}
		out[attr(se, "Id")] = rel{typ: attr(se, "Type"), target: t}
		return nil
	})
	return out
}
