package embedder_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/plugintest"
)

// scripted is an embedder whose behaviour each test sets.
type scripted struct {
	models []embedder.Model
	embed  func(ctx context.Context, model string, texts []string) ([][]float32, error)
}

func (s *scripted) Models(context.Context) ([]embedder.Model, error) { return s.models, nil }

func (s *scripted) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	return s.embed(ctx, model, texts)
}

func (s *scripted) Version() string { return "7.0.1" }

func constant(dims int) func(context.Context, string, []string) ([][]float32, error) {
	return func(_ context.Context, _ string, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = make([]float32, dims)
			out[i][0] = float32(len(t))
		}
		return out, nil
	}
}

func TestModelsAndInfoCrossTheBoundary(t *testing.T) {
	want := []embedder.Model{{ID: "m-1", Dimensions: 3, MaxInputTokens: 512, MaxBatch: 8}, {ID: "m-2", Dimensions: 1}}
	e := plugintest.StartEmbedder(t, &scripted{models: want, embed: constant(3)})
	got, err := e.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("models = %+v, want %+v", got, want)
	}
	info, err := embedder.Describe(context.Background(), e)
	if err != nil || info.Version != "7.0.1" || info.SDKVersion != plugins.SDKVersion {
		t.Errorf("info = %+v, %v", info, err)
	}
}

func TestTextsArriveIntactAndInOrder(t *testing.T) {
	var seen []string
	eachVersion(t, &scripted{embed: func(ctx context.Context, model string, texts []string) ([][]float32, error) {
		seen = texts
		return constant(2)(ctx, model, texts)
	}}, func(t *testing.T, e embedder.Embedder) {
		texts := []string{"", "ascii", "ünïcode ✓", "broken \xff bytes", strings.Repeat("long ", 2<<20)} // 10 MB: above gRPC's default limit
		vecs, err := e.Embed(context.Background(), "m", texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range texts {
			if seen[i] != texts[i] {
				t.Errorf("text %d changed on the way", i)
			}
			if vecs[i][0] != float32(len(texts[i])) {
				t.Errorf("vector %d out of place", i)
			}
		}
	})
}

func TestErrorsKeepTheirMeaning(t *testing.T) {
	eachVersion(t, &scripted{embed: func(_ context.Context, model string, _ []string) ([][]float32, error) {
		switch model {
		case "unknown":
			return nil, fmt.Errorf("no model %q here: %w", model, embedder.ErrUnknownModel)
		case "key":
			return nil, fmt.Errorf("upstream said 401: %w", plugins.ErrUnauthenticated)
		case "ready":
			return nil, fmt.Errorf("weights file missing, run make weights: %w", plugins.ErrNotReady)
		default:
			return nil, errors.New("something odd")
		}
	}}, func(t *testing.T, e embedder.Embedder) {
		ctx := context.Background()
		cases := map[string]error{"unknown": embedder.ErrUnknownModel, "key": plugins.ErrUnauthenticated, "ready": plugins.ErrNotReady}
		for model, want := range cases {
			_, err := e.Embed(ctx, model, []string{"x"})
			if !errors.Is(err, want) {
				t.Errorf("%s: %v, want %v", model, err, want)
			}
		}
		_, err := e.Embed(ctx, "unknown", []string{"x"})
		if !errors.Is(err, plugins.ErrNotFound) || !strings.Contains(err.Error(), `no model "unknown" here`) {
			t.Errorf("message lost: %v", err)
		}
		_, err = e.Embed(ctx, "other", []string{"x"})
		if err == nil || !strings.Contains(err.Error(), "something odd") || errors.Is(err, plugins.ErrUnavailable) {
			t.Errorf("plain error: %v", err)
		}
	})
}

func TestBrokenImplementationsAreCaught(t *testing.T) {
	eachVersion(t, &scripted{embed: func(_ context.Context, model string, texts []string) ([][]float32, error) {
		switch model {
		case "short":
			return [][]float32{{1}}, nil
		case "ragged":
			return [][]float32{{1, 2}, {1}}, nil
		default:
			panic("boom")
		}
	}}, func(t *testing.T, e embedder.Embedder) {
		ctx := context.Background()
		if _, err := e.Embed(ctx, "short", []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "1 vectors for 2 texts") {
			t.Errorf("too few vectors: %v", err)
		}
		if _, err := e.Embed(ctx, "ragged", []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "2 and 1 dimensions") {
			t.Errorf("ragged vectors: %v", err)
		}
		if _, err := e.Embed(ctx, "panic", []string{"a"}); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Errorf("panic: %v", err)
		}
		if _, err := e.Embed(ctx, "short", []string{"a"}); err != nil {
			t.Errorf("after a panic the plugin still serves: %v", err)
		}
	})
}

func TestCancellationReachesThePlugin(t *testing.T) {
	stopped := make(chan error, 1)
	eachVersion(t, &scripted{embed: func(ctx context.Context, _ string, _ []string) ([][]float32, error) {
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	}}, func(t *testing.T, e embedder.Embedder) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := e.Embed(ctx, "m", []string{"x"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("caller's deadline: %v", err)
		}
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Fatal("the plugin's context was not cancelled")
		}
	})
}

func TestDescribeInProcess(t *testing.T) {
	info, err := embedder.Describe(context.Background(), &scripted{})
	if err != nil || info.Version != "7.0.1" || info.SDKVersion != plugins.SDKVersion {
		t.Errorf("info = %+v, %v", info, err)
	}
}
