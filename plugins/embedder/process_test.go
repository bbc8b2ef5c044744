package embedder_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
	"github.com/docindex/docindex/plugins/internal/wire"
	"github.com/docindex/docindex/plugins/plugintest"
)

// helperEnv makes the test binary a plugin process: "new" serves the hash
// embedder with this SDK, "old" as a plugin built for protocol version 1
// only would.
const helperEnv = "DOCINDEX_EMBEDDER_TEST_PLUGIN"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "new":
		wire.Serve(embedder.VersionedPlugins(hash.New()))
	case "old":
		wire.Serve(embedder.OldPlugins(hash.New()))
	}
	os.Exit(2)
}

// newHost and oldHost are the plugin sets of a host built with this SDK and
// of one built when protocol version 1 was the only one.
func newHost() map[int]plugin.PluginSet { return embedder.VersionedPlugins(nil) }
func oldHost() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{1: embedder.VersionedPlugins(nil)[1]}
}

// startProcess runs the test binary as plugin kind ("new" or "old") the way
// the server runs plugins (a subprocess, gRPC over a Unix socket with
// AutoMTLS), connects with the host plugin sets given, and returns the
// dispensed client with the protocol version the two agreed on.
func startProcess(t testing.TB, kind string, host map[int]plugin.PluginSet) (embedder.Embedder, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+kind)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  plugins.Handshake(),
		VersionedPlugins: host,
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     30 * time.Second,
		Logger:           hclog.NewNullLogger(),
		GRPCDialOptions:  wire.DialOptions(),
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rpc.Dispense(string(plugins.KindEmbedder))
	if err != nil {
		t.Fatal(err)
	}
	return raw.(embedder.Embedder), client.NegotiatedVersion()
}

func TestProtocolVersions(t *testing.T) {
	local := hash.New()
	model := hash.ModelID(hash.DefaultDimensions)
	texts := []string{"one text", "another text", strings.Repeat("long ", 4000)}
	want, err := local.Embed(context.Background(), model, texts)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, plugin string
		host         map[int]plugin.PluginSet
		version      int
	}{
		{"new host, new plugin", "new", newHost(), 2},
		{"new host, version-1 plugin", "old", newHost(), 1},
		{"version-1 host, new plugin", "new", oldHost(), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, version := startProcess(t, c.plugin, c.host)
			if version != c.version {
				t.Fatalf("negotiated protocol version %d, want %d", version, c.version)
			}
			models, err := e.Models(context.Background())
			if err != nil || len(models) != 1 || models[0].ID != model {
				t.Fatalf("models: %v, %v", models, err)
			}
			for range 3 { // the stream of version 2 is reused
				got, err := e.Embed(context.Background(), model, texts)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if !slices.Equal(got[i], want[i]) {
						t.Fatalf("vector %d differs from the in-process one", i)
					}
				}
			}
			if _, err := e.Embed(context.Background(), "nope", texts); !errors.Is(err, embedder.ErrUnknownModel) {
				t.Errorf("unknown model: %v", err)
			}
			if streams := embedder.Streams(e); (c.version == 2) != (streams > 0) {
				t.Errorf("protocol %d with %d idle streams", c.version, streams)
			}
		})
	}
}

// BenchmarkProtocols compares the two protocol versions against the hash
// embedder in process, on real plugin processes (Unix socket, AutoMTLS),
// calls interleaved so that all three see the same machine load.
func BenchmarkProtocols(b *testing.B) {
	v1, _ := startProcess(b, "new", oldHost())
	v2, _ := startProcess(b, "new", newHost())
	local := hash.New()
	model := hash.ModelID(hash.DefaultDimensions)
	ctx := context.Background()
	chunk := strings.Repeat("Plugins run as separate processes and talk gRPC to the server. ", 16)
	for _, n := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			texts := make([]string, n)
			for i := range texts {
				texts[i] = fmt.Sprintf("%d %s", i, chunk)
			}
			paths := []embedder.Embedder{v1, v2, local}
			var wall [3]time.Duration
			for _, e := range paths {
				if _, err := e.Embed(ctx, model, texts); err != nil {
					b.Fatal(err)
				}
			}
			calls := 0
			for b.Loop() {
				// Which plugin goes first alternates: a call right after
				// the in-process one finds the host busy, the next one
				// finds it idle, and that alone differs by tens of µs.
				order := []int{0, 1, 2}
				if calls%2 == 1 {
					order = []int{1, 0, 2}
				}
				for _, i := range order {
					e := paths[i]
					t0 := time.Now()
					if _, err := e.Embed(ctx, model, texts); err != nil {
						b.Fatal(err)
					}
					wall[i] += time.Since(t0)
				}
				calls++
			}
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(calls) }
			b.ReportMetric(us(wall[2]), "inproc-µs/call")
			b.ReportMetric(us(wall[0]-wall[2]), "v1-overhead-µs/call")
			b.ReportMetric(us(wall[1]-wall[2]), "v2-overhead-µs/call")
		})
	}
}

// The conformance suite passes over both protocol versions, between real
// processes.
func TestSuiteOverEachVersion(t *testing.T) {
	for name, host := range map[string]map[int]plugin.PluginSet{"v1": oldHost(), "v2": newHost()} {
		t.Run(name, func(t *testing.T) {
			e, _ := startProcess(t, "new", host)
			plugintest.RunEmbedderSuite(t, e, plugintest.Deterministic())
		})
	}
}
