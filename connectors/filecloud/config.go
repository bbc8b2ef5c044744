package filecloud

import (
	"encoding/json"
	"net/url"
	"path"
	"strings"

	"github.com/docindex/docindex/plugins/connector"
)

// Providers.
const (
	ProviderWebDAV = "webdav"
	ProviderS3     = "s3"
)

// DefaultRegion is the S3 region when the configuration names none. Most
// S3-compatible gateways ignore the region but need one to sign requests.
const DefaultRegion = "us-east-1"

// Config is a filecloud source's configuration: the JSON object that comes
// with every call. Its keys are public API (see Describe's schema).
type Config struct {
	// Provider is "webdav" or "s3".
	Provider string `json:"provider"`
	// URL is the WebDAV base URL (required for webdav) or the S3 endpoint
	// (empty: AWS S3 in Region).
	URL string `json:"url,omitempty"`
	// Root is the WebDAV folder to read, relative to URL (default "/").
	Root string `json:"root,omitempty"`
	// Bucket is the S3 bucket (required for s3).
	Bucket string `json:"bucket,omitempty"`
	// Prefix is the S3 folder to read ("docs/"); a missing trailing slash
	// is added.
	Prefix string `json:"prefix,omitempty"`
	// Region is the S3 region (default DefaultRegion).
	Region string `json:"region,omitempty"`
	// PathStyle chooses path-style S3 addressing (endpoint/bucket/key);
	// nil: path style for a custom endpoint, virtual-host style for AWS.
	PathStyle *bool `json:"pathStyle,omitempty"`
	// Username and Password are the WebDAV credentials.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// AccessKeyID and SecretAccessKey are the S3 credentials; both empty:
	// anonymous requests (public buckets).
	AccessKeyID     string `json:"accessKeyId,omitempty"`
	SecretAccessKey string `json:"secretAccessKey,omitempty"`
	// Include and Exclude are path globs (see the package documentation).
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// settings is a validated configuration with its defaults applied.
type settings struct {
	Config
	base    *url.URL // URL parsed; nil for S3 on AWS
	root    string   // WebDAV: clean, absolute, no trailing slash except "/"
	prefix  string   // S3: "" or ending in "/"
	path    bool     // S3 path-style addressing
	filter  *filter
	secrets []string
}

// parse decodes and validates a configuration. Its errors are
// *connector.ValidationError.
func parse(raw json.RawMessage) (*settings, error) {
	var c Config
	if err := connector.DecodeConfig(raw, &c); err != nil {
		return nil, err
	}
	var v connector.ValidationError
	s := &settings{Config: c}
	switch c.Provider {
	case ProviderWebDAV:
		s.parseWebDAV(&v)
	case ProviderS3:
		s.parseS3(&v)
	case "":
		v.Add("/provider", `is required: "webdav" or "s3"`)
	default:
		v.Add("/provider", `must be "webdav" or "s3", not %q`, c.Provider)
	}
	f, problems := newFilter(c.Include, c.Exclude)
	for _, p := range problems {
		v.Add(p.Field, "%s", p.Message)
	}
	s.filter = f
	if err := v.Err(); err != nil {
		return nil, err
	}
	s.secrets = []string{c.Password, c.SecretAccessKey}
	return s, nil
}

func (s *settings) parseWebDAV(v *connector.ValidationError) {
	for _, f := range []field{
		{"/bucket", s.Bucket}, {"/prefix", s.Prefix}, {"/region", s.Region},
		{"/accessKeyId", s.AccessKeyID}, {"/secretAccessKey", s.SecretAccessKey},
	} {
		if f.value != "" {
			v.Add(f.name, "is only for provider s3")
		}
	}
	if s.PathStyle != nil {
		v.Add("/pathStyle", "is only for provider s3")
	}
	if s.URL == "" {
		v.Add("/url", "is required for provider webdav (the WebDAV base URL)")
	} else {
		s.base = checkURL(v, s.URL)
	}
	root := s.Root
	if !strings.HasPrefix(root, "/") {
		root = "/" + root
	}
	if hasDotDot(root) {
		v.Add("/root", "must not contain '..' segments")
	}
	s.root = path.Clean(root)
}

func (s *settings) parseS3(v *connector.ValidationError) {
	for _, f := range []field{{"/root", s.Root}, {"/username", s.Username}, {"/password", s.Password}} {
		if f.value != "" {
			v.Add(f.name, "is only for provider webdav")
		}
	}
	switch {
	case s.Bucket == "":
		v.Add("/bucket", "is required for provider s3")
	case len(s.Bucket) > 255 || strings.ContainsAny(s.Bucket, "/ \t\r\n"):
		v.Add("/bucket", "is not a bucket name (no '/' or spaces, at most 255 characters)")
	}
	if strings.HasPrefix(s.Prefix, "/") {
		v.Add("/prefix", "must not start with '/' (S3 keys have no leading slash)")
	}
	s.prefix = s.Prefix
	if s.prefix != "" && !strings.HasSuffix(s.prefix, "/") {
		s.prefix += "/"
	}
	if (s.AccessKeyID == "") != (s.SecretAccessKey == "") {
		v.Add("", "accessKeyId and secretAccessKey go together: give both, or neither for anonymous access")
	}
	if s.Region == "" {
		s.Region = DefaultRegion
	}
	if s.URL != "" {
		s.base = checkURL(v, s.URL)
	}
	switch {
	case s.PathStyle != nil:
		s.path = *s.PathStyle
	case s.base != nil:
		// Gateways (MinIO, Ceph, versitygw, Garage) answer path-style
		// requests without wildcard DNS; AWS wants virtual hosts.
		s.path = !strings.HasSuffix(s.base.Hostname(), ".amazonaws.com")
	}
}

// checkURL parses an absolute http(s) URL without credentials in it:
// passwords belong in the secret fields, where they are encrypted and
// never shown back.
func checkURL(v *connector.ValidationError, raw string) *url.URL {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		v.Add("/url", "is not a URL: %v", err)
		return nil
	case u.Scheme != "http" && u.Scheme != "https":
		v.Add("/url", "must be an absolute http:// or https:// URL")
		return nil
	case u.Host == "":
		v.Add("/url", "has no host")
		return nil
	case u.User != nil:
		v.Add("/url", "must not contain credentials; use the username/password or accessKeyId/secretAccessKey fields")
		return nil
	case u.RawQuery != "" || u.Fragment != "":
		v.Add("/url", "must not have a query or fragment")
		return nil
	}
	return u
}

