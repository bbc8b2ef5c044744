package filecloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/studio-b12/gowebdav"

	"github.com/docindex/docindex/plugins/connector"
)

// webdavSource reads a folder of a WebDAV server.
type webdavSource struct {
	s    *settings
	base http.RoundTripper
}

func newWebDAV(s *settings, base http.RoundTripper) *webdavSource {
	return &webdavSource{s: s, base: base}
}

// client returns a WebDAV client bound to ctx. A client per call: the
// configuration comes with every call, and gowebdav takes no contexts.
func (w *webdavSource) client(ctx context.Context) (*gowebdav.Client, *callTransport) {
	t := &callTransport{ctx: ctx, base: w.base}
	// gowebdav escapes every segment of base and path itself: hand it the
	// URL's path decoded, or "alice%40example.com" would become "%2540".
	base := (&url.URL{Scheme: w.s.base.Scheme, Host: w.s.base.Host}).String() + w.s.base.Path
	c := gowebdav.NewClient(base, w.s.Username, w.s.Password)
	c.SetTransport(t)
	return c, t
}

// remote is the server path of id (or of the root for "").
func (w *webdavSource) remote(id string) string {
	return path.Join(w.s.root, id)
}

func (w *webdavSource) describe() string {
	return "WebDAV folder " + w.webURL("")
}

func (w *webdavSource) webURL(id string) string {
	u := *w.s.base
	u.Path = path.Join("/", u.Path, w.s.root, id)
	if id == "" && !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawPath = ""
	return u.String()
}

func (w *webdavSource) check(ctx context.Context) error {
	c, _ := w.client(ctx)
	fi, err := c.Stat(w.remote(""))
	if err != nil {
		return webdavError("webdav: read root "+w.s.root, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("webdav: root %s is a file, not a folder", w.s.root)
	}
	return nil
}

func (w *webdavSource) walk(ctx context.Context, f *filter, fn func(entry) bool) error {
	c, t := w.client(ctx)
	// Depth-first with one PROPFIND (depth 1) per folder: "Depth: infinity"
	// is disabled on most servers (Nextcloud, IIS) for its cost.
	stack := []string{""}
	for len(stack) > 0 {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		infos, err := c.ReadDir(w.remote(dir))
		if err == nil {
			err = t.takeListErr()
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("webdav: list %s: %w", w.remote(dir), ctx.Err())
			}
			return webdavError("webdav: list "+w.remote(dir), err)
		}
		slices.SortFunc(infos, func(a, b os.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
		var subdirs []string
		for _, fi := range infos {
			name := fi.Name()
			if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
				continue // not a child of dir: never leave the root
			}
			rel := path.Join(dir, name)
			if fi.IsDir() {
				if !f.prune(rel) {
					subdirs = append(subdirs, rel)
				}
				continue
			}
			e := entry{id: rel, size: fi.Size()}
			if m := fi.ModTime(); m.Unix() > 0 {
				e.modified = m
			}
			if df, ok := fi.(gowebdav.File); ok {
				e.etag, e.contentType = df.ETag(), df.ContentType()
			}
			if !fn(e) {
				return nil
			}
		}
		// Pushed in reverse so that folders are walked in name order.
		for i := len(subdirs) - 1; i >= 0; i-- {
			stack = append(stack, subdirs[i])
		}
	}
	return nil
}

func (w *webdavSource) open(ctx context.Context, id string) (*connector.Content, error) {
	c, t := w.client(ctx)
	body, err := c.ReadStream(w.remote(id))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("webdav: get %s: %w", w.remote(id), ctx.Err())
		}
		return nil, webdavError("webdav: get "+w.remote(id), err)
	}
	h, size, _ := t.lastGet()
	var modified time.Time
	if lm, err := http.ParseTime(h.Get("Last-Modified")); err == nil {
		modified = lm
	}
	return &connector.Content{
		ContentType: h.Get("Content-Type"),
		Size:        size,
		Version:     version(h.Get("ETag"), size, modified),
		Body:        body,
	}, nil
}

// webdavError turns gowebdav's errors (an *os.PathError around a status
// code, or around a transport error) into messages that say what failed,
// wrapping the SDK's errors for status codes that have one.
func webdavError(op string, err error) error {
	var se gowebdav.StatusError
	if errors.As(err, &se) {
		if se.Status < 300 {
			// A 2xx that is not 207 Multi-Status: a web page, not WebDAV.
			return fmt.Errorf("%s: no WebDAV folder at this URL (HTTP %d instead of 207 Multi-Status)", op, se.Status)
		}
		detail := ""
		if se.Status == http.StatusMethodNotAllowed {
			detail = ", not a WebDAV folder"
		}
		return statusError(op, se.Status, detail)
	}
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Err != nil {
		err = pe.Err
	}
	return fmt.Errorf("%s: %w", op, err)
}
