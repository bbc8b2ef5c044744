package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docindex/docindex/plugins"
)

// DefaultEnvPrefix starts the names of the plugin's environment variables.
const DefaultEnvPrefix = "DOCINDEX_OPENAI_"

// EnvPrefixFor returns the environment prefix of a plugin binary: the
// provider part of its name, so that a copy of the binary named
// docindex-embedder-ollama reads DOCINDEX_OLLAMA_* and two servers can be
// used side by side.
func EnvPrefixFor(executable string) string {
	_, name, ok := plugins.ParseName(filepath.Base(executable))
	if !ok {
		return DefaultEnvPrefix
	}
	return "DOCINDEX_" + strings.ToUpper(strings.NewReplacer("-", "_").Replace(name)) + "_"
}

// FromEnv returns a provider configured from the environment variables that
// start with prefix (here DOCINDEX_OPENAI_):
//
//	DOCINDEX_OPENAI_BASE_URL           default https://api.openai.com/v1
//	DOCINDEX_OPENAI_API_KEY            (OPENAI_API_KEY too, for OpenAI itself)
//	DOCINDEX_OPENAI_MODELS             comma-separated names ("text-embedding-3-small,nomic-embed-text:latest"),
//	                                   or a JSON array of {"id","name","dimensions","shorten","maxInputTokens"}
//	DOCINDEX_OPENAI_MAX_BATCH          texts per request
//	DOCINDEX_OPENAI_MAX_REQUEST_BYTES  bytes of text per request
//	DOCINDEX_OPENAI_TIMEOUT            per request, e.g. 60s
//	DOCINDEX_OPENAI_MAX_RETRIES        retries of a failed request
//	DOCINDEX_OPENAI_ENCODING           base64 (default) or float: how vectors are asked for
//
// Without models, OpenAI's text-embedding-3-small and -large are offered
// when the base URL is OpenAI's and a key is set. A wrong setting does not
// stop the plugin: its calls fail with an error that names the variable.
func FromEnv(prefix string) *Provider {
	opts, err := optionsFromEnv(prefix, os.Getenv)
	if err != nil {
		opts = append(opts, withConfigError(err))
	}
	opts = append(opts, func(p *Provider) { p.envPrefix = prefix })
	return New(opts...)
}

func optionsFromEnv(prefix string, getenv func(string) string) ([]Option, error) {
	var opts []Option
	var errs []error
	bad := func(name string, err error) {
		errs = append(errs, fmt.Errorf("%s%s: %w", prefix, name, err))
	}
	base := strings.TrimSpace(getenv(prefix + "BASE_URL"))
	if base != "" {
		opts = append(opts, WithBaseURL(base))
	}
	key := strings.TrimSpace(getenv(prefix + "API_KEY"))
	if key == "" && (base == "" || strings.TrimRight(base, "/") == DefaultBaseURL) {
		key = strings.TrimSpace(getenv("OPENAI_API_KEY"))
	}
	if key != "" {
		opts = append(opts, WithAPIKey(key))
	}
	models, err := parseModels(getenv(prefix + "MODELS"))
	switch {
	case err != nil:
		bad("MODELS", err)
	case len(models) == 0 && key != "" && (base == "" || strings.TrimRight(base, "/") == DefaultBaseURL):
		models = []Model{{ID: "text-embedding-3-small"}, {ID: "text-embedding-3-large"}}
	}
	opts = append(opts, WithModels(models...))

	ints := map[string]func(int) Option{
		"MAX_BATCH":         WithMaxBatch,
		"MAX_REQUEST_BYTES": WithMaxRequestBytes,
		"MAX_RETRIES": func(n int) Option {
			return func(p *Provider) { p.backoff.Retries = n }
		},
	}
	for _, name := range []string{"MAX_BATCH", "MAX_REQUEST_BYTES", "MAX_RETRIES"} {
		v := strings.TrimSpace(getenv(prefix + name))
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || (n == 0 && name != "MAX_RETRIES") {
			bad(name, fmt.Errorf("%q is not a positive whole number", v))
			continue
		}
		opts = append(opts, ints[name](n))
	}
	if v := strings.TrimSpace(getenv(prefix + "TIMEOUT")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			bad("TIMEOUT", fmt.Errorf("%q is not a duration such as 60s", v))
		} else {
			opts = append(opts, WithTimeout(d))
		}
	}
	if v := strings.TrimSpace(getenv(prefix + "ENCODING")); v != "" {
		if v != EncodingBase64 && v != EncodingFloat {
			bad("ENCODING", fmt.Errorf("%q is neither %s nor %s", v, EncodingBase64, EncodingFloat))
		} else {
			opts = append(opts, WithEncoding(v))
		}
	}
	if len(errs) > 0 {
		return opts, fmt.Errorf("openai embedder: %w: %w", errors.Join(errs...), plugins.ErrNotReady)
	}
	return opts, nil
}

// parseModels reads the MODELS setting: a JSON array, or names separated by
// commas.
func parseModels(v string) ([]Model, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	var models []Model
	if strings.HasPrefix(v, "[") {
		if err := json.Unmarshal([]byte(v), &models); err != nil {
			return nil, fmt.Errorf("not a JSON array of models: %w", err)
		}
	} else {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				models = append(models, Model{ID: name})
			}
		}
	}
	seen := map[string]bool{}
	for i, m := range models {
		switch {
		case m.ID == "":
			return nil, fmt.Errorf("model %d has no id", i+1)
		case seen[m.ID]:
			return nil, fmt.Errorf("model %q listed twice", m.ID)
		case m.Dimensions < 0 || m.MaxInputTokens < 0:
			return nil, fmt.Errorf("model %q: negative limits", m.ID)
		case m.Shorten && m.Dimensions == 0:
			return nil, fmt.Errorf("model %q: shorten needs dimensions", m.ID)
		}
		seen[m.ID] = true
	}
	return models, nil
}
