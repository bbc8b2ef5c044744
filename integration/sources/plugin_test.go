package sources_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/pluginhost"
)

// TestGitPlugin runs the git connector as a plugin process (cmd/docindex-connector-git, built
// into a plugin directory) behind the plugin host: Describe, Validate, Sync and Fetch all cross
// gRPC, and the unsealed token travels to the plugin in the config of each call.
func TestGitPlugin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "docindex-connector-git"),
		"github.com/docindex/docindex/cmd/docindex-connector-git")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	host := pluginhost.New(pluginhost.WithDir(dir), pluginhost.WithLogger(testLogger()))
	if err := host.Start(ctx); err != nil {
		t.Fatalf("start the plugin host: %v", err)
	}
	t.Cleanup(func() { _ = host.Close() })
	conns := host
	if types := conns.ConnectorTypes(); len(types) != 1 || types[0] != "git" {
		t.Fatalf("the host loaded connectors %v (plugins %+v), want [git]", types, host.Plugins())
	}

	const token = "plugin-token-integration-0b7e2d"
	srv := startGitServer(t, "bot", token)
	r := srv.newRepo(t, "handbook")
	r.write("README.md", readme)
	r.write("docs/beavers.md", beavers)
	r.write("docs/gannets.md", gannets)
	r.commit("handbook")

	e := newEnv(t, conns)
	types, err := e.svc.SourceTypesAvailable(ctx)
	if err != nil || len(types) != 1 || types[0].Type != "git" || len(types[0].ConfigSchema) == 0 {
		t.Fatalf("source types through the plugin: %+v, %v", types, err)
	}
	src := e.createSource(t, "git", map[string]any{"url": r.url, "username": "bot", "token": token}, token)
	e.run(t, src, animals(true,
		func(t *testing.T) { r.write("docs/beavers.md", beaversNext); r.commit("badgers") },
		func(t *testing.T) { r.remove("docs/gannets.md"); r.commit("no gannets") }))
	e.checkSealed(t, src.ID, token)
	for _, p := range host.Plugins() {
		if p.Name == "git" && p.Restarts != 0 {
			t.Errorf("the git plugin restarted %d times", p.Restarts)
		}
	}
}
