package git_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/pluginhost"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/plugintest"
)

// TestPluginBinary builds docindex-connector-git and runs the conformance
// suite against it as a real plugin process, launched by the host.
func TestPluginBinary(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "docindex-connector-git"), "github.com/docindex/docindex/cmd/docindex-connector-git")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	const token = "plugin-s3cret-9d2e"
	srv := startServer(t, basicAuth("bot", token))
	r := srv.newRepo(t, "handbook")
	handbook(r)

	var mu sync.Mutex
	var logs bytes.Buffer
	host := pluginhost.New(
		pluginhost.WithDir(dir),
		pluginhost.WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		pluginhost.WithEnv(plugins.LogLevelEnv+"=debug"),
	)
	if err := host.Start(ctx); err != nil {
		t.Fatalf("host start: %v", err)
	}
	t.Cleanup(func() { host.Close() })
	c, ok := host.Connector("git")
	if !ok {
		t.Fatalf("the host found no git connector; plugins: %+v", host.Plugins())
	}

	cfg := r.config(map[string]any{"username": "bot", "token": token, "webUrlTemplate": webTemplate})
	plugintest.RunConnectorSuite(t, c,
		plugintest.WithConfig(cfg),
		plugintest.WithMinItems(len(handbookIDs)),
		plugintest.WithInvalidConfigs(invalidConfigs()...),
	)

	t.Run("wrong token", func(t *testing.T) {
		_, err := trySync(t, c, r.config(map[string]any{"username": "bot", "token": "not-" + token}), nil)
		if !errors.Is(err, plugins.ErrUnauthenticated) || strings.Contains(err.Error(), token) {
			t.Errorf("sync with a wrong token: %v; want plugins.ErrUnauthenticated without the token", err)
		}
		h, err := c.CheckHealth(t.Context(), r.config(map[string]any{"username": "bot", "token": "not-" + token}))
		if err != nil || h.Status != connector.StatusDown || strings.Contains(h.Message, token) {
			t.Errorf("CheckHealth with a wrong token: %+v, %v", h, err)
		}
	})

	// The plugin's log lines reach the host, and hold no token.
	host.Close()
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "git: listed the branch head") {
		t.Errorf("the plugin's log did not reach the host:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the token appears in the host's log:\n%s", logs.String())
	}
}
