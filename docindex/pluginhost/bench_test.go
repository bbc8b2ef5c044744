package pluginhost_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/pluginhost"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

// BenchmarkEmbedPluginOverhead measures Embed through the plugin boundary
// (host -> gRPC over a Unix socket with mTLS -> hash plugin process) against
// the same embedder in process, in the same run, at batch 1, 16 and 64.
//
// Wall time: the two paths alternate call by call, so both see the same
// machine load; reported per call with their difference and ratio.
// CPU time: on a busy machine wall time mostly measures waiting for a core,
// so the CPU both processes spend per call (from /proc schedstat, in ns) is
// reported too; its difference is what the boundary costs on an idle one.
func BenchmarkEmbedPluginOverhead(b *testing.B) {
	h := pluginhost.New(
		pluginhost.WithDir(pluginDir(b, "docindex-embedder-hash")),
		pluginhost.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err := h.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	info := pluginInfoB(b, h, "hash")
	pid := info.PID
	local := hash.New(hash.WithDimensions(hash.DefaultDimensions), hash.WithDimensions(1024))
	ctx := context.Background()
	// A chunk of about 1 KB, the size a chunker typically produces.
	chunk := strings.Repeat("Plugins run as separate processes and talk gRPC to the server. ", 16)
	for _, n := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			texts := make([]string, n)
			for i := range texts {
				texts[i] = fmt.Sprintf("%d %s", i, chunk)
			}
			viaPlugin := func() {
				if _, err := h.Embed(ctx, "hash-256", texts); err != nil {
					b.Fatal(err)
				}
			}
			inProcess := func() {
				if _, err := local.Embed(ctx, "hash-256", texts); err != nil {
					b.Fatal(err)
				}
			}
			viaPlugin() // warm up connections and caches outside the timing

			var wallPlugin, wallLocal time.Duration
			calls := 0
			for b.Loop() {
				t0 := time.Now()
				viaPlugin()
				t1 := time.Now()
				inProcess()
				wallLocal += time.Since(t1)
				wallPlugin += t1.Sub(t0)
				calls++
			}
			// CPU per call, each path on its own (CPU cannot be split
			// between two paths that alternate).
			cpuRounds := max(calls, 200)
			host0, plug0 := cpuNanos(b, os.Getpid()), cpuNanos(b, pid)
			for range cpuRounds {
				viaPlugin()
			}
			host1, plug1 := cpuNanos(b, os.Getpid()), cpuNanos(b, pid)
			for range cpuRounds {
				inProcess()
			}
			host2 := cpuNanos(b, os.Getpid())

			p := float64(wallPlugin.Nanoseconds()) / 1e3 / float64(calls)
			l := float64(wallLocal.Nanoseconds()) / 1e3 / float64(calls)
			cp := float64(host1-host0+plug1-plug0) / 1e3 / float64(cpuRounds)
			cl := float64(host2-host1) / 1e3 / float64(cpuRounds)
			b.ReportMetric(p, "plugin-µs/call")
			b.ReportMetric(l, "inproc-µs/call")
			b.ReportMetric(p-l, "overhead-µs/call")
			b.ReportMetric(p/l, "plugin/inproc")
			b.ReportMetric(cp-cl, "cpu-overhead-µs/call")
			b.ReportMetric(cp/cl, "cpu-plugin/inproc")
			// The embedder protocol version host and plugin agreed on
			// (version 2 embeds over a long-lived stream).
			b.ReportMetric(float64(info.Protocol), "protocol")
		})
	}
}

func pluginInfoB(b *testing.B, h *pluginhost.Host, name string) pluginhost.PluginInfo {
	for _, p := range h.Plugins() {
		if p.Name == name {
			return p
		}
	}
	b.Fatalf("plugin %q not running", name)
	return pluginhost.PluginInfo{}
}

// cpuNanos is the CPU time, in ns, that the threads of process pid have run
// (the first field of each /proc/<pid>/task/<tid>/schedstat).
func cpuNanos(b *testing.B, pid int) int64 {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		b.Fatalf("no schedstat for process %d (Linux with /proc needed): %v", pid, err)
	}
	var sum int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // the thread just ended
		}
		f := strings.Fields(string(data))
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		sum += n
	}
	return sum
}
