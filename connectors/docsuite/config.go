package docsuite

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/docindex/docindex/plugins/connector"
)

// Flavours of document suite.
const (
	FlavorConfluence = "confluence"
	FlavorMediaWiki  = "mediawiki"
)

// Confluence deployments: they speak different REST APIs.
const (
	DeploymentCloud      = "cloud"
	DeploymentDataCenter = "datacenter"
)

// MinWebhookSecret is the shortest webhookSecret accepted: a guessable
// secret would let anyone trigger syncs.
const MinWebhookSecret = 16

// Config is a docsuite source's configuration, as its JSON keys say.
type Config struct {
	// Flavor is FlavorConfluence or FlavorMediaWiki.
	Flavor string `json:"flavor"`
	// BaseURL is the suite's address: the Confluence site
	// ("https://example.atlassian.net", "https://wiki.example.com/confluence")
	// or the MediaWiki script path, the directory of api.php
	// ("https://wiki.example.org/w").
	BaseURL string `json:"baseUrl"`
	// Deployment is DeploymentCloud or DeploymentDataCenter (Confluence
	// only); empty means cloud for *.atlassian.net hosts, else datacenter.
	Deployment string `json:"deployment,omitempty"`
	// Spaces are Confluence space keys; empty means every space the
	// credentials can read.
	Spaces []string `json:"spaces,omitempty"`
	// Namespaces are MediaWiki namespace ids; empty means [0], the main
	// namespace.
	Namespaces []int `json:"namespaces,omitempty"`
	// Username and APIToken authenticate (see the schema for each flavour).
	Username string `json:"username,omitempty"`
	APIToken string `json:"apiToken,omitempty"`
	// WebhookSecret verifies pushed change notifications (ParseEvent).
	WebhookSecret string `json:"webhookSecret,omitempty"`
	// IncludeAttachments adds Confluence page attachments as items.
	IncludeAttachments bool `json:"includeAttachments,omitempty"`
}

// configSchema is the JSON Schema Describe returns. Its keys are public API.
const configSchema = `{
  "type": "object",
  "required": ["flavor", "baseUrl"],
  "additionalProperties": false,
  "properties": {
    "flavor": {
      "type": "string",
      "enum": ["confluence", "mediawiki"],
      "description": "Which document suite the source reads: 'confluence' (Confluence Cloud REST v2 or Confluence Data Center REST) or 'mediawiki' (the MediaWiki action API)."
    },
    "baseUrl": {
      "type": "string",
      "format": "uri",
      "description": "Address of the suite. Confluence: the site, e.g. https://example.atlassian.net or https://wiki.example.com/confluence. MediaWiki: the script path, the directory holding api.php, e.g. https://wiki.example.org/w. Credentials go in username and apiToken, never in the URL."
    },
    "deployment": {
      "type": "string",
      "enum": ["cloud", "datacenter"],
      "description": "Confluence only: 'cloud' (REST v2 under /wiki/api/v2) or 'datacenter' (Server and Data Center REST under /rest/api). Default: cloud for hosts ending in .atlassian.net, datacenter otherwise."
    },
    "spaces": {
      "type": "array",
      "items": {"type": "string"},
      "uniqueItems": true,
      "description": "Confluence only: keys of the spaces whose pages are indexed, e.g. [\"DOCS\", \"~jdoe\"]. Empty: every space the credentials can read. A listed space that does not exist or cannot be read fails the sync rather than deleting its pages."
    },
    "namespaces": {
      "type": "array",
      "items": {"type": "integer", "minimum": 0},
      "uniqueItems": true,
      "default": [0],
      "description": "MediaWiki only: ids of the namespaces whose pages are indexed (0 main, 2 User, 4 Project, 12 Help, ...). Redirect pages are skipped."
    },
    "username": {
      "type": "string",
      "description": "Confluence Cloud: the account's e-mail address, used with apiToken for basic authentication. Confluence Data Center: the user name for basic authentication with apiToken as password (leave empty to send apiToken as a personal access token). MediaWiki: a bot password's login name (User@appid, from Special:BotPasswords; leave empty to send apiToken as an OAuth 2 access token). Empty together with apiToken: anonymous access."
    },
    "apiToken": {
      "type": "string",
      "writeOnly": true,
      "description": "Secret credential: a Confluence Cloud API token, a Confluence Data Center password or personal access token, or a MediaWiki bot password or OAuth 2 access token (see username)."
    },
    "webhookSecret": {
      "type": "string",
      "writeOnly": true,
      "minLength": 16,
      "description": "Shared secret for change notifications pushed to POST /api/sources/{id}/events: the sender signs the body with HMAC-SHA256 (header X-Hub-Signature or X-Hub-Signature-256, 'sha256=<hex>', as Confluence Data Center webhooks do) or sends the secret itself in the X-Docindex-Webhook-Secret header. Empty: pushed notifications are refused. At least 16 characters."
    },
    "includeAttachments": {
      "type": "boolean",
      "default": false,
      "description": "Confluence only: also index the files attached to the pages (PDF, Office documents, ...), with the access list of their page."
    }
  }
}`

