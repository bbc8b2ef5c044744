package docsuite

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/docindex/docindex/plugins/connector"
)

// Type is the source type: the plugin binary is docindex-connector-docsuite.
const Type = "docsuite"

// Version is the connector's own version.
const Version = "1.0.0"

// Connector reads Confluence and MediaWiki sites. It holds no state
// between calls and is safe for concurrent use.
type Connector struct {
	hc          *http.Client
	log         *slog.Logger
	retries     int
	maxWait     time.Duration
	concurrency int
	pageSize    int
}

var _ connector.Connector = (*Connector)(nil)

// Option configures New.
type Option func(*Connector)

// WithHTTPClient sets the HTTP client for every request (default: one that
// waits at most a minute for a server's answer to begin, and has no overall
// timeout, so that a large attachment can stream as long as the caller's
// context allows). Its cookie jar, if any, is replaced per operation:
// MediaWiki logins are per call.
func WithHTTPClient(hc *http.Client) Option { return func(c *Connector) { c.hc = hc } }

// WithLogger sets the logger (default: discard). The plugin's main passes
// plugins.Logger() so that lines reach the host's log.
func WithLogger(l *slog.Logger) Option { return func(c *Connector) { c.log = l } }

// WithRetries sets how often a throttled request (HTTP 429 or 503) is
// retried (default 4) and the longest wait between attempts (default 30s).
func WithRetries(n int, maxWait time.Duration) Option {
	return func(c *Connector) { c.retries, c.maxWait = n, maxWait }
}

// WithConcurrency sets how many requests a sync runs at once where it
// needs one per page (Confluence Cloud page restrictions; default 4).
func WithConcurrency(n int) Option { return func(c *Connector) { c.concurrency = max(n, 1) } }

// WithPageSize sets how many results a listing request asks for (default:
// the most each API allows: 250 on Confluence Cloud, 100 on Data Center,
// "max" on MediaWiki). Servers that cap their answers lower are followed
// page by page either way.
func WithPageSize(n int) Option { return func(c *Connector) { c.pageSize = max(n, 0) } }

// New returns a docsuite connector.
func New(opts ...Option) *Connector {
	c := &Connector{
		hc:          defaultClient(),
		log:         slog.New(slog.DiscardHandler),
		retries:     4,
		maxWait:     30 * time.Second,
		concurrency: 4,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = time.Minute
	return &http.Client{Transport: t}
}

// Describe tells what the connector is and how it is configured.
func (c *Connector) Describe(context.Context) (connector.Description, error) {
	return connector.Description{
		Type:        Type,
		Version:     Version,
		DisplayName: "Document suites (Confluence, MediaWiki)",
		Description: "Pages of Confluence spaces (Cloud and Data Center, with page restrictions and attachments) and of MediaWiki namespaces, synced on demand and by change notifications.",
		// No CapSchedule: document suites push changes (ParseEvent) and are
		// synced on demand; the spec refuses a docsuite sync schedule.
		// Incremental applies to MediaWiki (recent changes), acl to
		// Confluence (page restrictions).
		Capabilities: []connector.Capability{connector.CapIncremental, connector.CapACL},
		ConfigSchema: json.RawMessage(configSchema),
	}, nil
}

// Validate checks a configuration without contacting the suite.
func (c *Connector) Validate(_ context.Context, config json.RawMessage) error {
	_, err := ParseConfig(config)
	return err
}

// CheckHealth checks that the suite answers and accepts the credentials,
// and that the configured spaces or namespaces exist.
func (c *Connector) CheckHealth(ctx context.Context, config json.RawMessage) (connector.Health, error) {
	cfg, err := ParseConfig(config)
	if err != nil {
		return connector.Health{}, err
	}
	h, err := c.open(cfg).health(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return connector.Health{}, fmt.Errorf("docsuite: health check: %w", ctx.Err())
		}
		return connector.Health{Status: connector.StatusDown, Message: err.Error()}, nil
	}
	return h, nil
}

// Sync lists the pages (and attachments) of the suite; see the package
// documentation for full and incremental runs.
func (c *Connector) Sync(ctx context.Context, req connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		cfg, err := ParseConfig(req.Config)
		if err != nil {
			yield(connector.Event{}, err)
			return
		}
		stopped := false
		start := time.Now()
		counts := map[connector.EventKind]int{}
		emit := func(ev connector.Event) error {
			counts[ev.Kind]++
			if !yield(ev, nil) {
				stopped = true
				return errStopped
			}
			return nil
		}
		err = c.open(cfg).sync(ctx, req.Cursor, emit)
		log := c.log.With("flavor", cfg.Flavor, "site", cfg.BaseURL, "full", counts[connector.EventSnapshot] > 0,
			"upserts", counts[connector.EventUpsert], "deletes", counts[connector.EventDelete], "took", time.Since(start).Round(time.Millisecond))
		switch {
		case stopped:
			log.Debug("docsuite: sync stopped by the consumer")
		case err != nil:
			err = fmt.Errorf("docsuite: sync %s: %w", cfg.Flavor, err)
			log.Warn("docsuite: sync failed", "error", err)
			yield(connector.Event{}, err)
		default:
			log.Info("docsuite: sync done")
		}
	}
}

// Fetch streams one item's content: a page as HTML, an attachment as it is
// stored.
func (c *Connector) Fetch(ctx context.Context, req connector.FetchRequest) (*connector.Content, error) {
	cfg, err := ParseConfig(req.Config)
	if err != nil {
		return nil, err
	}
	content, err := c.open(cfg).fetch(ctx, req.Item)
	if err != nil {
		return nil, fmt.Errorf("docsuite: fetch %q: %w", req.Item.ID, err)
	}
	return content, nil
}

// errStopped ends a sync whose consumer stopped reading.
var errStopped = errors.New("sync stopped by the consumer")

// emitFunc hands an event to the consumer; it returns errStopped when the
// consumer wants no more.
type emitFunc func(connector.Event) error

// suite is one flavour's implementation, bound to a configuration for one
// operation.
type suite interface {
	health(ctx context.Context) (connector.Health, error)
	sync(ctx context.Context, cursor []byte, emit emitFunc) error
	fetch(ctx context.Context, item connector.Item) (*connector.Content, error)
}

func (c *Connector) open(cfg Config) suite {
	if cfg.Flavor == FlavorMediaWiki {
		return newMediaWiki(c, cfg)
	}
	return newConfluence(c, cfg)
}

// limit is the page size of a listing whose API allows at most apiMax.
func (c *Connector) limit(apiMax int) int {
	if c.pageSize > 0 && c.pageSize < apiMax {
		return c.pageSize
	}
	return apiMax
}

// newAPI returns the request helper for one operation on cfg's suite.
func (c *Connector) newAPI(cfg Config, hc *http.Client, auth func(*http.Request)) *api {
	origin := ""
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		origin = u.Scheme + "://" + u.Host
	}
	secrets := []string{cfg.APIToken, cfg.WebhookSecret}
	if cfg.APIToken != "" {
		// The basic credentials as they travel, should a server echo them.
		secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte(cfg.Username+":"+cfg.APIToken)))
	}
	return &api{
		hc:      hc,
		origin:  origin,
		auth:    auth,
		secrets: secrets,
		log:     c.log,
		retries: c.retries,
		maxWait: c.maxWait,
	}
}

// readCloser pairs a reader with the closer of what it reads.
type readCloser struct {
	io.Reader
	io.Closer
}
