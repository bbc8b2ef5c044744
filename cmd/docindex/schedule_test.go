package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/docindextest"
)

type server struct {
	t    *testing.T
	base string
	key  string
	logs *syncBuffer
}

func startServer(t *testing.T, bin string, env []string) *server {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(append([]string{}, env...), "DOCINDEX_ADDR="+addr)
	logs := &syncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	s := &server{t: t, base: "http://" + addr, logs: logs}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if res, err := http.Get(s.base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not healthy:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *server) call(method, path string, body any, out any) int {
	s.t.Helper()
	raw, _ := json.Marshal(body)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, s.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
	}
	return res.StatusCode
}

// Two server processes against one database, both running the scheduler every 300 ms: an hourly
// source is synced exactly once.
func TestTwoServersSyncAScheduledSourceOnce(t *testing.T) {
	bin := build(t)
	pluginDir := t.TempDir()
	conn := exec.Command("go", "build", "-o", filepath.Join(pluginDir, "docindex-connector-webcrawl"), "./testdata/countconn")
	if out, err := conn.CombinedOutput(); err != nil {
		t.Fatalf("build connector: %v\n%s", err, out)
	}
	syncLog := filepath.Join(t.TempDir(), "syncs.log")
	env := append(os.Environ(), "DOCINDEX_DATABASE_URL="+docindextest.URL(t), "DOCINDEX_DATA_DIR="+t.TempDir(),
		"DOCINDEX_PLUGIN_DIR="+pluginDir, "DOCINDEX_SECRET_KEY=k", "DOCINDEX_SCHEDULER_INTERVAL=300ms",
		"DOCINDEX_LOG_LEVEL=debug")
	mint := exec.Command(bin, "apikey", "create", "--email", "ops@example.com", "--admin")
	mint.Env = env
	out, err := mint.Output()
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(out))

	a := startServer(t, bin, env)
	b := startServer(t, bin, env)
	a.key, b.key = key, key

	var coll struct{ ID string }
	if code := a.call("POST", "/api/collections", map[string]any{"name": "crawled"}, &coll); code != 201 {
		t.Fatalf("create collection: %d", code)
	}
	var src struct{ ID string }
	if code := b.call("POST", "/api/sources", map[string]any{"name": "site", "type": "webcrawl", "syncSchedule": "hourly",
		"collectionId": coll.ID, "config": map[string]any{"url": "http://example.invalid", "log": syncLog}}, &src); code != 201 {
		t.Fatalf("create source: %d", code)
	}
	// Give both schedulers many turns.
	time.Sleep(4 * time.Second)
	var hist struct {
		Syncs []struct{ Status, Trigger string } `json:"syncs"`
	}
	a.call("GET", "/api/sources/"+src.ID+"/syncs", nil, &hist)
	data, _ := os.ReadFile(syncLog)
	lines := strings.Count(string(data), "\n")
	if lines != 1 || len(hist.Syncs) != 1 || hist.Syncs[0].Trigger != "schedule" || hist.Syncs[0].Status != "completed" {
		t.Fatalf("%d connector syncs, history %+v\nserver a:\n%s\nserver b:\n%s", lines, hist.Syncs, a.logs.String(), b.logs.String())
	}

	// The CLI starts a sync now and waits for it and its jobs, printing the counts.
	cli := exec.Command(bin, "sources", "sync", src.ID, "--wait")
	cli.Env = append(os.Environ(), "DOCINDEX_URL="+a.base, "DOCINDEX_API_KEY="+key)
	out, err = cli.CombinedOutput()
	if err != nil {
		t.Fatalf("sources sync --wait: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "completed: seen 1, created 0, updated 0, deleted 0, skipped 1, failed 0") {
		t.Fatalf("sources sync --wait printed:\n%s", out)
	}
	a.call("GET", "/api/sources/"+src.ID+"/syncs", nil, &hist)
	if len(hist.Syncs) != 2 || hist.Syncs[0].Trigger != "manual" {
		t.Fatalf("history after the CLI sync: %+v", hist.Syncs)
	}
}
