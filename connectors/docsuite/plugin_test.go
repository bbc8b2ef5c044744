package docsuite_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/pluginhost"
	"github.com/docindex/docindex/plugins/plugintest"
)

// TestPluginProcess builds the plugin binary and runs the conformance
// suite through a real plugin process, launched and supervised by the
// host's plugin manager, against a Confluence served on loopback.
func TestPluginProcess(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "docindex-connector-docsuite")
	build := exec.Command("go", "build", "-o", bin, "github.com/docindex/docindex/cmd/docindex-connector-docsuite")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build (the go tool must be on PATH): %v\n%s", err, out)
	}
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("plugin binary: %v", err)
	}

	var logs logBuffer
	host := pluginhost.New(pluginhost.WithDir(dir), pluginhost.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := host.Start(ctx); err != nil {
		t.Fatalf("start plugin host: %v", err)
	}
	t.Cleanup(func() { host.Close() })
	c, ok := host.Connector("docsuite")
	if !ok {
		t.Fatalf("the host found no docsuite connector in %s; plugins: %+v\n%s", dir, host.Plugins(), logs.String())
	}

	f := newFakeConfluence(t, false)
	seed(f)
	cfg := f.config(map[string]any{"spaces": []string{"DOCS"}, "includeAttachments": true})
	plugintest.RunConnectorSuite(t, c, plugintest.WithConfig(cfg), plugintest.WithMinItems(9))

	// The access lists cross the process boundary.
	r := mustSync(t, c, cfg, nil)
	secret := byTitle(t, r, "Secret")
	if secret.Access == nil || secret.Access.Public || len(secret.Access.Users) != 3 || len(secret.Access.Groups) != 1 {
		t.Errorf("restricted page through the plugin process: access %+v", secret.Access)
	}
	assertNoSecret(t, "host log", logs.String(), f.token)
}
