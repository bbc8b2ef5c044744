package webcrawl

import (
	"bytes"
	"fmt"
	"mime"
	"net/url"
	"path"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html/charset"
)

// normalize returns u in the form the crawl compares and lists URLs in:
// lower-case scheme and host, no default port, no fragment, no user
// information, a path of at least "/".
func normalize(u *url.URL) *url.URL {
	n := *u
	n.Scheme = strings.ToLower(n.Scheme)
	n.User = nil
	n.Fragment, n.RawFragment = "", ""
	n.ForceQuery = false
	host := strings.ToLower(n.Host)
	switch {
	case n.Scheme == "http" && strings.HasSuffix(host, ":80"):
		host = strings.TrimSuffix(host, ":80")
	case n.Scheme == "https" && strings.HasSuffix(host, ":443"):
		host = strings.TrimSuffix(host, ":443")
	}
	n.Host = host
	if n.Path == "" && n.Opaque == "" {
		n.Path, n.RawPath = "/", ""
	}
	if n.Path != "/" && (strings.Contains(n.Path, "/./") || strings.Contains(n.Path, "/../") ||
		strings.HasSuffix(n.Path, "/.") || strings.HasSuffix(n.Path, "/..")) {
		// Resolving against itself removes dot segments.
		r := n.ResolveReference(&url.URL{Path: n.Path})
		n.Path, n.RawPath = r.Path, r.RawPath
	}
	return &n
}

// resolve parses href relative to base and normalizes it; ok is false for
// what is not an http(s) link (mailto:, javascript:, a bare fragment).
func resolve(base *url.URL, href string) (*url.URL, bool) {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return nil, false
	}
	ref, err := url.Parse(href)
	if err != nil {
		return nil, false
	}
	u := base.ResolveReference(ref)
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, false
	}
	return normalize(u), true
}

// assetExt lists extensions of files that are never HTML pages, so that
// links to them are not requested at all.
var assetExt = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`.css .js .mjs .map .json .xml .rss .atom .txt .csv .tsv .md
		.png .jpg .jpeg .gif .svg .svgz .webp .avif .ico .bmp .tif .tiff .psd
		.pdf .doc .docx .xls .xlsx .ppt .pptx .odt .ods .odp .epub .ps .eps
		.zip .gz .tgz .bz2 .xz .zst .7z .rar .tar .jar .war .deb .rpm .apk .dmg .iso .exe .msi .bin
		.mp3 .mp4 .m4a .m4v .webm .avi .mov .mkv .wav .ogg .oga .ogv .flac .woff .woff2 .ttf .otf .eot`) {
		assetExt[e] = true
	}
}

// isAsset reports whether u names a file that is not an HTML page.
func isAsset(u *url.URL) bool {
	return assetExt[strings.ToLower(path.Ext(u.Path))]
}

// htmlType reports whether a Content-Type header is an HTML page, and
// returns it cleaned up (media type and charset only).
func htmlType(header string) (string, bool) {
	mt, params, err := mime.ParseMediaType(header)
	if err != nil {
		return "", false
	}
	if mt != "text/html" && mt != "application/xhtml+xml" {
		return mt, false
	}
	out := map[string]string{}
	if cs := params["charset"]; cs != "" {
		out["charset"] = strings.ToLower(cs)
	}
	return mime.FormatMediaType(mt, out), true
}

// page is what the crawl learns from one HTML page.
type page struct {
	Title       string   `json:"t,omitempty"`
	Description string   `json:"d,omitempty"`
	Language    string   `json:"l,omitempty"`
	Canonical   string   `json:"c,omitempty"` // absolute, normalized; "" if none
	Links       []string `json:"k,omitempty"` // absolute, normalized, deduplicated, in document order
	NoIndex     bool     `json:"ni,omitempty"`
	NoFollow    bool     `json:"nf,omitempty"`
}

// parsePage reads an HTML page served at base with the given Content-Type.
func parsePage(body []byte, base *url.URL, contentType string) (*page, error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return nil, fmt.Errorf("decode charset: %w", err)
	}
	doc, err := goquery.NewDocumentFromReader(r)
	if err != nil {
		return nil, fmt.Errorf("parse html: %w", err)
	}
	p := &page{}
	if href, ok := doc.Find("base[href]").First().Attr("href"); ok {
		if b, ok := resolve(base, href); ok {
			base = b
		}
	}
	p.Title = squash(doc.Find("title").First().Text())
	if p.Title == "" {
		p.Title = squash(attr(doc, `meta[property="og:title"]`, "content"))
	}
	if p.Title == "" {
		p.Title = squash(doc.Find("h1").First().Text())
	}
	p.Language = strings.TrimSpace(attr(doc, "html", "lang"))
	doc.Find(`link[rel][href]`).EachWithBreak(func(_ int, s *goquery.Selection) bool {
		if !hasToken(s.AttrOr("rel", ""), "canonical") {
			return true
		}
		if u, ok := resolve(base, s.AttrOr("href", "")); ok {
			p.Canonical = u.String()
		}
		return false
	})
	doc.Find(`meta[name][content]`).Each(func(_ int, s *goquery.Selection) {
		name := strings.ToLower(s.AttrOr("name", ""))
		if name == "description" && p.Description == "" {
			p.Description = squash(s.AttrOr("content", ""))
		}
		if name != "robots" {
			return
		}
		ni, nf := robotsDirectives(s.AttrOr("content", ""))
		p.NoIndex = p.NoIndex || ni
		p.NoFollow = p.NoFollow || nf
	})
	seen := map[string]bool{}
	doc.Find("a[href], area[href]").Each(func(_ int, s *goquery.Selection) {
		if hasToken(s.AttrOr("rel", ""), "nofollow") {
			return
		}
		u, ok := resolve(base, s.AttrOr("href", ""))
		if !ok {
			return
		}
		k := u.String()
		if !seen[k] {
			seen[k] = true
			p.Links = append(p.Links, k)
		}
	})
	return p, nil
}

// robotsDirectives reads a robots meta tag or X-Robots-Tag value.
func robotsDirectives(v string) (noIndex, noFollow bool) {
	for _, d := range strings.FieldsFunc(strings.ToLower(v), func(r rune) bool { return r == ',' || r == ' ' }) {
		// An X-Robots-Tag may name a bot first ("googlebot: noindex").
		if i := strings.LastIndexByte(d, ':'); i >= 0 {
			d = d[i+1:]
		}
		switch d {
		case "noindex":
			noIndex = true
		case "nofollow":
			noFollow = true
		case "none":
			noIndex, noFollow = true, true
		}
	}
	return noIndex, noFollow
}

func attr(doc *goquery.Document, sel, name string) string {
	v, _ := doc.Find(sel).First().Attr(name)
	return v
}

func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(strings.ToLower(list)) {
		if f == tok {
			return true
		}
	}
	return false
}

// squash collapses runs of white space and trims the result.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// itemName is a file name for the page at u, ending in .html so that the
// format is known from the name alone.
func itemName(u *url.URL) string {
	base := path.Base(u.Path)
	if base == "/" || base == "." || base == "" {
		base = "index"
	}
	switch strings.ToLower(path.Ext(base)) {
	case ".html", ".htm", ".xhtml":
		return base
	}
	return base + ".html"
}