// field is a configuration value with its JSON Pointer, for checks that
// run in a stable order.
type field struct{ name, value string }

func hasDotDot(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// schema is Describe's ConfigSchema.
const schema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["provider"],
  "properties": {
    "provider": {
      "type": "string",
      "enum": ["webdav", "s3"],
      "description": "Where the files are: \"webdav\" (Nextcloud, ownCloud, SharePoint and other WebDAV servers) or \"s3\" (AWS S3 or an S3-compatible bucket)."
    },
    "url": {
      "type": "string",
      "format": "uri",
      "description": "webdav: the WebDAV base URL (required), e.g. https://cloud.example.com/remote.php/dav/files/alice/. s3: the endpoint of an S3-compatible service, e.g. https://minio.example.com:9000; empty for AWS S3. Credentials never go in the URL."
    },
    "root": {
      "type": "string",
      "default": "/",
      "description": "webdav: the folder to read, relative to url; everything below it is listed."
    },
    "bucket": {
      "type": "string",
      "description": "s3: the bucket (required)."
    },
    "prefix": {
      "type": "string",
      "default": "",
      "description": "s3: the folder to read within the bucket, e.g. \"docs/\" (a trailing '/' is added); empty for the whole bucket."
    },
    "region": {
      "type": "string",
      "default": "us-east-1",
      "description": "s3: the region to sign requests for."
    },
    "pathStyle": {
      "type": "boolean",
      "description": "s3: address the bucket as endpoint/bucket/key (path style) rather than bucket.endpoint/key. Default: path style when url is set and is not an amazonaws.com host."
    },
    "username": {
      "type": "string",
      "description": "webdav: the user name (Basic or Digest authentication)."
    },
    "password": {
      "type": "string",
      "writeOnly": true,
      "description": "webdav: the password or app password. Secret: stored encrypted, never shown back."
    },
    "accessKeyId": {
      "type": "string",
      "description": "s3: the access key id; leave it and secretAccessKey empty for a public bucket."
    },
    "secretAccessKey": {
      "type": "string",
      "writeOnly": true,
      "description": "s3: the secret access key. Secret: stored encrypted, never shown back."
    },
    "include": {
      "type": "array",
      "items": {"type": "string"},
      "default": [],
      "description": "Path globs of the files to index, relative to root or prefix; empty: all files. '*' and '?' stay within a path segment, '**' spans segments; a pattern without '/' matches a file or folder name at any depth (\"*.pdf\"), one with '/' matches from the root (\"reports/**/*.md\"). A file is included when the pattern matches its path or one of its folders."
    },
    "exclude": {
      "type": "array",
      "items": {"type": "string"},
      "default": [],
      "description": "Path globs of files to leave out, same syntax as include; applied after include. A pattern matching a folder leaves out everything below it (\"archive\", \"tmp/**\")."
    }
  },
  "allOf": [
    {"if": {"properties": {"provider": {"const": "webdav"}}, "required": ["provider"]}, "then": {"required": ["url"]}},
    {"if": {"properties": {"provider": {"const": "s3"}}, "required": ["provider"]}, "then": {"required": ["bucket"]}}
  ]
}`
