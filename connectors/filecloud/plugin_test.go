package filecloud_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/pluginhost"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/plugintest"
)

// TestPluginProcess builds the real plugin binary, lets the host run it as
// a go-plugin process and passes the conformance suite through it for both
// providers; credentials the servers refuse give a clear error there too,
// and neither the error nor the host's log (which carries the plugin's
// log lines) shows the secret.
func TestPluginProcess(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "docindex-connector-filecloud")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/docindex/docindex/cmd/docindex-connector-filecloud").CombinedOutput()
	if err != nil {
		t.Fatalf("go build the plugin (the go tool must be on PATH): %v\n%s", err, out)
	}

	logs := &logBuffer{}
	h := pluginhost.New(pluginhost.WithDir(dir),
		pluginhost.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		pluginhost.WithEnv(plugins.LogLevelEnv+"=debug"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	must(t, h.Start(ctx))
	t.Cleanup(func() { h.Close() })
	c, ok := h.Connector("filecloud")
	if !ok {
		t.Fatalf("the host did not find the filecloud connector in %s: %+v", dir, h.Plugins())
	}

	dav := davFixture(t)
	s3f, _ := s3Fixture(t)
	for name, f := range map[string]fixture{"WebDAV": dav, "S3": s3f} {
		t.Run(name, func(t *testing.T) {
			plugintest.RunConnectorSuite(t, c,
				plugintest.WithConfig(f.config()),
				plugintest.WithInvalidConfigs(invalidConfigs()...),
				plugintest.WithMinItems(len(initialFiles())),
				plugintest.WithOperationTimeout(30*time.Second))

			wrong := "Wrong-" + f.secret()
			l := syncOnce(t, c, f.config(f.secretKey, wrong))
			if !errors.Is(l.err, plugins.ErrUnauthenticated) {
				t.Errorf("sync with a wrong secret through the plugin: %v; want ErrUnauthenticated", l.err)
			}
			mustNotContain(t, "sync error", fmt.Sprint(l.err), wrong, f.secret())
		})
	}

	// The plugin's own log lines reach the host's log.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "filecloud sync listed") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "filecloud sync listed") {
		t.Errorf("the plugin's sync summary is not in the host's log:\n%s", logs.String())
	}
	mustNotContain(t, "the host's log", logs.String(), davPassword, s3Secret, "Wrong-"+davPassword, "Wrong-"+s3Secret)
}
