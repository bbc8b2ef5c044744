package git

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/docindex/docindex/plugins/connector"
)

// DefaultMaxFileSize is the largest file indexed when maxFileSize is not set.
const DefaultMaxFileSize = 50 << 20

// Config is a git source's configuration, as its JSON keys say.
type Config struct {
	// URL is the repository's HTTP(S) clone URL.
	URL string `json:"url"`
	// Branch is the branch to index; empty means the remote's HEAD.
	Branch string `json:"branch,omitempty"`
	// Include and Exclude are path globs (see Match).
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// Username and Token are HTTP basic credentials.
	Username string `json:"username,omitempty"`
	Token    string `json:"token,omitempty"`
	// WebURLTemplate builds an item's web URL from placeholders.
	WebURLTemplate string `json:"webUrlTemplate,omitempty"`
	// MaxFileSize skips larger files (bytes); nil means DefaultMaxFileSize.
	MaxFileSize *int64 `json:"maxFileSize,omitempty"`
}

// configSchema is the JSON Schema Describe returns. Its keys are public API.
const configSchema = `{
  "type": "object",
  "required": ["url"],
  "additionalProperties": false,
  "properties": {
    "url": {
      "type": "string",
      "format": "uri",
      "description": "HTTP(S) clone URL of the repository, e.g. https://git.example.com/team/docs.git. Credentials go in username and token, never in the URL."
    },
    "branch": {
      "type": "string",
      "description": "Branch to index. Empty: the branch the remote's HEAD points to (its default branch)."
    },
    "include": {
      "type": "array",
      "items": {"type": "string"},
      "description": "Path globs of the files to index; empty: every file. '*', '?' and '[...]' (negated with '[!...]' or '[^...]') stay within one path segment, '**' spans any number of segments, a pattern without '/' matches a file or directory name at any depth ('*.md'), a leading '/' anchors it at the repository root, and a pattern that matches a directory matches everything below it ('docs')."
    },
    "exclude": {
      "type": "array",
      "items": {"type": "string"},
      "description": "Path globs of files to leave out, even if included; same syntax as include (e.g. 'vendor', '**/testdata/**')."
    },
    "username": {
      "type": "string",
      "description": "User name for HTTP basic authentication; requires token. Default with a token: 'git' (any name works on GitHub, GitLab with a personal access token, Gitea; Bitbucket Cloud wants 'x-token-auth', GitLab OAuth tokens 'oauth2')."
    },
    "token": {
      "type": "string",
      "writeOnly": true,
      "description": "Access token or password, sent as the password of HTTP basic authentication."
    },
    "webUrlTemplate": {
      "type": "string",
      "description": "Template of the URL where a person views a file, e.g. https://git.example.com/team/docs/blob/{commit}/{path}. Placeholders: {commit} (full commit hash of the synced head), {branch} (branch name) and {path} (file path), both with each segment URL-escaped and slashes kept, {blob} (the file's blob hash). Without it items have no web URL."
    },
    "maxFileSize": {
      "type": "integer",
      "minimum": 1,
      "default": 52428800,
      "description": "Largest file, in bytes, that is indexed; larger files are skipped."
    }
  }
}`

// placeholders are the names webUrlTemplate may use.
var placeholders = []string{"commit", "branch", "path", "blob"}

// parseConfig decodes and validates a configuration. Errors are
// *connector.ValidationError; their messages never contain the token.
func parseConfig(raw json.RawMessage) (Config, error) {
	var cfg Config
	if err := connector.DecodeConfig(raw, &cfg); err != nil {
		return cfg, err
	}
	var v connector.ValidationError
	cfg.URL = strings.TrimSpace(cfg.URL)
	if cfg.URL == "" {
		v.Add("/url", "is required")
	} else if msg := checkURL(cfg.URL); msg != "" {
		v.Add("/url", "%s", msg)
	}
	cfg.Branch = strings.TrimPrefix(strings.TrimSpace(cfg.Branch), "refs/heads/")
	if cfg.Branch != "" {
		if msg := checkBranch(cfg.Branch); msg != "" {
			v.Add("/branch", "%s", msg)
		}
	}
	for i, p := range cfg.Include {
		if err := checkPattern(p); err != nil {
			v.Add("/include/"+strconv.Itoa(i), "%v", err)
		}
	}
	for i, p := range cfg.Exclude {
		if err := checkPattern(p); err != nil {
			v.Add("/exclude/"+strconv.Itoa(i), "%v", err)
		}
	}
	if cfg.Username != "" && cfg.Token == "" {
		v.Add("/token", "is required when username is set")
	}
	if strings.ContainsAny(cfg.Username, ":\r\n") {
		v.Add("/username", "must not contain ':' or line breaks")
	}
	if strings.ContainsAny(cfg.Token, "\r\n") {
		v.Add("/token", "must not contain line breaks")
	}
	if cfg.WebURLTemplate != "" {
		if msg := checkTemplate(cfg.WebURLTemplate); msg != "" {
			v.Add("/webUrlTemplate", "%s", msg)
		}
	}
	if cfg.MaxFileSize != nil && *cfg.MaxFileSize < 1 {
		v.Add("/maxFileSize", "must be at least 1")
	}
	return cfg, v.Err()
}

func checkURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error quotes the URL, which may hold credentials.
		return "is not a valid URL"
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an http:// or https:// URL (ssh, git:// and local paths are not supported)"
	case u.Host == "":
		return "has no host"
	case u.User != nil:
		return "must not contain credentials: set username and token instead"
	case u.Fragment != "":
		return "must not have a fragment"
	}
	return ""
}

// checkBranch applies the rules of git check-ref-format that matter for a
// branch name.
func checkBranch(b string) string {
	switch {
	case strings.HasPrefix(b, "-"), strings.HasPrefix(b, "/"), strings.HasSuffix(b, "/"),
		strings.HasSuffix(b, "."), strings.HasSuffix(b, ".lock"),
		strings.Contains(b, ".."), strings.Contains(b, "//"), strings.Contains(b, "@{"),
		strings.ContainsAny(b, " ~^:?*[\\\x7f"):
		return "is not a valid branch name"
	}
	for _, r := range b {
		if r < 0x20 {
			return "is not a valid branch name"
		}
	}
	return ""
}

func checkTemplate(t string) string {
	rest := t
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return "has an unclosed '{'"
		}
		name := rest[i+1 : i+j]
		known := false
		for _, p := range placeholders {
			known = known || p == name
		}
		if !known {
			return fmt.Sprintf("unknown placeholder {%s} (known: {commit}, {branch}, {path}, {blob})", name)
		}
		rest = rest[i+j+1:]
	}
	if !strings.Contains(t, "{path}") {
		return "must contain {path}"
	}
	example := expand(t, "0123456789abcdef0123456789abcdef01234567", "main", "docs/a.md", "0123456789abcdef0123456789abcdef01234567")
	u, err := url.Parse(example)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must expand to an absolute http:// or https:// URL"
	}
	return ""
}

// expand fills a webUrlTemplate in.
func expand(t, commit, branch, filePath, blob string) string {
	return strings.NewReplacer(
		"{commit}", commit,
		"{branch}", escapeSegments(branch),
		"{path}", escapeSegments(filePath),
		"{blob}", blob,
	).Replace(t)
}

// escapeSegments escapes each segment of a slash-separated name and keeps
// the slashes, as web front ends expect in paths ("release/1.0/docs/a%20b.md").
func escapeSegments(name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func (c Config) maxFileSize() int64 {
	if c.MaxFileSize == nil {
		return DefaultMaxFileSize
	}
	return *c.MaxFileSize
}

// selects reports whether a file path passes the include and exclude globs.
func (c Config) selects(p string) bool {
	if len(c.Include) > 0 && !matchAny(c.Include, p) {
		return false
	}
	return !matchAny(c.Exclude, p)
}

// mirrorKey names the cache entry of a configuration. Credentials are part
// of it so that a source never reads through another source's credentials;
// they are hashed, so the key reveals nothing.
func (c Config) mirrorKey() string {
	h := sha256.Sum256([]byte(c.URL + "\x00" + c.Username + "\x00" + c.Token))
	return hex.EncodeToString(h[:16])
}

// scope fingerprints what decides which files a listing holds, so that a
// cursor taken under other filters is not used to send only a diff.
func (c Config) scope() string {
	b, _ := json.Marshal([]any{listingVersion, c.Include, c.Exclude, c.maxFileSize()})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// listingVersion changes when the rules that pick and type files change, so
// that old cursors lead to a full listing.
const listingVersion = 1

// repoLabel is the URL for messages: no query string, which might carry a
// token some servers accept there.
func repoLabel(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the repository"
	}
	u.RawQuery, u.User = "", nil
	return u.String()
}
