package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/llm"
	"github.com/docindex/docindex/plugins/plugintest"
)

// scripted is an LLM whose behaviour each test sets.
type scripted struct {
	models   []llm.Model
	complete func(ctx context.Context, req llm.Request) (*llm.Response, error)
}

func (s *scripted) Models(context.Context) ([]llm.Model, error) { return s.models, nil }

func (s *scripted) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return s.complete(ctx, req)
}

func (s *scripted) Version() string { return "3.1.4" }

func TestParseName(t *testing.T) {
	k, n, ok := plugins.ParseName("docindex-llm-openai")
	if !ok || k != plugins.KindLLM || n != "openai" || plugins.KindLLM.Prefix() != "docindex-llm-" {
		t.Errorf("ParseName(docindex-llm-openai) = %q %q %v", k, n, ok)
	}
	for _, in := range []string{"docindex-llm-", "docindex-llm-Open", "docindex-llms-openai"} {
		if _, _, ok := plugins.ParseName(in); ok {
			t.Errorf("ParseName(%q) accepted", in)
		}
	}
}

func TestModelsAndInfoCrossTheBoundary(t *testing.T) {
	want := []llm.Model{{ID: "chat-1", Vision: true, ContextTokens: 128000}, {ID: "chat-2"}}
	l := plugintest.StartLLM(t, &scripted{models: want})
	got, err := l.Models(context.Background())
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("models = %+v, %v; want %+v", got, err, want)
	}
	info, err := llm.Describe(context.Background(), l)
	if err != nil || info.Version != "3.1.4" || info.SDKVersion != plugins.SDKVersion {
		t.Errorf("info = %+v, %v", info, err)
	}
	info, err = llm.Describe(context.Background(), &scripted{})
	if err != nil || info.Version != "3.1.4" || info.SDKVersion != plugins.SDKVersion {
		t.Errorf("in-process info = %+v, %v", info, err)
	}
}

func TestRequestAndResponseArriveIntact(t *testing.T) {
	var seen llm.Request
	l := plugintest.StartLLM(t, &scripted{complete: func(_ context.Context, req llm.Request) (*llm.Response, error) {
		seen = req
		return &llm.Response{Content: "ünïcödé ✓ answer", FinishReason: "length", InputTokens: 1234, OutputTokens: 56}, nil
	}})
	temp := 0.0                                             // zero is a value, not "unset"
	big := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 3<<20) // 12 MiB: above gRPC's default limit
	req := llm.Request{
		Model: "m",
		Messages: []llm.Message{
			{Role: "system", Content: "sys"},
			{Role: "user", Content: "broken \xff bytes", Images: []llm.Image{{ContentType: "image/png", Data: big}, {Data: []byte{1, 2, 3}}}},
			{Role: "assistant", Content: ""},
		},
		Schema:      json.RawMessage(`{"type":"object"}`),
		SchemaName:  "thing",
		MaxTokens:   77,
		Temperature: &temp,
	}
	resp, err := l.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen, req) {
		t.Errorf("the plugin saw a different request:\n%+.200v\nwant\n%+.200v", seen, req)
	}
	if *resp != (llm.Response{Content: "ünïcödé ✓ answer", FinishReason: "length", InputTokens: 1234, OutputTokens: 56}) {
		t.Errorf("response = %+v", resp)
	}

	// Unset stays unset.
	if _, err := l.Complete(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if seen.Temperature != nil || seen.Schema != nil || seen.Messages[0].Images != nil {
		t.Errorf("unset fields arrived set: %+v", seen)
	}
}

func TestTooLargeRequestIsRefusedBeforeSending(t *testing.T) {
	called := false
	l := plugintest.StartLLM(t, &scripted{complete: func(context.Context, llm.Request) (*llm.Response, error) {
		called = true
		return &llm.Response{}, nil
	}})
	huge := make([]byte, 65<<20)
	_, err := l.Complete(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Images: []llm.Image{{Data: huge}}}}})
	if !errors.Is(err, plugins.ErrInvalidArgument) || !strings.Contains(err.Error(), "over the plugin limit of 64 MiB") || called {
		t.Errorf("65 MiB request: %v (reached the plugin: %v)", err, called)
	}
}

