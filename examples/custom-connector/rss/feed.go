package rss

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"time"
)

// entry is a feed entry in a form common to RSS and Atom.
type entry struct {
	ID         string
	Title      string
	Link       string
	Author     string
	Categories []string
	Published  time.Time
	Updated    time.Time
	HTML       string // the richest content the feed gives
}

type feed struct {
	Title   string
	Entries []entry
}

// The two formats, as far as the connector reads them.
type rssDoc struct {
	XMLName xml.Name `xml:"rss"`
	Channel struct {
		Title string    `xml:"title"`
		Items []rssItem `xml:"item"`
	} `xml:"channel"`
}

type rssItem struct {
	Title       string   `xml:"title"`
	Link        string   `xml:"link"`
	GUID        string   `xml:"guid"`
	PubDate     string   `xml:"pubDate"`
	Author      string   `xml:"author"`
	Creator     string   `xml:"http://purl.org/dc/elements/1.1/ creator"`
	Categories  []string `xml:"category"`
	Description string   `xml:"description"`
	Encoded     string   `xml:"http://purl.org/rss/1.0/modules/content/ encoded"`
}

type atomDoc struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Title   string      `xml:"title"`
	Entries []atomEntry `xml:"entry"`
}

type atomEntry struct {
	ID        string `xml:"id"`
	Title     string `xml:"title"`
	Published string `xml:"published"`
	Updated   string `xml:"updated"`
	Links     []struct {
		Href string `xml:"href,attr"`
		Rel  string `xml:"rel,attr"`
	} `xml:"link"`
	Author struct {
		Name string `xml:"name"`
	} `xml:"author"`
	Categories []struct {
		Term string `xml:"term,attr"`
	} `xml:"category"`
	Summary atomText `xml:"summary"`
	Content atomText `xml:"content"`
}

type atomText struct {
	Type  string `xml:"type,attr"`
	Inner string `xml:",innerxml"`
	Text  string `xml:",chardata"`
}

// html returns an Atom text construct as HTML.
func (t atomText) html() string {
	switch t.Type {
	case "xhtml":
		return strings.TrimSpace(t.Inner)
	case "html":
		return strings.TrimSpace(t.Text)
	default:
		return "<p>" + xmlEscape(strings.TrimSpace(t.Text)) + "</p>"
	}
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// parse reads an RSS 2.0 or Atom 1.0 document.
func parse(data []byte) (feed, error) {
	var root struct{ XMLName xml.Name }
	if err := xml.Unmarshal(data, &root); err != nil {
		return feed{}, fmt.Errorf("not XML: %w", err)
	}
	switch {
	case root.XMLName.Local == "rss":
		var d rssDoc
		if err := xml.Unmarshal(data, &d); err != nil {
			return feed{}, fmt.Errorf("RSS: %w", err)
		}
		f := feed{Title: strings.TrimSpace(d.Channel.Title)}
		for _, it := range d.Channel.Items {
			e := entry{
				ID:         strings.TrimSpace(it.GUID),
				Title:      strings.TrimSpace(it.Title),
				Link:       strings.TrimSpace(it.Link),
				Author:     strings.TrimSpace(firstNonEmpty(it.Creator, it.Author)),
				Categories: trimAll(it.Categories),
				Published:  parseTime(it.PubDate),
				HTML:       strings.TrimSpace(firstNonEmpty(it.Encoded, it.Description)),
			}
			e.Updated = e.Published
			if e.ID == "" {
				e.ID = e.Link
			}
			f.Entries = append(f.Entries, e)
		}
		return f, nil
	case root.XMLName.Local == "feed" && root.XMLName.Space == "http://www.w3.org/2005/Atom":
		var d atomDoc
		if err := xml.Unmarshal(data, &d); err != nil {
			return feed{}, fmt.Errorf("Atom: %w", err)
		}
		f := feed{Title: strings.TrimSpace(d.Title)}
		for _, it := range d.Entries {
			e := entry{
				ID:        strings.TrimSpace(it.ID),
				Title:     strings.TrimSpace(it.Title),
				Author:    strings.TrimSpace(it.Author.Name),
				Published: parseTime(it.Published),
				Updated:   parseTime(it.Updated),
			}
			for _, l := range it.Links {
				if l.Rel == "" || l.Rel == "alternate" {
					e.Link = strings.TrimSpace(l.Href)
					break
				}
			}
			for _, c := range it.Categories {
				if c.Term != "" {
					e.Categories = append(e.Categories, c.Term)
				}
			}
			if it.Content.Inner != "" || it.Content.Text != "" {
				e.HTML = it.Content.html()
			} else {
				e.HTML = it.Summary.html()
			}
			if e.Published.IsZero() {
				e.Published = e.Updated
			}
			if e.ID == "" {
				e.ID = e.Link
			}
			f.Entries = append(f.Entries, e)
		}
		return f, nil
	default:
		return feed{}, errors.New("neither an RSS 2.0 nor an Atom 1.0 feed")
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func trimAll(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseTime reads the date formats feeds use in practice.
func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC1123Z, time.RFC1123, time.RFC3339, time.RFC3339Nano,
		"Mon, 2 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST", "2 Jan 2006 15:04:05 -0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
