package plugins

import (
	"strings"

	"github.com/hashicorp/go-plugin"
)

// SDKVersion is the version of this SDK. Plugins report it to the host so
// that `docindex plugins list` can show what a plugin was built against.
const SDKVersion = "1.0.0"

// The handshake cookie is not a secret: it only keeps a user from running a
// plugin binary by hand by mistake. It must never change, or every plugin
// built before the change stops loading; protocol changes are negotiated with
// go-plugin's VersionedPlugins instead.
const (
	MagicCookieKey   = "DOCINDEX_PLUGIN_MAGIC_COOKIE"
	MagicCookieValue = "f1c3a7d2-docindex-plugin-6b0e94c8"
)

// Kind is what a plugin offers. It is also the name under which go-plugin
// dispenses the plugin and the middle part of its executable's name.
type Kind string

const (
	KindEmbedder  Kind = "embedder"
	KindConnector Kind = "connector"
	// KindLLM is a language-model provider: chat completion with optional
	// images and JSON-Schema structured output (package plugins/llm).
	KindLLM Kind = "llm"
)

// Prefix is the start of the executable name of a plugin of kind k, for
// example "docindex-embedder-".
func (k Kind) Prefix() string { return "docindex-" + string(k) + "-" }

// ParseName splits an executable name such as "docindex-embedder-hash" into
// its kind and name. ok is false for anything that is not a plugin name.
func ParseName(file string) (kind Kind, name string, ok bool) {
	for _, k := range []Kind{KindEmbedder, KindConnector, KindLLM} {
		if rest, found := strings.CutPrefix(file, k.Prefix()); found && validName(rest) {
			return k, rest, true
		}
	}
	return "", "", false
}

// validName keeps names usable as catalog keys, in logs and in environment
// variable names: lower-case letters, digits, '-' and '_'.
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '-' || r == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}

// Handshake is the go-plugin handshake shared by hosts and plugins of every
// kind. The protocol version is left to VersionedPlugins.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}
