package filecloud

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

// Type is the source type; the plugin binary is docindex-connector-filecloud.
const Type = "filecloud"

// Version is the connector's version, reported by Describe.
const Version = "1.0.0"

// Connector reads files from WebDAV servers and S3-compatible buckets. It
// holds no per-source state and is safe for concurrent use.
type Connector struct {
	log           *slog.Logger
	transport     http.RoundTripper
	healthTimeout time.Duration
}

var _ connector.Connector = (*Connector)(nil)

// Option configures a Connector.
type Option func(*Connector)

// WithLogger sets the logger (default: discard). Configurations and secrets
// are never logged.
func WithLogger(l *slog.Logger) Option { return func(c *Connector) { c.log = l } }

// WithTransport sets the HTTP transport for all requests (default: a clone
// of http.DefaultTransport that gives up on a server that sends no response
// headers within two minutes).
func WithTransport(rt http.RoundTripper) Option { return func(c *Connector) { c.transport = rt } }

// WithHealthTimeout bounds CheckHealth (default 15s): a source that does
// not answer in time is down.
func WithHealthTimeout(d time.Duration) Option {
	return func(c *Connector) { c.healthTimeout = d }
}

// New returns the connector.
func New(opts ...Option) *Connector {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 2 * time.Minute
	c := &Connector{
		log:           slog.New(slog.DiscardHandler),
		transport:     t,
		healthTimeout: 15 * time.Second,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Describe implements connector.Connector.
func (c *Connector) Describe(context.Context) (connector.Description, error) {
	return connector.Description{
		Type:         Type,
		Version:      Version,
		DisplayName:  "File cloud (WebDAV, S3)",
		Description:  "Files in a WebDAV folder (Nextcloud, ownCloud, SharePoint and others) or an S3-compatible bucket, with include/exclude globs and ETag-based change detection.",
		Capabilities: []connector.Capability{connector.CapSchedule},
		ConfigSchema: json.RawMessage(schema),
	}, nil
}

// Validate implements connector.Connector. It does not contact the source.
func (c *Connector) Validate(_ context.Context, config json.RawMessage) error {
	_, err := parse(config)
	return err
}

// CheckHealth implements connector.Connector: it reads the root folder or
// the bucket's first key under the prefix with the configured credentials.
func (c *Connector) CheckHealth(ctx context.Context, config json.RawMessage) (connector.Health, error) {
	s, err := parse(config)
	if err != nil {
		return connector.Health{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.healthTimeout)
	defer cancel()
	src := c.open(s, true)
	if err := src.check(ctx); err != nil {
		msg := scrubString(err.Error(), s.secrets)
		if ctx.Err() != nil {
			msg = fmt.Sprintf("no answer within %s: %s", c.healthTimeout, msg)
		}
		return connector.Health{Status: connector.StatusDown, Message: msg}, nil
	}
	return connector.Health{Status: connector.StatusOK, Message: src.describe() + " is readable"}, nil
}

// Sync implements connector.Connector. Every run is a complete listing
// (a Snapshot): neither WebDAV nor S3 offers a portable change feed.
func (c *Connector) Sync(ctx context.Context, req connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		s, err := parse(req.Config)
		if err != nil {
			yield(connector.Event{}, err)
			return
		}
		if !yield(connector.Snapshot(), nil) {
			return
		}
		src := c.open(s, false)
		start := time.Now()
		listed, skipped := 0, 0
		stopped := false
		err = src.walk(ctx, s.filter, func(e entry) bool {
			if !s.filter.keep(e.id) {
				skipped++
				return true
			}
			listed++
			if !yield(connector.Upsert(c.item(s, src, e)), nil) {
				stopped = true
				return false
			}
			return true
		})
		if stopped {
			return
		}
		if err != nil {
			yield(connector.Event{}, scrub(err, s.secrets))
			return
		}
		c.log.Info("filecloud sync listed", "provider", s.Provider, "source", src.describe(),
			"items", listed, "filtered_out", skipped, "duration", time.Since(start).Round(time.Millisecond))
	}
}

// Fetch implements connector.Connector. The content streams from the
// server; the returned body holds the connection until it is closed.
func (c *Connector) Fetch(ctx context.Context, req connector.FetchRequest) (*connector.Content, error) {
	s, err := parse(req.Config)
	if err != nil {
		return nil, err
	}
	id := req.Item.ID
	if err := checkID(id); err != nil {
		return nil, err
	}
	if !s.filter.keep(id) {
		return nil, fmt.Errorf("filecloud fetch %q: outside the source's include/exclude globs: %w", id, plugins.ErrNotFound)
	}
	content, err := c.open(s, false).open(ctx, id)
	if err != nil {
		return nil, scrub(err, s.secrets)
	}
	content.ContentType = contentType(content.ContentType, id)
	return content, nil
}

// checkID refuses ids that no listing produces, above all ones that would
// climb out of the root.
func checkID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("filecloud fetch: empty item id: %w", plugins.ErrInvalidArgument)
	case strings.HasPrefix(id, "/") || strings.HasSuffix(id, "/") || hasDotDot(id):
		return fmt.Errorf("filecloud fetch %q: not a path relative to the root: %w", id, plugins.ErrNotFound)
	}
	return nil
}