func TestErrorsKeepTheirMeaning(t *testing.T) {
	l := plugintest.StartLLM(t, &scripted{complete: func(_ context.Context, req llm.Request) (*llm.Response, error) {
		switch req.Model {
		case "unknown":
			return nil, fmt.Errorf("no model %q here: %w", req.Model, llm.ErrUnknownModel)
		case "key":
			return nil, fmt.Errorf("upstream said 401: %w", plugins.ErrUnauthenticated)
		case "busy":
			return nil, fmt.Errorf("429 after 5 attempts: %w", plugins.ErrRateLimited)
		case "bad":
			return nil, fmt.Errorf("images need a vision model: %w", plugins.ErrInvalidArgument)
		case "nil":
			return nil, nil
		case "panic":
			panic("boom")
		default:
			return nil, errors.New("something odd")
		}
	}})
	ctx := context.Background()
	complete := func(model string) error {
		_, err := l.Complete(ctx, llm.Request{Model: model, Messages: []llm.Message{{Role: "user", Content: "x"}}})
		return err
	}
	for model, want := range map[string]error{"unknown": llm.ErrUnknownModel, "key": plugins.ErrUnauthenticated, "busy": plugins.ErrRateLimited, "bad": plugins.ErrInvalidArgument} {
		if err := complete(model); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", model, err, want)
		}
	}
	if err := complete("unknown"); !errors.Is(err, plugins.ErrNotFound) || !strings.Contains(err.Error(), `no model "unknown" here`) {
		t.Errorf("message lost: %v", err)
	}
	if err := complete("bad"); errors.Is(err, llm.ErrUnknownModel) {
		t.Errorf("an invalid argument came back as an unknown model: %v", err)
	}
	if err := complete("nil"); err == nil || !strings.Contains(err.Error(), "neither a response nor an error") {
		t.Errorf("nil response: %v", err)
	}
	if err := complete("panic"); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("panic: %v", err)
	}
	if err := complete("other"); err == nil || !strings.Contains(err.Error(), "something odd") || errors.Is(err, plugins.ErrUnavailable) {
		t.Errorf("plain error: %v", err)
	}
}

func TestCancellationReachesThePlugin(t *testing.T) {
	stopped := make(chan error, 1)
	l := plugintest.StartLLM(t, &scripted{complete: func(ctx context.Context, _ llm.Request) (*llm.Response, error) {
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := l.Complete(ctx, llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: "x"}}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller's deadline: %v", err)
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the plugin's context was not cancelled")
	}
}

func TestValidate(t *testing.T) {
	img := []llm.Image{{ContentType: "image/png", Data: []byte{1}}}
	neg := -0.5
	ok := llm.Request{Model: "m", Messages: []llm.Message{{Role: "system", Content: "s"}, {Role: "user", Images: img}, {Role: "assistant", Content: "a"}}, Schema: json.RawMessage(`{}`)}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid request: %v", err)
	}
	if !ok.HasImages() || (llm.Request{Messages: []llm.Message{{Content: "x"}}}).HasImages() {
		t.Error("HasImages")
	}
	for want, req := range map[string]llm.Request{
		"no model":                  {Messages: []llm.Message{{Role: "user", Content: "x"}}},
		"no messages":               {Model: "m"},
		`role "tool"`:               {Model: "m", Messages: []llm.Message{{Role: "tool", Content: "x"}}},
		"is empty":                  {Model: "m", Messages: []llm.Message{{Role: "user"}}},
		"only accepted in user":     {Model: "m", Messages: []llm.Message{{Role: "assistant", Content: "x", Images: img}}},
		"has no data":               {Model: "m", Messages: []llm.Message{{Role: "user", Images: []llm.Image{{ContentType: "image/png"}}}}},
		"not an image type":         {Model: "m", Messages: []llm.Message{{Role: "user", Images: []llm.Image{{ContentType: "application/pdf", Data: []byte{1}}}}}},
		"schema is not a JSON obje": {Model: "m", Messages: []llm.Message{{Role: "user", Content: "x"}}, Schema: json.RawMessage(`"string"`)},
		"max tokens -1":             {Model: "m", Messages: []llm.Message{{Role: "user", Content: "x"}}, MaxTokens: -1},
		"temperature -0.5":          {Model: "m", Messages: []llm.Message{{Role: "user", Content: "x"}}, Temperature: &neg},
	} {
		err := req.Validate()
		if !errors.Is(err, plugins.ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}
