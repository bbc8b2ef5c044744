package pluginhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/pluginhost"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
	"github.com/docindex/docindex/plugins/plugintest"
)

func startHost(t *testing.T, rec *recorder, opts ...pluginhost.Option) *pluginhost.Host {
	t.Helper()
	opts = append([]pluginhost.Option{
		pluginhost.WithLogger(slog.New(rec)),
		pluginhost.WithRestartDelay(20*time.Millisecond, 200*time.Millisecond),
	}, opts...)
	h := pluginhost.New(opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func pluginInfo(t *testing.T, h *pluginhost.Host, name string) pluginhost.PluginInfo {
	t.Helper()
	for _, p := range h.Plugins() {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("plugin %q not listed in %+v", name, h.Plugins())
	return pluginhost.PluginInfo{}
}

func TestDiscoveryModelsAndEmbed(t *testing.T) {
	dir := pluginDir(t, "docindex-embedder-hash", "docindex-connector-fixture")
	// Things that are not plugins: a data file, a non-executable plugin
	// name, a name with characters plugins may not use.
	must(t, os.WriteFile(filepath.Join(dir, "glove-100d.bin"), []byte("data"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "docindex-embedder-noexec"), []byte("#!/bin/sh\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "docindex-embedder-Bad"), []byte("#!/bin/sh\n"), 0o755))
	rec := newRecorder(t)
	h := startHost(t, rec, pluginhost.WithDir(dir))

	infos := h.Plugins()
	if len(infos) != 2 {
		t.Fatalf("plugins = %+v, want hash and fixture", infos)
	}
	hp := infos[0]
	if hp.Name != "hash" || hp.Kind != plugins.KindEmbedder || hp.Status != pluginhost.StatusRunning ||
		hp.PID <= 0 || hp.Protocol != embedder.ProtocolVersion || hp.Path != filepath.Join(dir, "docindex-embedder-hash") ||
		hp.SDKVersion != plugins.SDKVersion || hp.Version != plugins.SDKVersion ||
		!slices.Equal(hp.Capabilities, []string{"hash-256", "hash-1024"}) {
		t.Errorf("hash plugin info = %+v", hp)
	}
	fp := infos[1]
	if fp.Name != "fixture" || fp.Kind != plugins.KindConnector || fp.Version != "1.2.3" || fp.Status != pluginhost.StatusRunning ||
		!slices.Equal(fp.Capabilities, []string{"schedule", "incremental"}) || fp.PID <= 0 || fp.PID == hp.PID {
		t.Errorf("fixture plugin info = %+v", fp)
	}

	ctx := context.Background()
	models, err := h.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []embedder.Model{{ID: "hash-256", Provider: "hash", Dimensions: 256}, {ID: "hash-1024", Provider: "hash", Dimensions: 1024}}
	if !slices.Equal(models, want) {
		t.Errorf("models = %+v, want %+v", models, want)
	}

	texts := []string{"plugins run as processes", "the host routes by model"}
	got, err := h.Embed(ctx, "hash-256", texts)
	if err != nil {
		t.Fatal(err)
	}
	direct, _ := hash.New().Embed(ctx, "hash-256", texts)
	for i := range texts {
		if !slices.Equal(got[i], direct[i]) {
			t.Errorf("text %d: the plugin's vector differs from the in-process one", i)
		}
	}

	_, err = h.Embed(ctx, "no-such-model", texts)
	if !errors.Is(err, pluginhost.ErrUnknownModel) || !errors.Is(err, embedder.ErrUnknownModel) {
		t.Errorf("unknown model: %v", err)
	}
	if _, ok := h.Connector("nope"); ok {
		t.Error("Connector(nope) found something")
	}
}

func TestHostPassesTheEmbedderSuite(t *testing.T) {
	h := startHost(t, newRecorder(t), pluginhost.WithDir(pluginDir(t, "docindex-embedder-hash")))
	plugintest.RunEmbedderSuite(t, h, plugintest.Deterministic())
}

func TestConnectorThroughProcessPassesTheSuite(t *testing.T) {
	h := startHost(t, newRecorder(t), pluginhost.WithDir(pluginDir(t, "docindex-connector-fixture")))
	c, ok := h.Connector("fixture")
	if !ok {
		t.Fatal("fixture connector not found")
	}
	plugintest.RunConnectorSuite(t, c,
		plugintest.WithConfig(json.RawMessage(`{"items":12,"token":"t"}`)),
		plugintest.WithInvalidConfigs(json.RawMessage(`{"items":-1}`)),
		plugintest.WithMinItems(12))
}

func TestPluginLogsReachTheHostLog(t *testing.T) {
	rec := newRecorder(t)
	h := startHost(t, rec, pluginhost.WithDir(pluginDir(t, "docindex-connector-fixture")))
	c, _ := h.Connector("fixture")
	if _, err := c.CheckHealth(context.Background(), json.RawMessage(`{"items":7}`)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, ok := rec.find("health checked", map[string]string{"plugin": "fixture", "kind": "connector", "items": "7"})
		if ok {
			if r.Level != slog.LevelInfo {
				t.Errorf("level %v, want INFO", r.Level)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin's log line did not reach the host's log:\n%s", rec.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKilledPluginIsRestartedAndCallsRetried kills the embedder process with
// SIGKILL while calls are running: every call must still succeed.
func TestKilledPluginIsRestartedAndCallsRetried(t *testing.T) {
	rec := newRecorder(t)
	h := startHost(t, rec, pluginhost.WithDir(pluginDir(t, "docindex-embedder-hash")))
	before := pluginInfo(t, h, "hash")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stop := make(chan struct{})
	var calls, failures atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	texts := []string{"a sentence to embed", "another one"}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				vecs, err := h.Embed(ctx, "hash-256", texts)
				calls.Add(1)
				if err != nil || len(vecs) != 2 {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	atBefore := calls.Load()
	must(t, syscall.Kill(before.PID, syscall.SIGKILL))
	// Keep calling until the restarted process has served a good number.
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < atBefore+200 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d of %d calls failed across the kill; first: %v", n, calls.Load(), firstErr.Load())
	}
	after := pluginInfo(t, h, "hash")
	if after.PID == before.PID || after.PID <= 0 || after.Restarts != 1 || after.Status != pluginhost.StatusRunning {
		t.Errorf("after the kill: %+v (pid before %d)", after, before.PID)
	}
	if _, ok := rec.find("plugin process exited; restarting it", map[string]string{"plugin": "hash"}); !ok {
		t.Errorf("the restart was not logged:\n%s", rec.dump())
	}
	if !processGone(before.PID) {
		t.Errorf("the killed process %d is still there (zombie or alive)", before.PID)
	}
	_, retried := rec.find("retrying", map[string]string{"plugin": "hash"})
	t.Logf("%d calls, %d after the kill; a call was retried: %v", calls.Load(), calls.Load()-atBefore, retried)
}

// TestCrashDuringCall makes the plugin exit inside a call: the host retries
// once on a fresh process; the call, which crashes it every time, then
// fails with ErrUnavailable, and the plugin is back for the next call.
func TestCrashDuringCall(t *testing.T) {
	rec := newRecorder(t)
	h := startHost(t, rec, pluginhost.WithDir(pluginDir(t, "docindex-connector-fixture")))
	c, _ := h.Connector("fixture")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pid := pluginInfo(t, h, "fixture").PID

	_, err := c.CheckHealth(ctx, json.RawMessage(`{"crash":"health"}`))
	if !errors.Is(err, plugins.ErrUnavailable) {
		t.Fatalf("a call that kills the plugin: %v; want ErrUnavailable", err)
	}
	hl, err := c.CheckHealth(ctx, json.RawMessage(`{"items":1}`))
	if err != nil || hl.Status != connector.StatusOK {
		t.Fatalf("after the crash: %v %v", hl, err)
	}
	info := pluginInfo(t, h, "fixture")
	if info.PID == pid || info.Restarts != 2 {
		t.Errorf("after two crashes: %+v (first pid %d)", info, pid)
	}

	// A sync that crashes before its first event is retried, then fails.
	var syncErr error
	for _, err := range c.Sync(ctx, connector.SyncRequest{Config: json.RawMessage(`{"crash":"sync"}`)}) {
		syncErr = err
	}
	if !errors.Is(syncErr, plugins.ErrUnavailable) {
		t.Errorf("sync that kills the plugin: %v", syncErr)
	}
	n := 0
	for ev, err := range c.Sync(ctx, connector.SyncRequest{Config: json.RawMessage(`{"items":3}`)}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == connector.EventUpsert {
			n++
		}
	}
	if n != 3 {
		t.Errorf("sync after the crashes: %d upserts", n)
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	dir := pluginDir(t, "docindex-embedder-hash", "docindex-connector-fixture")
	h := pluginhost.New(pluginhost.WithDir(dir), pluginhost.WithLogger(slog.New(newRecorder(t))))
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range h.Plugins() {
		if p.PID <= 0 {
			t.Fatalf("plugin %s not running: %+v", p.Name, p)
		}
		pids = append(pids, p.PID)
	}
	if got := processesFrom(binDir); len(got) < 2 {
		t.Fatalf("found %d plugin processes before Close, want 2", len(got))
	}
	start := time.Now()
	must(t, h.Close())
	t.Logf("Close took %v", time.Since(start))
	for _, pid := range pids {
		if !processGone(pid) {
			t.Errorf("plugin process %d survived Close", pid)
		}
	}
	if left := processesFrom(binDir); len(left) > 0 {
		t.Errorf("plugin processes left after Close: %v", left)
	}
	for _, p := range h.Plugins() {
		if p.Status != pluginhost.StatusStopped {
			t.Errorf("after Close: %+v", p)
		}
	}
	if _, err := h.Embed(context.Background(), "hash-256", []string{"x"}); !errors.Is(err, plugins.ErrUnavailable) {
		t.Errorf("Embed after Close: %v", err)
	}
}

func TestInProcessRegistrationsWin(t *testing.T) {
	h := pluginhost.New(pluginhost.WithDir(pluginDir(t, "docindex-embedder-hash", "docindex-connector-fixture")), pluginhost.WithLogger(slog.New(newRecorder(t))))
	local := &counting{Embedder: hash.New(hash.WithDimensions(64)), maxBatch: 3}
	h.RegisterEmbedder("hash", local)
	h.RegisterEmbedder("other", hash.New(hash.WithDimensions(1024))) // hash-1024 again: the first wins
	must(t, h.Start(context.Background()))
	defer h.Close()
	models, err := h.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []embedder.Model{{ID: "hash-64", Provider: "hash", Dimensions: 64, MaxBatch: 3}, {ID: "hash-1024", Provider: "other", Dimensions: 1024}}
	if !slices.Equal(models, want) {
		t.Errorf("models = %+v, want %+v", models, want)
	}
	for _, p := range h.Plugins() {
		if p.Kind == plugins.KindEmbedder && p.Status != pluginhost.StatusInProcess {
			t.Errorf("the hash plugin binary should have been skipped: %+v", p)
		}
	}

	// Batches are split to the model's limit.
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = strings.Repeat("word ", i+1)
	}
	got, err := h.Embed(context.Background(), "hash-64", texts)
	if err != nil || len(got) != 10 {
		t.Fatalf("embed: %d vectors, %v", len(got), err)
	}
	if b := local.batchSizes(); !slices.Equal(b, []int{3, 3, 3, 1}) {
		t.Errorf("batches = %v, want [3 3 3 1]", b)
	}
	direct, _ := local.Embedder.Embed(context.Background(), "hash-64", texts)
	for i := range texts {
		if !slices.Equal(got[i], direct[i]) {
			t.Errorf("text %d out of order after splitting", i)
		}
	}

}

func TestInProcessConnectorWins(t *testing.T) {
	h := pluginhost.New(pluginhost.WithDir(pluginDir(t, "docindex-connector-fixture")), pluginhost.WithLogger(slog.New(newRecorder(t))))
	local := stubConnector{}
	h.RegisterConnector("fixture", local)
	must(t, h.Start(context.Background()))
	defer h.Close()
	c, ok := h.Connector("fixture")
	if !ok || c != connector.Connector(local) {
		t.Fatalf("Connector(fixture) = %T, want the in-process one", c)
	}
	infos := h.Plugins()
	if len(infos) != 1 || infos[0].Status != pluginhost.StatusInProcess || infos[0].Version != "9.9.9" {
		t.Errorf("plugins = %+v", infos)
	}
}

func TestBrokenPluginIsReportedNotFatal(t *testing.T) {
	dir := pluginDir(t, "docindex-embedder-hash")
	must(t, os.WriteFile(filepath.Join(dir, "docindex-embedder-broken"), []byte("#!/bin/sh\necho oops >&2\nexit 1\n"), 0o755))
	rec := newRecorder(t)
	h := startHost(t, rec, pluginhost.WithDir(dir), pluginhost.WithStartTimeout(5*time.Second))
	models, err := h.Models(context.Background())
	if err != nil || len(models) != 2 {
		t.Fatalf("models = %+v, %v", models, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := pluginInfo(t, h, "broken")
		if p.Status == pluginhost.StatusFailed {
			if !strings.Contains(p.Error, "gave up") {
				t.Errorf("error = %q", p.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broken plugin was not given up: %+v", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, ok := rec.find("giving up on plugin", map[string]string{"plugin": "broken"}); !ok {
		t.Errorf("giving up was not logged:\n%s", rec.dump())
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// stubConnector is an in-process connector that only describes itself.
type stubConnector struct{ connector.Connector }

func (stubConnector) Describe(context.Context) (connector.Description, error) {
	return connector.Description{Type: "fixture", Version: "9.9.9"}, nil
}

// counting is an in-process embedder with a batch limit that records the
// batches it is given.
type counting struct {
	embedder.Embedder
	maxBatch int
	mu       sync.Mutex
	batches  []int
}

func (c *counting) Models(ctx context.Context) ([]embedder.Model, error) {
	ms, err := c.Embedder.Models(ctx)
	for i := range ms {
		ms[i].MaxBatch = c.maxBatch
	}
	return ms, err
}

func (c *counting) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.batches = append(c.batches, len(texts))
	c.mu.Unlock()
	return c.Embedder.Embed(ctx, model, texts)
}

func (c *counting) batchSizes() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.batches)
}

func TestStartErrors(t *testing.T) {
	h := pluginhost.New(pluginhost.WithDir(filepath.Join(t.TempDir(), "missing")), pluginhost.WithLogger(slog.New(newRecorder(t))))
	if err := h.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "plugin directory") {
		t.Errorf("missing directory: %v", err)
	}
	h = pluginhost.New(pluginhost.WithLogger(slog.New(newRecorder(t))))
	must(t, h.Start(context.Background())) // no directory: in-process only
	if err := h.Start(context.Background()); err == nil {
		t.Error("a second Start succeeded")
	}
	must(t, h.Close())
	must(t, h.Close())
}
