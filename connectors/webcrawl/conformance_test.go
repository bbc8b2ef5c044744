package webcrawl_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/pluginhost"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/plugintest"
)

// manualConfig crawls the PostgreSQL manual's home page and the pages it
// links to (about 110).
func manualConfig(t *testing.T, base string) json.RawMessage {
	return config(t, map[string]any{"startUrls": []string{base + "/index.html"}, "maxDepth": 1})
}

func suiteOptions(t *testing.T, cfg json.RawMessage) []plugintest.ConnectorOption {
	return []plugintest.ConnectorOption{
		plugintest.WithConfig(cfg),
		plugintest.WithMinItems(100),
		plugintest.WithOperationTimeout(30 * time.Second),
		plugintest.WithInvalidConfigs(
			json.RawMessage(`{}`),
			json.RawMessage(`{"startUrls": ["ftp://example.com/"]}`),
			json.RawMessage(`{"startUrls": ["http://127.0.0.1/"]}`),
			json.RawMessage(`{"startUrls": ["https://example.com/"], "include": ["("]}`),
			json.RawMessage(`{"startUrls": ["https://example.com/"], "maxPages": 0}`),
		),
	}
}

// TestConformance runs the SDK's conformance suite over gRPC in process,
// against the PostgreSQL manual served on loopback.
func TestConformance(t *testing.T) {
	base, _ := servePGManual(t)
	c := plugintest.StartConnector(t, newConnector(t))
	plugintest.RunConnectorSuite(t, c, suiteOptions(t, manualConfig(t, base))...)
}

// TestConformancePluginBinary builds the plugin binary and runs the suite
// through a real plugin process that the plugin host launched.
func TestConformancePluginBinary(t *testing.T) {
	base, _ := servePGManual(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "docindex-connector-webcrawl")
	build := exec.Command("go", "build", "-o", bin, "github.com/docindex/docindex/cmd/docindex-connector-webcrawl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the plugin (the go tool must be on PATH): %v\n%s", err, out)
	}
	host := pluginhost.New(pluginhost.WithDir(dir),
		pluginhost.WithLogger(slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := host.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Close() })
	c, ok := host.Connector("webcrawl")
	if !ok {
		t.Fatalf("the host did not load the plugin: %+v", host.Plugins())
	}
	for _, p := range host.Plugins() {
		if p.Name == "webcrawl" && (p.Status != pluginhost.StatusRunning || p.PID == 0) {
			t.Fatalf("plugin %+v is not a running process", p)
		}
	}
	plugintest.RunConnectorSuite(t, c, suiteOptions(t, manualConfig(t, base))...)

	// The refusal of loopback addresses crosses the process boundary with
	// its message.
	run := runSync(t, c, config(t, map[string]any{"startUrls": []string{"http://localhost:1/"}, "allowPrivateNetworks": nil}), nil)
	if run.err == nil || !contains(run.err.Error(), `loopback address`, `"allowPrivateNetworks": true`) {
		t.Errorf("crawl of localhost through the plugin: %v", run.err)
	}
	d, err := c.Describe(ctx)
	if err != nil || d.Type != "webcrawl" || !d.Has(connector.CapSchedule) {
		t.Errorf("Describe through the plugin: %+v, %v", d, err)
	}
}
