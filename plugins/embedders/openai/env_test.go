package openai

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/internal/retry"
)

func fromMap(prefix string, env map[string]string) (*Provider, error) {
	opts, err := optionsFromEnv(prefix, func(k string) string { return env[k] })
	return New(opts...), err
}

func TestEnvPrefixFor(t *testing.T) {
	for in, want := range map[string]string{
		"/opt/plugins/docindex-embedder-openai": "DOCINDEX_OPENAI_",
		"docindex-embedder-my-ollama":           "DOCINDEX_MY_OLLAMA_",
		"openai.test":                           "DOCINDEX_OPENAI_",
	} {
		if got := EnvPrefixFor(in); got != want {
			t.Errorf("EnvPrefixFor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFromEnvOpenAIDefaults(t *testing.T) {
	p, err := fromMap(DefaultEnvPrefix, map[string]string{"OPENAI_API_KEY": "sk-1"})
	if err != nil {
		t.Fatal(err)
	}
	if p.apiKey != "sk-1" || p.baseURL != DefaultBaseURL || p.maxBatch != 2048 || len(p.models) != 2 || p.models[0].ID != "text-embedding-3-small" {
		t.Errorf("provider = %+v", p)
	}
}

func TestFromEnvOtherServer(t *testing.T) {
	p, err := fromMap("DOCINDEX_OLLAMA_", map[string]string{
		"DOCINDEX_OLLAMA_BASE_URL":          "http://127.0.0.1:11434/v1/",
		"DOCINDEX_OLLAMA_MODELS":            `[{"id":"nomic-embed-text","name":"nomic-embed-text:latest","dimensions":768,"maxInputTokens":2048}]`,
		"DOCINDEX_OLLAMA_MAX_BATCH":         "16",
		"DOCINDEX_OLLAMA_MAX_REQUEST_BYTES": "500000",
		"DOCINDEX_OLLAMA_TIMEOUT":           "2m",
		"DOCINDEX_OLLAMA_MAX_RETRIES":       "0",
		"DOCINDEX_OLLAMA_ENCODING":          "float",
		"OPENAI_API_KEY":                    "not for this server",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Model{ID: "nomic-embed-text", Name: "nomic-embed-text:latest", Dimensions: 768, MaxInputTokens: 2048}
	if p.apiKey != "" || p.baseURL != "http://127.0.0.1:11434/v1" || len(p.models) != 1 || p.models[0] != want ||
		p.maxBatch != 16 || p.maxBytes != 500000 || p.timeout != 2*time.Minute || p.backoff.Retries != 0 || p.encoding != EncodingFloat {
		t.Errorf("provider = %+v", p)
	}
	p, err = fromMap("P_", map[string]string{"P_BASE_URL": "http://h/v1", "P_MODELS": "a, b:latest ,"})
	if err != nil || len(p.models) != 2 || p.models[1].ID != "b:latest" || p.maxBatch != 32 || p.encoding != EncodingBase64 {
		t.Errorf("comma list: %+v %v", p.models, err)
	}
}

func TestFromEnvErrorsNameTheVariable(t *testing.T) {
	_, err := fromMap("P_", map[string]string{"P_MODELS": "[{oops", "P_MAX_BATCH": "many", "P_TIMEOUT": "soon", "P_ENCODING": "base85"})
	if !errors.Is(err, plugins.ErrNotReady) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"P_MODELS", "P_MAX_BATCH", "P_TIMEOUT", "P_ENCODING"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	t.Setenv("P_MODELS", `[{"id":"x","shorten":true}]`)
	_, err = FromEnv("P_").Models(context.Background())
	if !errors.Is(err, plugins.ErrNotReady) || !strings.Contains(err.Error(), "shorten needs dimensions") {
		t.Errorf("a plugin with a bad setting reports it: %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"2":                             2 * time.Second,
		"0.5":                           500 * time.Millisecond,
		"-1":                            0,
		"Sun, 22 Nov 2026 10:00:07 GMT": 7 * time.Second,
		"Sun, 22 Nov 2026 09:00:00 GMT": 0,
		"soon":                          0,
	} {
		if got := retry.ParseAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}
