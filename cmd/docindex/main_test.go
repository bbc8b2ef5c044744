package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/docindextest"
)

// syncBuffer collects a process's stderr while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "docindex")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// The binary migrates, mints a key, serves with one log line per request, and stops cleanly on
// SIGTERM.
func TestServeLifecycle(t *testing.T) {
	bin := build(t)
	addr := freeAddr(t)
	env := append(os.Environ(), "DOCINDEX_DATABASE_URL="+docindextest.EmptyURL(t), "DOCINDEX_ADDR="+addr,
		"DOCINDEX_DATA_DIR="+t.TempDir(), "DOCINDEX_PLUGIN_DIR="+t.TempDir(), "DOCINDEX_JWT_SECRET=s")

	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("docindex %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	if out := run("migrate"); !strings.Contains(out, "migrations applied") {
		t.Fatalf("migrate printed %q", out)
	}
	key := run("apikey", "create", "--email", "Ops@Example.com", "--client-name", "test", "--admin")
	if !strings.HasPrefix(key, "dik_") {
		t.Fatalf("apikey create printed %q", key)
	}
	if out := run("plugins", "list"); !strings.Contains(out, "hash") {
		t.Fatalf("plugins list printed %q", out)
	}

	srv := exec.Command(bin, "serve")
	srv.Env = env
	var logs syncBuffer
	srv.Stderr = &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	t.Cleanup(func() { _ = srv.Process.Kill() })

	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not healthy: %v\n%s", err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	req, _ := http.NewRequest("GET", base+"/admin/api-keys", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "ops@example.com") && !strings.Contains(string(body), "Ops@Example.com") {
		t.Fatalf("admin key listing: %d %s", res.StatusCode, body)
	}

	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM\n%s", err, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop after SIGTERM\n%s", logs.String())
	}
	requests := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["msg"] == "request" && rec["path"] == "/admin/api-keys" && rec["status"] == float64(200) {
			requests++
		}
	}
	if requests != 1 {
		t.Fatalf("%d request log lines for the one API request, want 1:\n%s", requests, logs.String())
	}
}
