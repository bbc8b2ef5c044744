package plugintest

import (
	"context"
	"io"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/internal/wire"
	"github.com/docindex/docindex/plugins/llm"
)

// StartEmbedder serves impl over gRPC inside the test process and returns the
// client a host would use. The server stops when the test ends.
func StartEmbedder(t testing.TB, impl embedder.Embedder) embedder.Embedder {
	t.Helper()
	raw := start(t, plugins.KindEmbedder, embedder.VersionedPlugins(impl))
	e, ok := raw.(embedder.Embedder)
	if !ok {
		t.Fatalf("plugintest: dispensed %T, not an embedder.Embedder", raw)
	}
	return e
}

// StartConnector serves impl over gRPC inside the test process and returns
// the client a host would use. The server stops when the test ends.
func StartConnector(t testing.TB, impl connector.Connector) connector.Connector {
	t.Helper()
	raw := start(t, plugins.KindConnector, connector.VersionedPlugins(impl))
	c, ok := raw.(connector.Connector)
	if !ok {
		t.Fatalf("plugintest: dispensed %T, not a connector.Connector", raw)
	}
	return c
}

// StartLLM serves impl over gRPC inside the test process and returns the client a host would
// use. The server stops when the test ends.
func StartLLM(t testing.TB, impl llm.LLM) llm.LLM {
	t.Helper()
	raw := start(t, plugins.KindLLM, llm.VersionedPlugins(impl))
	l, ok := raw.(llm.LLM)
	if !ok {
		t.Fatalf("plugintest: dispensed %T, not an llm.LLM", raw)
	}
	return l
}

func start(t testing.TB, kind plugins.Kind, sets map[int]plugin.PluginSet) any {
	t.Helper()
	w := &testWriter{t: t}
	logger := hclog.New(&hclog.LoggerOptions{Name: "plugin", Output: w, Level: hclog.Warn})
	raw, stop, err := wire.Local(context.Background(), kind, sets, logger)
	if err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	t.Cleanup(func() {
		stop()
		w.close()
	})
	return raw
}

// testWriter sends log lines to the test's log until the test ends; later
// lines (a straggling goroutine) are dropped, since logging after a test
// has finished panics.
type testWriter struct {
	mu     sync.Mutex
	t      testing.TB
	closed bool
}

var _ io.Writer = (*testWriter)(nil)

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Logf("%s", p)
	}
	return len(p), nil
}

func (w *testWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}
