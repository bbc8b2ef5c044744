package webcrawl

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
)

// The cursor of a webcrawl sync is not a resume point (every sync lists the
// whole site) but a cache of what the last crawl saw: per requested URL its
// validators (ETag, Last-Modified) and what the page said. The next crawl
// sends conditional requests with them, and a 304 answer reuses the cached
// page instead of downloading it again.

// cursorVersion changes when the cursor's shape does; a cursor of another
// version is ignored (the crawl then makes plain requests).
const cursorVersion = 1

// maxCursorBytes bounds the encoded cursor; past it the crawl sends none.
const maxCursorBytes = 16 << 20

// maxCursorInput bounds a cursor when it is decoded.
const maxCursorInput = 64 << 20

type cursorDoc struct {
	V     int                    `json:"v"`
	Pages map[string]*cachedPage `json:"p"`
}

// cachedPage is what a crawl remembers of one requested URL.
type cachedPage struct {
	Final        string `json:"f,omitempty"` // URL after redirects, if different
	ETag         string `json:"e,omitempty"`
	LastModified string `json:"m,omitempty"`
	Version      string `json:"v"`
	ContentType  string `json:"ct"`
	Size         int64  `json:"s"`
	HeaderRobots string `json:"x,omitempty"` // X-Robots-Tag
	Page         page   `json:"pg"`
}

func decodeCursor(b []byte) map[string]*cachedPage {
	if len(b) == 0 {
		return nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	defer zr.Close()
	var doc cursorDoc
	if err := json.NewDecoder(io.LimitReader(zr, maxCursorInput)).Decode(&doc); err != nil || doc.V != cursorVersion {
		return nil
	}
	return doc.Pages
}

func encodeCursor(pages map[string]*cachedPage) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("webcrawl: cursor: %w", err)
	}
	if err := json.NewEncoder(zw).Encode(cursorDoc{V: cursorVersion, Pages: pages}); err != nil {
		return nil, fmt.Errorf("webcrawl: cursor: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("webcrawl: cursor: %w", err)
	}
	return buf.Bytes(), nil
}