// source is one provider's view of the configured folder or bucket prefix.
type source interface {
	// check reads the root, proving reachability and credentials.
	check(ctx context.Context) error
	// walk calls fn for every file below the root, stopping when fn returns
	// false. Folders the filter prunes need not be listed.
	walk(ctx context.Context, f *filter, fn func(entry) bool) error
	// open streams one file.
	open(ctx context.Context, id string) (*connector.Content, error)
	// webURL is where a person (or a client with credentials) opens the file.
	webURL(id string) string
	// describe names the root for messages and logs (no credentials).
	describe() string
}

// entry is one file as a listing reports it.
type entry struct {
	id          string // path relative to the root or prefix
	size        int64
	modified    time.Time
	etag        string
	contentType string
}

func (c *Connector) open(s *settings, health bool) source {
	if s.Provider == ProviderS3 {
		return newS3(s, c.transport, health)
	}
	return newWebDAV(s, c.transport)
}

func (c *Connector) item(s *settings, src source, e entry) connector.Item {
	u := src.webURL(e.id)
	meta := map[string]any{"url": u, "path": e.id, "provider": s.Provider}
	if e.etag != "" {
		meta["etag"] = e.etag
	}
	if s.Provider == ProviderS3 {
		meta["bucket"] = s.Bucket
		meta["key"] = s.prefix + e.id
	}
	it := connector.Item{
		ID:          e.id,
		Version:     version(e.etag, e.size, e.modified),
		Name:        path.Base(e.id),
		Path:        e.id,
		URL:         u,
		ContentType: contentType(e.contentType, e.id),
		Size:        e.size,
		Metadata:    meta,
	}
	if !e.modified.IsZero() {
		it.ModifiedAt = e.modified.UTC()
	}
	return it
}

// version is an item's Version: the ETag, which both protocols change with
// the content; without one, size and modification time (whole seconds, the
// precision of HTTP dates); with neither, empty, so that the host compares
// content hashes.
func version(etag string, size int64, modified time.Time) string {
	if etag = normalizeETag(etag); etag != "" {
		return etag
	}
	if modified.IsZero() || modified.Unix() <= 0 {
		return ""
	}
	return "size-mtime:" + strconv.FormatInt(size, 10) + "-" + strconv.FormatInt(modified.Unix(), 10)
}

// normalizeETag drops the quotes around an ETag (listings and GET responses
// of some servers differ in quoting) and keeps a weak marker.
func normalizeETag(etag string) string {
	etag = strings.TrimSpace(etag)
	weak := strings.HasPrefix(etag, "W/")
	etag = strings.Trim(strings.TrimPrefix(etag, "W/"), `"`)
	if etag == "" {
		return ""
	}
	if weak {
		return "W/" + etag
	}
	return etag
}

// contentType prefers the server's type, unless it is missing or the
// generic octet-stream that object stores give files uploaded without one;
// then the extension's type, if it has one.
func contentType(server, name string) string {
	mt, _, _ := mime.ParseMediaType(server)
	if server != "" && mt != "application/octet-stream" && mt != "binary/octet-stream" {
		return server
	}
	if byExt := mime.TypeByExtension(path.Ext(name)); byExt != "" {
		return byExt
	}
	return server
}

// statusError maps an HTTP status of a failed request to the SDK's errors.
func statusError(op string, status int, detail string) error {
	var sentinel error
	var what string
	switch status {
	case http.StatusUnauthorized:
		sentinel, what = plugins.ErrUnauthenticated, "the server refused the credentials"
	case http.StatusForbidden:
		sentinel, what = plugins.ErrPermissionDenied, "access denied"
	case http.StatusNotFound:
		sentinel, what = plugins.ErrNotFound, "not found"
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		sentinel, what = plugins.ErrRateLimited, "the server is overloaded or rate limiting"
	default:
		return fmt.Errorf("%s: HTTP %d %s%s", op, status, http.StatusText(status), detail)
	}
	return fmt.Errorf("%s: %s (HTTP %d%s): %w", op, what, status, detail, sentinel)
}
