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
		"/opt/plugins/docindex-llm-openai": "DOCINDEX_LLM_OPENAI_",
		"docindex-llm-my-ollama":           "DOCINDEX_LLM_MY_OLLAMA_",
		"docindex-embedder-openai":         "DOCINDEX_LLM_OPENAI_",
		"openai.test":                      "DOCINDEX_LLM_OPENAI_",
		"/tmp/x/docindex-llm-vllm_gpu":     "DOCINDEX_LLM_VLLM_GPU_",
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
	if p.apiKey != "sk-1" || p.baseURL != DefaultBaseURL || p.maxTokensParam != "max_completion_tokens" || p.structured != SchemaJSON ||
		len(p.models) != 2 || p.models[0].ID != "gpt-4o-mini" || !p.models[0].Vision || p.timeout != 120*time.Second || p.backoff.Retries != 5 {
		t.Errorf("provider = %+v", p)
	}
	// Without a key there is nothing to offer.
	p, _ = fromMap(DefaultEnvPrefix, map[string]string{})
	if _, err := p.Models(context.Background()); !errors.Is(err, plugins.ErrNotReady) {
		t.Errorf("no key: %v", err)
	}
}

func TestFromEnvOtherServer(t *testing.T) {
	p, err := fromMap("DOCINDEX_LLM_OLLAMA_", map[string]string{
		"DOCINDEX_LLM_OLLAMA_BASE_URL":          "http://127.0.0.1:11434/v1/",
		"DOCINDEX_LLM_OLLAMA_MODELS":            `[{"id":"llama","name":"llama3.1:8b","contextTokens":131072},{"id":"qwen2.5:14b"}]`,
		"DOCINDEX_LLM_OLLAMA_VISION_MODELS":     "llava:13b, qwen2.5:14b",
		"DOCINDEX_LLM_OLLAMA_STRUCTURED_OUTPUT": "json_object",
		"DOCINDEX_LLM_OLLAMA_MAX_TOKENS_PARAM":  "max_completion_tokens",
		"DOCINDEX_LLM_OLLAMA_IMAGE_DETAIL":      "high",
		"DOCINDEX_LLM_OLLAMA_TIMEOUT":           "5m",
		"DOCINDEX_LLM_OLLAMA_MAX_RETRIES":       "0",
		"OPENAI_API_KEY":                        "not for this server",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Model{{ID: "llama", Name: "llama3.1:8b", ContextTokens: 131072}, {ID: "qwen2.5:14b", Vision: true}, {ID: "llava:13b", Vision: true}}
	if len(p.models) != 3 || p.models[0] != want[0] || p.models[1] != want[1] || p.models[2] != want[2] {
		t.Errorf("models = %+v, want %+v", p.models, want)
	}
	if p.apiKey != "" || p.baseURL != "http://127.0.0.1:11434/v1" || p.structured != SchemaJSONObject || p.maxTokensParam != "max_completion_tokens" ||
		p.imageDetail != "high" || p.timeout != 5*time.Minute || p.backoff.Retries != 0 {
		t.Errorf("provider = %+v", p)
	}
	p, err = fromMap("P_", map[string]string{"P_BASE_URL": "http://h/v1", "P_MODELS": "a, b:latest ,"})
	if err != nil || len(p.models) != 2 || p.models[1].ID != "b:latest" || p.maxTokensParam != "max_tokens" {
		t.Errorf("comma list: %+v %v", p.models, err)
	}
}

func TestFromEnvErrorsNameTheVariable(t *testing.T) {
	_, err := fromMap("P_", map[string]string{"P_MODELS": `[{"id":"x","vison":true}]`, "P_MAX_RETRIES": "many", "P_TIMEOUT": "soon",
		"P_STRUCTURED_OUTPUT": "xml", "P_MAX_TOKENS_PARAM": "tokens", "P_IMAGE_DETAIL": "ultra"})
	if !errors.Is(err, plugins.ErrNotReady) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"P_MODELS", `unknown field "vison"`, "P_MAX_RETRIES", "P_TIMEOUT", "P_STRUCTURED_OUTPUT", "P_MAX_TOKENS_PARAM", "P_IMAGE_DETAIL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	t.Setenv("P_MODELS", "a,a")
	_, err = FromEnv("P_").Models(context.Background())
	if !errors.Is(err, plugins.ErrNotReady) || !strings.Contains(err.Error(), `model "a" listed twice`) {
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
