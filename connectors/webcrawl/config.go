package webcrawl

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strings"

	"github.com/docindex/docindex/plugins/connector"
)

// Defaults of the configuration keys.
const (
	DefaultMaxDepth          = 2
	DefaultMaxPages          = 1000
	DefaultRequestsPerSecond = 2.0
)

// Bounds that Validate enforces.
const (
	maxMaxDepth          = 100
	maxMaxPages          = 1_000_000
	maxRequestsPerSecond = 1000.0
	maxUserAgent         = 200
	maxURLs              = 1000
	maxPatterns          = 100
)

// Config is a webcrawl source's configuration, as JSON. Pointer fields are
// optional and take their defaults when absent or null.
type Config struct {
	// StartURLs are where the crawl begins (depth 0). Required.
	StartURLs []string `json:"startUrls"`
	// SitemapURLs are sitemaps (or sitemap indexes) whose pages are crawled
	// as if they were start URLs.
	SitemapURLs []string `json:"sitemapUrls,omitempty"`
	// MaxDepth is how many links away from a start URL the crawl goes.
	MaxDepth *int `json:"maxDepth,omitempty"`
	// MaxPages bounds the pages requested in one crawl.
	MaxPages *int `json:"maxPages,omitempty"`
	// SameHost keeps the crawl on the hosts of the start and sitemap URLs.
	SameHost *bool `json:"sameHost,omitempty"`
	// Include, when set, lists only pages whose URL matches one of them.
	Include []string `json:"include,omitempty"`
	// Exclude skips pages whose URL matches one of them.
	Exclude []string `json:"exclude,omitempty"`
	// RespectRobots honours robots.txt and robots meta tags.
	RespectRobots *bool `json:"respectRobots,omitempty"`
	// RequestsPerSecond bounds the request rate per host.
	RequestsPerSecond *float64 `json:"requestsPerSecond,omitempty"`
	// UserAgent is sent with every request.
	UserAgent string `json:"userAgent,omitempty"`
	// AllowPrivateNetworks lets the crawl reach private, loopback and
	// link-local addresses.
	AllowPrivateNetworks bool `json:"allowPrivateNetworks,omitempty"`
}

// settings is a validated configuration with its defaults applied and its
// patterns compiled.
type settings struct {
	starts        []*url.URL
	sitemaps      []*url.URL
	maxDepth      int
	maxPages      int
	sameHost      bool
	include       []*regexp.Regexp
	exclude       []*regexp.Regexp
	respectRobots bool
	rps           float64
	userAgent     string
	allowPrivate  bool
	// hosts are the hosts (host[:port]) of the start and sitemap URLs: the
	// crawl's scope when sameHost is set.
	hosts map[string]bool
}

