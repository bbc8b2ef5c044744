package embedder_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/internal/wire"
	"github.com/docindex/docindex/plugins/plugintest"
)

// startVersion serves impl in process like plugintest.StartEmbedder, over
// protocol version v only.
func startVersion(t testing.TB, impl embedder.Embedder, v int) embedder.Embedder {
	t.Helper()
	sets := map[int]plugin.PluginSet{v: embedder.VersionedPlugins(impl)[v]}
	raw, stop, err := wire.Local(context.Background(), plugins.KindEmbedder, sets, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return raw.(embedder.Embedder)
}

// eachVersion runs fn against impl served over every protocol version.
func eachVersion(t *testing.T, impl embedder.Embedder, fn func(t *testing.T, e embedder.Embedder)) {
	for v := 1; v <= embedder.ProtocolVersion; v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { fn(t, startVersion(t, impl, v)) })
	}
}

// echo embeds a text as {its length, the number at its start}, after a
// short random pause, so that concurrent calls finish out of order.
func echo(ctx context.Context, _ string, texts []string) ([][]float32, error) {
	time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		var n int
		fmt.Sscan(t, &n)
		out[i] = []float32{float32(len(t)), float32(n)}
	}
	return out, ctx.Err()
}

func TestStreamsServeConcurrentCalls(t *testing.T) {
	e := plugintest.StartEmbedder(t, &scripted{embed: echo})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 32 {
		wg.Go(func() {
			for c := range 20 {
				texts := make([]string, 1+(g+c)%7)
				for i := range texts {
					texts[i] = fmt.Sprintf("%d %s", g*1000+c*10+i, strings.Repeat("x", g+c))
				}
				vecs, err := e.Embed(context.Background(), "m", texts)
				if err != nil {
					errs <- err
					return
				}
				if len(vecs) != len(texts) {
					errs <- fmt.Errorf("%d vectors for %d texts", len(vecs), len(texts))
					return
				}
				for i, v := range vecs {
					if v[0] != float32(len(texts[i])) || v[1] != float32(g*1000+c*10+i) {
						errs <- fmt.Errorf("goroutine %d call %d text %d got the vector %v of another text", g, c, i, v)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := embedder.Streams(e); n < 1 || n > 8 {
		t.Errorf("%d idle streams after the calls, want 1..8", n)
	}
}

func TestCancellingOneCallLeavesTheOthers(t *testing.T) {
	started := make(chan struct{})
	stopped := make(chan error, 1)
	e := plugintest.StartEmbedder(t, &scripted{embed: func(ctx context.Context, model string, texts []string) ([][]float32, error) {
		if model == "block" {
			close(started)
			<-ctx.Done()
			stopped <- ctx.Err()
			return nil, ctx.Err()
		}
		return echo(ctx, model, texts)
	}})
	ctx, cancel := context.WithCancel(context.Background())
	blocked := make(chan error, 1)
	go func() {
		_, err := e.Embed(ctx, "block", []string{"x"})
		blocked <- err
	}()
	<-started

	// Calls in flight while the blocked one is cancelled, and after.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Go(func() {
			for c := range 50 {
				text := fmt.Sprintf("%d", g*100+c)
				vecs, err := e.Embed(context.Background(), "m", []string{text})
				if err != nil {
					errs <- err
					return
				}
				if vecs[0][1] != float32(g*100+c) {
					errs <- fmt.Errorf("call %s got %v", text, vecs[0])
					return
				}
			}
		})
	}
	time.Sleep(5 * time.Millisecond)
	cancel()
	select {
	case err := <-blocked:
		if !errors.Is(err, context.Canceled) || errors.Is(err, plugins.ErrUnavailable) {
			t.Errorf("cancelled call: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("plugin saw %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the plugin's context was not cancelled")
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, err := e.Embed(context.Background(), "m", []string{"1"}); err != nil {
		t.Errorf("after a cancellation: %v", err)
	}
}

func TestCallDeadlineReachesThePlugin(t *testing.T) {
	eachVersion(t, &scripted{embed: func(ctx context.Context, model string, texts []string) ([][]float32, error) {
		dl, ok := ctx.Deadline()
		if !ok || time.Until(dl) > time.Minute || time.Until(dl) < 30*time.Second {
			return nil, fmt.Errorf("deadline %v, %v: %w", dl, ok, plugins.ErrInvalidArgument)
		}
		return echo(ctx, model, texts)
	}}, func(t *testing.T, e embedder.Embedder) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := e.Embed(ctx, "m", []string{"1"}); err != nil {
			t.Error(err)
		}
	})
}

func TestFailedCallsKeepTheStream(t *testing.T) {
	e := plugintest.StartEmbedder(t, &scripted{embed: func(ctx context.Context, model string, texts []string) ([][]float32, error) {
		switch model {
		case "unknown":
			return nil, fmt.Errorf("no %q: %w", model, embedder.ErrUnknownModel)
		case "panic":
			panic("boom")
		}
		return echo(ctx, model, texts)
	}})
	ctx := context.Background()
	for range 3 {
		if _, err := e.Embed(ctx, "unknown", []string{"1"}); !errors.Is(err, embedder.ErrUnknownModel) || errors.Is(err, plugins.ErrUnavailable) {
			t.Fatalf("unknown model: %v", err)
		}
		if _, err := e.Embed(ctx, "panic", []string{"1"}); err == nil || !strings.Contains(err.Error(), "boom") || errors.Is(err, plugins.ErrUnavailable) {
			t.Fatalf("panic: %v", err)
		}
		if _, err := e.Embed(ctx, "m", []string{"1"}); err != nil {
			t.Fatal(err)
		}
		if n := embedder.Streams(e); n != 1 {
			t.Fatalf("%d idle streams, want the one stream reused", n)
		}
	}
}
