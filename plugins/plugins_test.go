package plugins_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/docindex/docindex/plugins"
)

func TestParseName(t *testing.T) {
	for in, want := range map[string][2]string{
		"docindex-embedder-hash":         {"embedder", "hash"},
		"docindex-connector-my_source-2": {"connector", "my_source-2"},
	} {
		k, n, ok := plugins.ParseName(in)
		if !ok || string(k) != want[0] || n != want[1] {
			t.Errorf("ParseName(%q) = %q %q %v", in, k, n, ok)
		}
	}
	for _, in := range []string{"docindex-embedder-", "docindex-embedder-Hash", "docindex-embedder--x", "docindex-other-x", "glove-100d.bin", "docindex-connector-a b", "docindex-embedder-x.exe"} {
		if _, _, ok := plugins.ParseName(in); ok {
			t.Errorf("ParseName(%q) accepted", in)
		}
	}
	if plugins.KindConnector.Prefix() != "docindex-connector-" {
		t.Error(plugins.KindConnector.Prefix())
	}
}

// TestLoggerWritesWhatTheHostParses checks the shape go-plugin's host side
// parses: one JSON object per line with @level and @message, and the level
// the host asked for.
func TestLoggerWritesWhatTheHostParses(t *testing.T) {
	var buf bytes.Buffer
	t.Setenv(plugins.LogLevelEnv, "warn")
	l := plugins.NewLogger(&buf).With("source", "s1").WithGroup("sync")
	l.Info("dropped: below the host's level")
	l.Warn("slow page", "url", "https://x", slog.Group("http", "status", 429), "@message", "mine")
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 1 {
		t.Fatalf("%d lines: %q", len(lines), buf.String())
	}
	var line map[string]any
	if err := json.Unmarshal(lines[0], &line); err != nil {
		t.Fatalf("not JSON: %q", lines[0])
	}
	want := map[string]any{"@level": "warn", "@message": "slow page", "source": "s1", "sync.url": "https://x", "sync.http.status": float64(429), "sync.@message": "mine"}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %v, want %v (line %s)", k, line[k], v, lines[0])
		}
	}
}
