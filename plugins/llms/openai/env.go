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

// DefaultEnvPrefix starts the names of the plugin's environment variables. It differs from the
// OpenAI embedder's DOCINDEX_OPENAI_ so that the two plugins' model lists never mix.
const DefaultEnvPrefix = "DOCINDEX_LLM_OPENAI_"

// EnvPrefixFor returns the environment prefix of a plugin binary: DOCINDEX_LLM_ and the
// provider part of its name, so that a copy of the binary named docindex-llm-ollama reads
// DOCINDEX_LLM_OLLAMA_* and two servers can be used side by side.
func EnvPrefixFor(executable string) string {
	kind, name, ok := plugins.ParseName(filepath.Base(executable))
	if !ok || kind != plugins.KindLLM {
		return DefaultEnvPrefix
	}
	return "DOCINDEX_LLM_" + strings.ToUpper(strings.NewReplacer("-", "_").Replace(name)) + "_"
}

// defaultModels are offered on OpenAI's own API when no models are configured.
var defaultModels = []Model{
	{ID: "gpt-4o-mini", Vision: true, ContextTokens: 128000},
	{ID: "gpt-4o", Vision: true, ContextTokens: 128000},
}

// FromEnv returns a provider configured from the environment variables that start with prefix
// (here DOCINDEX_LLM_OPENAI_):
//
//	DOCINDEX_LLM_OPENAI_BASE_URL           default https://api.openai.com/v1
//	DOCINDEX_LLM_OPENAI_API_KEY            (OPENAI_API_KEY too, for OpenAI itself)
//	DOCINDEX_LLM_OPENAI_MODELS             comma-separated names ("llama3.1:8b,qwen2.5:14b"), or a JSON
//	                                       array of {"id","name","vision","contextTokens"}
//	DOCINDEX_LLM_OPENAI_VISION_MODELS      comma-separated names of models that accept images; they are
//	                                       offered too if MODELS does not list them
//	DOCINDEX_LLM_OPENAI_STRUCTURED_OUTPUT  json_schema (default), json_object or prompt
//	DOCINDEX_LLM_OPENAI_MAX_TOKENS_PARAM   max_completion_tokens (default for OpenAI and Azure) or max_tokens
//	DOCINDEX_LLM_OPENAI_IMAGE_DETAIL       low, high or auto
//	DOCINDEX_LLM_OPENAI_TIMEOUT            per request, e.g. 120s
//	DOCINDEX_LLM_OPENAI_MAX_RETRIES        retries of a failed request
//
// Without models, gpt-4o-mini and gpt-4o are offered when the base URL is OpenAI's and a key is
// set. A wrong setting does not stop the plugin: its calls fail with an error that names the
// variable.
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
	get := func(name string) string { return strings.TrimSpace(getenv(prefix + name)) }

	base := get("BASE_URL")
	if base != "" {
		opts = append(opts, WithBaseURL(base))
	}
	openAI := base == "" || strings.TrimRight(base, "/") == DefaultBaseURL
	key := get("API_KEY")
	if key == "" && openAI {
		key = strings.TrimSpace(getenv("OPENAI_API_KEY"))
	}
	if key != "" {
		opts = append(opts, WithAPIKey(key))
	}

	models, err := parseModels(get("MODELS"))
	if err != nil {
		bad("MODELS", err)
	}
	for _, name := range splitList(get("VISION_MODELS")) {
		i := -1
		for j, m := range models {
			if m.ID == name {
				i = j
			}
		}
		if i < 0 {
			models = append(models, Model{ID: name, Vision: true})
		} else {
			models[i].Vision = true
		}
	}
	if len(models) == 0 && err == nil && key != "" && openAI {
		models = append(models, defaultModels...)
	}
	opts = append(opts, WithModels(models...))

	if v := get("STRUCTURED_OUTPUT"); v != "" {
		switch mode := StructuredOutput(v); mode {
		case SchemaJSON, SchemaJSONObject, SchemaPrompt:
			opts = append(opts, WithStructuredOutput(mode))
		default:
			bad("STRUCTURED_OUTPUT", fmt.Errorf("%q is not json_schema, json_object or prompt", v))
		}
	}
	if v := get("MAX_TOKENS_PARAM"); v != "" {
		if v != "max_tokens" && v != "max_completion_tokens" {
			bad("MAX_TOKENS_PARAM", fmt.Errorf("%q is not max_tokens or max_completion_tokens", v))
		} else {
			opts = append(opts, WithMaxTokensParam(v))
		}
	}
	if v := get("IMAGE_DETAIL"); v != "" {
		if v != "low" && v != "high" && v != "auto" {
			bad("IMAGE_DETAIL", fmt.Errorf("%q is not low, high or auto", v))
		} else {
			opts = append(opts, WithImageDetail(v))
		}
	}
	if v := get("MAX_RETRIES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			bad("MAX_RETRIES", fmt.Errorf("%q is not a whole number >= 0", v))
		} else {
			opts = append(opts, func(p *Provider) { p.backoff.Retries = n })
		}
	}
	if v := get("TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			bad("TIMEOUT", fmt.Errorf("%q is not a duration such as 120s", v))
		} else {
			opts = append(opts, WithTimeout(d))
		}
	}
	if len(errs) > 0 {
		return opts, fmt.Errorf("openai llm: %w: %w", errors.Join(errs...), plugins.ErrNotReady)
	}
	return opts, nil
}

func splitList(v string) []string {
	var out []string
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// parseModels reads the MODELS setting: a JSON array, or names separated by commas.
func parseModels(v string) ([]Model, error) {
	if v == "" {
		return nil, nil
	}
	var models []Model
	if strings.HasPrefix(v, "[") {
		dec := json.NewDecoder(strings.NewReader(v))
		dec.DisallowUnknownFields() // a misspelt "vison" would silently turn vision off
		if err := dec.Decode(&models); err != nil {
			return nil, fmt.Errorf("not a JSON array of models {\"id\",\"name\",\"vision\",\"contextTokens\"}: %w", err)
		}
	} else {
		for _, name := range splitList(v) {
			models = append(models, Model{ID: name})
		}
	}
	seen := map[string]bool{}
	for i, m := range models {
		switch {
		case strings.TrimSpace(m.ID) == "":
			return nil, fmt.Errorf("model %d has no id", i+1)
		case seen[m.ID]:
			return nil, fmt.Errorf("model %q listed twice", m.ID)
		case m.ContextTokens < 0:
			return nil, fmt.Errorf("model %q: negative context window", m.ID)
		}
		seen[m.ID] = true
	}
	return models, nil
}
