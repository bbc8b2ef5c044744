package rss

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

// Version is the connector's version.
const Version = "0.1.0"

// maxFeedBytes bounds a feed download; real feeds are far smaller.
const maxFeedBytes = 32 << 20

const schema = `{
  "type": "object",
  "required": ["url"],
  "additionalProperties": false,
  "properties": {
    "url": {"type": "string", "format": "uri", "title": "Feed URL", "description": "An RSS 2.0 or Atom 1.0 feed."},
    "maxItems": {"type": "integer", "minimum": 0, "default": 0, "description": "Read at most this many entries, newest first as the feed lists them; 0 for all."},
    "username": {"type": "string", "description": "For feeds behind HTTP basic authentication."},
    "password": {"type": "string", "writeOnly": true}
  }
}`

type config struct {
	URL      string `json:"url"`
	MaxItems int    `json:"maxItems"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// cursor remembers the feed's validators for a conditional request.
type cursor struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
}

// Option configures New.
type Option func(*Connector)

// WithHTTPClient replaces the HTTP client.
func WithHTTPClient(c *http.Client) Option { return func(r *Connector) { r.client = c } }

// Connector reads RSS and Atom feeds.
type Connector struct {
	client *http.Client
}

var _ connector.Connector = (*Connector)(nil)

// New returns the connector.
func New(opts ...Option) *Connector {
	c := &Connector{client: http.DefaultClient}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Describe tells the host what the connector is.
func (c *Connector) Describe(context.Context) (connector.Description, error) {
	return connector.Description{
		Type:         "rss",
		Version:      Version,
		DisplayName:  "RSS and Atom feeds",
		Description:  "Indexes the entries of an RSS 2.0 or Atom 1.0 feed.",
		Capabilities: []connector.Capability{connector.CapSchedule, connector.CapIncremental},
		ConfigSchema: json.RawMessage(schema),
	}, nil
}

func (c *Connector) config(raw json.RawMessage) (config, error) {
	var cfg config
	if err := connector.DecodeConfig(raw, &cfg); err != nil {
		return cfg, err
	}
	var v connector.ValidationError
	u, err := url.Parse(cfg.URL)
	switch {
	case cfg.URL == "":
		v.Add("/url", "is required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		v.Add("/url", "must be an absolute http or https URL")
	}
	if cfg.MaxItems < 0 {
		v.Add("/maxItems", "must not be negative")
	}
	if cfg.Password != "" && cfg.Username == "" {
		v.Add("/username", "is required with a password")
	}
	return cfg, v.Err()
}

// Validate checks a configuration without fetching the feed.
func (c *Connector) Validate(_ context.Context, raw json.RawMessage) error {
	_, err := c.config(raw)
	return err
}

// CheckHealth fetches and parses the feed.
func (c *Connector) CheckHealth(ctx context.Context, raw json.RawMessage) (connector.Health, error) {
	cfg, err := c.config(raw)
	if err != nil {
		return connector.Health{}, err
	}
	f, _, _, err := c.fetch(ctx, cfg, cursor{})
	if err != nil {
		return connector.Health{Status: connector.StatusDown, Message: err.Error()}, nil
	}
	return connector.Health{Status: connector.StatusOK, Message: fmt.Sprintf("%d entries in %q", len(f.Entries), f.Title)}, nil
}

// Sync lists the feed's entries, or nothing when the feed has not changed
// since the cursor.
func (c *Connector) Sync(ctx context.Context, req connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		cfg, err := c.config(req.Config)
		if err != nil {
			yield(connector.Event{}, err)
			return
		}
		var cur cursor
		if len(req.Cursor) > 0 {
			// An unreadable cursor only costs a full download.
			_ = json.Unmarshal(req.Cursor, &cur)
		}
		f, next, notModified, err := c.fetch(ctx, cfg, cur)
		if err != nil {
			yield(connector.Event{}, err)
			return
		}
		if !notModified {
			for i, e := range f.Entries {
				if cfg.MaxItems > 0 && i == cfg.MaxItems {
					break
				}
				if e.ID == "" {
					continue // nothing to recognise it by next time
				}
				if !yield(connector.Upsert(item(f, e)), nil) {
					return
				}
			}
		}
		data, _ := json.Marshal(next)
		yield(connector.Checkpoint(data), nil)
	}
}

// Fetch downloads the feed again and returns one entry's HTML: the
// connector keeps no state between calls.
func (c *Connector) Fetch(ctx context.Context, req connector.FetchRequest) (*connector.Content, error) {
	cfg, err := c.config(req.Config)
	if err != nil {
		return nil, err
	}
	f, _, _, err := c.fetch(ctx, cfg, cursor{})
	if err != nil {
		return nil, err
	}
	for _, e := range f.Entries {
		if e.ID == req.Item.ID {
			doc := document(f, e)
			return &connector.Content{
				ContentType: "text/html; charset=utf-8",
				Size:        int64(len(doc)),
				Version:     version(doc),
				Body:        io.NopCloser(strings.NewReader(doc)),
			}, nil
		}
	}
	return nil, fmt.Errorf("rss: entry %q is no longer in the feed: %w", req.Item.ID, plugins.ErrNotFound)
}

// fetch downloads and parses the feed, conditionally when cur has
// validators.
func (c *Connector) fetch(ctx context.Context, cfg config, cur cursor) (f feed, next cursor, notModified bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.URL, nil)
	if err != nil {
		return f, cur, false, fmt.Errorf("rss: %w", err)
	}
	req.Header.Set("User-Agent", "docindex-connector-rss/"+Version)
	req.Header.Set("Accept", "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5")
	if cur.ETag != "" {
		req.Header.Set("If-None-Match", cur.ETag)
	}
	if cur.LastModified != "" {
		req.Header.Set("If-Modified-Since", cur.LastModified)
	}
	if cfg.Username != "" {
		req.SetBasicAuth(cfg.Username, cfg.Password)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return f, cur, false, fmt.Errorf("rss: GET %s: %w", cfg.URL, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified:
		return f, cur, true, nil
	case resp.StatusCode == http.StatusUnauthorized:
		return f, cur, false, fmt.Errorf("rss: GET %s: %s: %w", cfg.URL, resp.Status, plugins.ErrUnauthenticated)
	case resp.StatusCode == http.StatusForbidden:
		return f, cur, false, fmt.Errorf("rss: GET %s: %s: %w", cfg.URL, resp.Status, plugins.ErrPermissionDenied)
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return f, cur, false, fmt.Errorf("rss: GET %s: %s: %w", cfg.URL, resp.Status, plugins.ErrNotFound)
	case resp.StatusCode != http.StatusOK:
		return f, cur, false, fmt.Errorf("rss: GET %s: %s", cfg.URL, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxFeedBytes+1))
	if err != nil {
		return f, cur, false, fmt.Errorf("rss: GET %s: %w", cfg.URL, err)
	}
	if len(data) > maxFeedBytes {
		return f, cur, false, fmt.Errorf("rss: %s is larger than %d MB", cfg.URL, maxFeedBytes>>20)
	}
	f, err = parse(data)
	if err != nil {
		return f, cur, false, fmt.Errorf("rss: %s: %w", cfg.URL, err)
	}
	next = cursor{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	return f, next, false, nil
}

// item describes an entry; its content travels inline.
func item(f feed, e entry) connector.Item {
	doc := document(f, e)
	it := connector.Item{
		ID:          e.ID,
		Version:     version(doc),
		Name:        slug(e.Title) + ".html",
		URL:         e.Link,
		ContentType: "text/html; charset=utf-8",
		Size:        int64(len(doc)),
		ModifiedAt:  e.Updated,
		Metadata:    map[string]any{"title": e.Title, "feed": f.Title},
	}
	if it.ModifiedAt.IsZero() {
		it.ModifiedAt = e.Published
	}
	if e.Author != "" {
		it.Metadata["author"] = e.Author
	}
	if len(e.Categories) > 0 {
		it.Metadata["categories"] = e.Categories
	}
	if !e.Published.IsZero() {
		it.Metadata["published"] = e.Published
	}
	if len(doc) <= connector.InlineLimit {
		it.Inline = []byte(doc)
	}
	return it
}

// document is the entry as a small HTML page, which the server's extractor
// turns into text with its title.
func document(f feed, e entry) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>")
	b.WriteString(xmlEscape(e.Title))
	b.WriteString("</title></head><body>\n<h1>")
	b.WriteString(xmlEscape(e.Title))
	b.WriteString("</h1>\n")
	if e.Author != "" || f.Title != "" {
		b.WriteString("<p>" + xmlEscape(strings.TrimSpace(e.Author+" · "+f.Title)) + "</p>\n")
	}
	b.WriteString(e.HTML)
	b.WriteString("\n</body></html>\n")
	return b.String()
}

// version identifies the content: an entry whose text changes gets a new one.
func version(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:8])
}

// slug turns a title into a file name.
func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 80 {
			break
		}
	}
	s := strings.TrimSuffix(b.String(), "-")
	if s == "" {
		return "entry"
	}
	return s
}