// parseConfig decodes and checks raw. Every error is a
// *connector.ValidationError; none echoes a URL's credentials.
func (c *Connector) parseConfig(raw json.RawMessage) (*settings, error) {
	var cfg Config
	if err := connector.DecodeConfig(raw, &cfg); err != nil {
		return nil, err
	}
	var v connector.ValidationError
	s := &settings{
		maxDepth:      intOr(cfg.MaxDepth, DefaultMaxDepth),
		maxPages:      intOr(cfg.MaxPages, DefaultMaxPages),
		sameHost:      boolOr(cfg.SameHost, true),
		respectRobots: boolOr(cfg.RespectRobots, true),
		rps:           DefaultRequestsPerSecond,
		userAgent:     strings.TrimSpace(cfg.UserAgent),
		allowPrivate:  cfg.AllowPrivateNetworks,
		hosts:         map[string]bool{},
	}
	if cfg.RequestsPerSecond != nil {
		s.rps = *cfg.RequestsPerSecond
	}
	if len(cfg.StartURLs) == 0 {
		v.Add("/startUrls", "is required: list at least one http or https URL to start the crawl from")
	}
	if len(cfg.StartURLs) > maxURLs {
		v.Add("/startUrls", "lists %d URLs; at most %d are allowed", len(cfg.StartURLs), maxURLs)
	}
	if len(cfg.SitemapURLs) > maxURLs {
		v.Add("/sitemapUrls", "lists %d URLs; at most %d are allowed", len(cfg.SitemapURLs), maxURLs)
	}
	s.starts = c.checkURLs(&v, "/startUrls", cfg.StartURLs, s.allowPrivate)
	s.sitemaps = c.checkURLs(&v, "/sitemapUrls", cfg.SitemapURLs, s.allowPrivate)
	for _, u := range append(append([]*url.URL(nil), s.starts...), s.sitemaps...) {
		s.hosts[u.Host] = true
	}
	if s.maxDepth < 0 || s.maxDepth > maxMaxDepth {
		v.Add("/maxDepth", "must be between 0 (the start URLs only) and %d, not %d", maxMaxDepth, s.maxDepth)
	}
	if s.maxPages < 1 || s.maxPages > maxMaxPages {
		v.Add("/maxPages", "must be between 1 and %d, not %d", maxMaxPages, s.maxPages)
	}
	if !(s.rps > 0) || s.rps > maxRequestsPerSecond {
		v.Add("/requestsPerSecond", "must be more than 0 and at most %g, not %g", maxRequestsPerSecond, s.rps)
	}
	switch {
	case len(s.userAgent) > maxUserAgent:
		v.Add("/userAgent", "is %d characters long; at most %d are allowed", len(s.userAgent), maxUserAgent)
	case strings.ContainsAny(s.userAgent, "\r\n\x00"):
		v.Add("/userAgent", "must be a single line")
	case s.userAgent == "":
		s.userAgent = c.userAgent
	}
	s.include = compilePatterns(&v, "/include", cfg.Include)
	s.exclude = compilePatterns(&v, "/exclude", cfg.Exclude)
	for i, u := range s.starts {
		if s.excluded(u.String()) {
			v.Add(fmt.Sprintf("/startUrls/%d", i), "%s is excluded by the exclude patterns, so the crawl could not start there", u)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// checkURLs parses absolute http(s) URLs, recording a problem for each that
// is not one.
func (c *Connector) checkURLs(v *connector.ValidationError, field string, raw []string, allowPrivate bool) []*url.URL {
	var out []*url.URL
	for i, r := range raw {
		f := fmt.Sprintf("%s/%d", field, i)
		u, err := url.Parse(strings.TrimSpace(r))
		switch {
		case err != nil:
			// url's error quotes the whole URL; say less, in case it holds
			// credentials.
			v.Add(f, "is not a valid URL")
			continue
		case u.User != nil:
			v.Add(f, "must not contain credentials (user:password@); the crawler reads public pages only")
			continue
		case u.Scheme != "http" && u.Scheme != "https":
			v.Add(f, "must be an absolute http or https URL, not %q", r)
			continue
		case u.Hostname() == "":
			v.Add(f, "has no host: %q", r)
			continue
		}
		n := normalize(u)
		if addr, err := netip.ParseAddr(n.Hostname()); err == nil && !allowPrivate && !c.guard.allowed(addr) {
			v.Add(f, "%s", (&PrivateAddressError{Addr: addr, Host: n.Host}).reason())
			continue
		}
		out = append(out, n)
	}
	return out
}

func compilePatterns(v *connector.ValidationError, field string, raw []string) []*regexp.Regexp {
	if len(raw) > maxPatterns {
		v.Add(field, "lists %d patterns; at most %d are allowed", len(raw), maxPatterns)
		return nil
	}
	var out []*regexp.Regexp
	for i, p := range raw {
		re, err := regexp.Compile(p)
		if err != nil {
			v.Add(fmt.Sprintf("%s/%d", field, i), "is not a valid regular expression (Go RE2 syntax): %v", err)
			continue
		}
		out = append(out, re)
	}
	return out
}

// excluded reports whether an exclude pattern matches u.
func (s *settings) excluded(u string) bool {
	for _, re := range s.exclude {
		if re.MatchString(u) {
			return true
		}
	}
	return false
}

// included reports whether the page at u is listed as an item: it matches
// an include pattern (or there are none) and no exclude pattern.
func (s *settings) included(u string) bool {
	if s.excluded(u) {
		return false
	}
	if len(s.include) == 0 {
		return true
	}
	for _, re := range s.include {
		if re.MatchString(u) {
			return true
		}
	}
	return false
}

// inScope reports whether the crawl may request u at all: http(s), on an
// allowed host when sameHost is set, and not excluded.
func (s *settings) inScope(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	if s.sameHost && !s.hosts[u.Host] {
		return false
	}
	return !s.excluded(u.String())
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// configSchema is the JSON Schema that Describe returns. The crawler has no
// secrets, so no property is writeOnly.
const configSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["startUrls"],
  "properties": {
    "startUrls": {
      "type": "array", "minItems": 1, "maxItems": 1000,
      "items": {"type": "string", "format": "uri"},
      "description": "Absolute http or https URLs where the crawl begins (depth 0)."
    },
    "sitemapUrls": {
      "type": "array", "maxItems": 1000,
      "items": {"type": "string", "format": "uri"},
      "description": "Sitemaps or sitemap indexes (XML, optionally gzipped); the pages they list are crawled like start URLs."
    },
    "maxDepth": {
      "type": "integer", "minimum": 0, "maximum": 100, "default": 2,
      "description": "How many links away from a start URL or sitemap entry the crawl follows; 0 crawls only those pages."
    },
    "maxPages": {
      "type": "integer", "minimum": 1, "maximum": 1000000, "default": 1000,
      "description": "The most pages requested in one crawl (robots.txt and sitemaps not counted); pages past the limit are not listed."
    },
    "sameHost": {
      "type": "boolean", "default": true,
      "description": "Stay on the hosts of the start and sitemap URLs; links and redirects to other hosts are not followed."
    },
    "include": {
      "type": "array", "maxItems": 100, "items": {"type": "string", "format": "regex"},
      "description": "Regular expressions (Go RE2) matched against a page's absolute URL; when set, only matching pages are listed. Other pages are still crawled for links."
    },
    "exclude": {
      "type": "array", "maxItems": 100, "items": {"type": "string", "format": "regex"},
      "description": "Regular expressions (Go RE2) matched against a URL; matching pages are neither requested nor listed."
    },
    "respectRobots": {
      "type": "boolean", "default": true,
      "description": "Honour robots.txt (rules and Crawl-delay for the user agent) and robots meta tags (noindex, nofollow)."
    },
    "requestsPerSecond": {
      "type": "number", "exclusiveMinimum": 0, "maximum": 1000, "default": 2,
      "description": "The most requests per second sent to one host (a larger robots.txt Crawl-delay wins)."
    },
    "userAgent": {
      "type": "string", "maxLength": 200,
      "description": "The User-Agent header, also used to pick the robots.txt group; default docindex-webcrawl/<version>."
    },
    "allowPrivateNetworks": {
      "type": "boolean", "default": false,
      "description": "Allow private, loopback and link-local addresses (checked on the resolved address of every connection, redirects included). Off, such addresses are refused."
    }
  }
}`