// ParseConfig decodes and validates a configuration and fills in its
// defaults. Errors are *connector.ValidationError.
func ParseConfig(raw json.RawMessage) (Config, error) {
	var cfg Config
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] != '{' {
		var v connector.ValidationError
		v.Add("", "the configuration must be a JSON object")
		return Config{}, &v
	}
	if err := connector.DecodeConfig(raw, &cfg); err != nil {
		return Config{}, err
	}
	if err := cfg.validate(); err != nil {
		return Config{}, err
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	switch cfg.Flavor {
	case FlavorConfluence:
		if cfg.Deployment == "" {
			cfg.Deployment = DeploymentDataCenter
			if u, err := url.Parse(cfg.BaseURL); err == nil && strings.HasSuffix(strings.ToLower(u.Hostname()), ".atlassian.net") {
				cfg.Deployment = DeploymentCloud
			}
		}
	case FlavorMediaWiki:
		if len(cfg.Namespaces) == 0 {
			cfg.Namespaces = []int{0}
		}
		// api.php or index.php in the URL is a common slip: the script
		// path is what is meant.
		for _, script := range []string{"/api.php", "/index.php"} {
			cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, script)
		}
	}
	return cfg, nil
}

// validate checks everything that can be checked without contacting the
// suite. Messages never repeat secret values.
func (c Config) validate() error {
	var v connector.ValidationError
	confluence := c.Flavor == FlavorConfluence
	mediawiki := c.Flavor == FlavorMediaWiki
	switch {
	case c.Flavor == "":
		v.Add("/flavor", "is required: 'confluence' or 'mediawiki'")
	case !confluence && !mediawiki:
		v.Add("/flavor", "must be 'confluence' or 'mediawiki', not %q", c.Flavor)
	}
	validateBaseURL(&v, c.BaseURL)

	if c.Deployment != "" {
		switch {
		case !confluence:
			v.Add("/deployment", "applies to the confluence flavor only")
		case c.Deployment != DeploymentCloud && c.Deployment != DeploymentDataCenter:
			v.Add("/deployment", "must be 'cloud' or 'datacenter', not %q", c.Deployment)
		}
	}
	if len(c.Spaces) > 0 && !confluence {
		v.Add("/spaces", "applies to the confluence flavor only (MediaWiki sources select namespaces)")
	}
	for i, key := range c.Spaces {
		switch {
		case strings.TrimSpace(key) == "":
			v.Add(pointer("/spaces", i), "is empty")
		case strings.ContainsAny(key, ", \t\r\n/?#&"):
			v.Add(pointer("/spaces", i), "%q is not a space key (letters and digits, '~' for personal spaces)", key)
		case slices.Index(c.Spaces, key) != i:
			v.Add(pointer("/spaces", i), "%q is listed twice", key)
		}
	}
	if len(c.Namespaces) > 0 && !mediawiki {
		v.Add("/namespaces", "applies to the mediawiki flavor only (Confluence sources select spaces)")
	}
	for i, ns := range c.Namespaces {
		switch {
		case ns < 0:
			v.Add(pointer("/namespaces", i), "%d is a virtual namespace (Special or Media) without pages; use 0 or more", ns)
		case slices.Index(c.Namespaces, ns) != i:
			v.Add(pointer("/namespaces", i), "%d is listed twice", ns)
		}
	}
	if c.IncludeAttachments && !confluence {
		v.Add("/includeAttachments", "applies to the confluence flavor only")
	}

	switch {
	case c.Username != "" && c.APIToken == "":
		v.Add("/apiToken", "is required when username is set")
	case c.Username == "" && c.APIToken != "" && confluence && c.deploymentOrDefault() == DeploymentCloud:
		v.Add("/username", "is required with apiToken on Confluence Cloud: the e-mail address of the token's account")
	}
	if strings.ContainsAny(c.Username, "\r\n") {
		v.Add("/username", "must be a single line")
	}
	if c.WebhookSecret != "" && len(c.WebhookSecret) < MinWebhookSecret {
		v.Add("/webhookSecret", "must be at least %d characters long", MinWebhookSecret)
	}
	return v.Err()
}

func (c Config) deploymentOrDefault() string {
	if c.Deployment != "" {
		return c.Deployment
	}
	if u, err := url.Parse(c.BaseURL); err == nil && strings.HasSuffix(strings.ToLower(u.Hostname()), ".atlassian.net") {
		return DeploymentCloud
	}
	return DeploymentDataCenter
}

func validateBaseURL(v *connector.ValidationError, raw string) {
	if strings.TrimSpace(raw) == "" {
		v.Add("/baseUrl", "is required")
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		// url.Parse's message quotes the input, which may hold a password.
		v.Add("/baseUrl", "is not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https":
		v.Add("/baseUrl", "must be an absolute http or https URL")
	case u.Host == "":
		v.Add("/baseUrl", "has no host")
	case u.User != nil:
		v.Add("/baseUrl", "must not contain credentials: put them in username and apiToken")
	case u.RawQuery != "" || u.Fragment != "":
		v.Add("/baseUrl", "must not have a query or fragment")
	}
}

func pointer(field string, i int) string {
	return field + "/" + strconv.Itoa(i)
}
