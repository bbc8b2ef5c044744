package docsuite

import (
	"bytes"
	"html"
	"io"
	"regexp"
	"strings"

	"github.com/docindex/docindex/plugins/connector"
)

// htmlType is the content type of served pages.
const htmlType = "text/html; charset=utf-8"

// pageDocument wraps a page body (an HTML fragment) into a document whose
// title and first heading are the page title, so that extractors keep the
// title and the page's own headings stay below it.
func pageDocument(title, body string) []byte {
	var b bytes.Buffer
	t := html.EscapeString(title)
	b.Grow(len(body) + 2*len(t) + 128)
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>")
	b.WriteString(t)
	b.WriteString("</title></head>\n<body><h1>")
	b.WriteString(t)
	b.WriteString("</h1>\n")
	b.WriteString(body)
	b.WriteString("\n</body></html>\n")
	return b.Bytes()
}

func htmlContent(name string, doc []byte, version string) *connector.Content {
	return &connector.Content{
		ContentType: htmlType,
		Name:        name,
		Size:        int64(len(doc)),
		Version:     version,
		Body:        io.NopCloser(bytes.NewReader(doc)),
	}
}

var (
	cdataRE       = regexp.MustCompile(`(?s)<!\[CDATA\[(.*?)\]\]>`)
	acParameterRE = regexp.MustCompile(`(?s)<ac:parameter\b[^>]*>.*?</ac:parameter>`)
	selfClosingRE = regexp.MustCompile(`<((?:ac|ri|at):[A-Za-z0-9_-]+)(\s[^<>]*?)?\s*/>`)
)

// storageToHTML makes Confluence storage format (XHTML with ac: and ri:
// macro elements) safe for HTML parsers, which treat both CDATA sections
// and self-closing unknown elements differently from XML:
//   - CDATA sections (code blocks, plain-text macro bodies) become escaped
//     text, so their content is kept rather than dropped as a comment;
//   - self-closing macro elements (<ri:page ... />) get an end tag, so the
//     content after them is not swallowed into them;
//   - macro parameters (<ac:parameter ac:name="language">go</...>) are
//     dropped: they are settings, not text.
func storageToHTML(storage string) string {
	s := cdataRE.ReplaceAllStringFunc(storage, func(m string) string {
		return html.EscapeString(cdataRE.FindStringSubmatch(m)[1])
	})
	s = acParameterRE.ReplaceAllString(s, "")
	s = selfClosingRE.ReplaceAllString(s, "<$1$2></$1>")
	return s
}

// fileName turns a page title into a file name with ext: titles may hold
// '/' (MediaWiki subpages, Confluence titles), which is no file name
// character.
func fileName(title, ext string) string {
	name := strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', 0:
			return '_'
		}
		return r
	}, strings.TrimSpace(title))
	if name == "" {
		name = "untitled"
	}
	return name + ext
}
