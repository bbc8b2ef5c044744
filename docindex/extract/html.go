package extract

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html/charset"
)

// Elements that are never content. header and footer go too, except inside an
// article, where they usually hold the article's title and byline.
const htmlNoise = "script, style, noscript, template, iframe, svg, canvas, nav, aside, form, button, dialog, [role=navigation], [role=banner], [role=contentinfo], [aria-hidden=true], [hidden]"

// html converts the main content of a page to Markdown: the first <main>, else
// [role=main], else the single <article>, else <body>, without navigation, page
// header and footer, scripts and styles. The input is read whole (a DOM is needed),
// up to the text cap.
func (e *Extractor) html(path string) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	lr := &io.LimitedReader{R: br, N: int64(e.maxTextBytes)}
	// charset.NewReader honours a <meta charset> or BOM and decodes to UTF-8.
	r, err := charset.NewReader(lr, "text/html")
	if err != nil {
		return nil, fmt.Errorf("decode charset: %w", err)
	}
	dom, err := goquery.NewDocumentFromReader(r)
	if err != nil {
		return nil, fmt.Errorf("parse: %v: %w", err, ErrCorrupt)
	}
	d := &Document{}
	if lr.N == 0 {
		if _, err := br.ReadByte(); err == nil {
			d.Warnings = append(d.Warnings, capWarning(e.maxTextBytes))
		}
	}

	d.Title = strings.TrimSpace(dom.Find("head title").First().Text())
	if d.Title == "" {
		d.Title, _ = dom.Find(`meta[property="og:title"]`).Attr("content")
	}

	dom.Find(htmlNoise).Remove()
	// Permalink anchors next to headings ("#", "¶") would end up in every heading.
	dom.Find(`a[href^="#"], a.headerlink, a.anchor`).Each(func(_ int, s *goquery.Selection) {
		switch strings.TrimSpace(s.Text()) {
		case "", "#", "¶", "§", "🔗", "link":
			s.Remove()
		}
	})
	dom.Find("header, footer, [role=banner], [role=contentinfo]").Each(func(_ int, s *goquery.Selection) {
		if s.Closest("article").Length() == 0 {
			s.Remove()
		}
	})
	main := dom.Find("main").First()
	if main.Length() == 0 {
		main = dom.Find("[role=main]").First()
	}
	if main.Length() == 0 {
		if a := dom.Find("article"); a.Length() == 1 {
			main = a
		}
	}
	if main.Length() == 0 {
		main = dom.Find("body")
	}
	if main.Length() == 0 {
		main = dom.Selection
	}
	if d.Title == "" {
		d.Title = strings.TrimSpace(dom.Find("h1").First().Text())
	}

	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(commonmark.WithListEndComment(false)),
		// Minimal padding: aligned columns cost tokens and say nothing to a retriever.
		table.NewTablePlugin(table.WithSkipEmptyRows(true), table.WithHeaderPromotion(true),
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal)),
		strikethrough.NewStrikethroughPlugin(),
	))
	md, err := conv.ConvertNode(main.Get(0))
	if err != nil {
		return nil, fmt.Errorf("convert to markdown: %w", err)
	}
	d.Pages = []Page{{Text: string(md)}}
	return d, nil
}
