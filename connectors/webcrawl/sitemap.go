package webcrawl

import (
	"bufio"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html/charset"
)

// maxSitemapBytes bounds one sitemap, uncompressed (the sitemap protocol
// allows 50 MB).
const maxSitemapBytes = 50 << 20

// sitemap is one parsed sitemap document: either a urlset (Pages) or a
// sitemap index (Sitemaps).
type sitemap struct {
	Pages    []string
	Sitemaps []string
}

// parseSitemap reads a sitemap or sitemap index (sitemaps.org protocol),
// gzipped or not, in any encoding its XML declaration names.
func parseSitemap(r io.Reader) (*sitemap, error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("sitemap: gunzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	lr := &io.LimitedReader{R: br, N: maxSitemapBytes + 1}
	dec := xml.NewDecoder(lr)
	dec.CharsetReader = charset.NewReaderLabel
	dec.Strict = false

	var sm sitemap
	var root string
	var inLoc bool
	var loc strings.Builder
	depth := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return nil, fmt.Errorf("sitemap: larger than %d bytes", maxSitemapBytes)
			}
			return nil, fmt.Errorf("sitemap: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 {
				root = t.Name.Local
				if root != "urlset" && root != "sitemapindex" {
					return nil, fmt.Errorf("sitemap: root element <%s>, want <urlset> or <sitemapindex>", root)
				}
			}
			// <loc> directly inside <url> or <sitemap>; other loc elements
			// (image and video extensions) are not pages.
			if depth == 3 && t.Name.Local == "loc" {
				inLoc = true
				loc.Reset()
			}
		case xml.CharData:
			if inLoc {
				loc.Write(t)
			}
		case xml.EndElement:
			if inLoc && depth == 3 {
				inLoc = false
				if v := strings.TrimSpace(loc.String()); v != "" {
					if root == "sitemapindex" {
						sm.Sitemaps = append(sm.Sitemaps, v)
					} else {
						sm.Pages = append(sm.Pages, v)
					}
				}
			}
			depth--
		}
	}
	if lr.N <= 0 {
		return nil, fmt.Errorf("sitemap: larger than %d bytes", maxSitemapBytes)
	}
	if root == "" {
		return nil, errors.New("sitemap: no XML root element")
	}
	return &sm, nil
}
