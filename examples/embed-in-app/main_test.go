package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/auth"
	"github.com/docindex/docindex/docindex/docindextest"
)

// The example builds, starts as its own process, and serves both its route and docindex's.
func TestEmbedInApp(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "embed-in-app")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+docindextest.URL(t), "JWT_SECRET=s3cret", "ADDR="+addr)
	var logs strings.Builder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(base + "/docindex/healthz")
		if err == nil && res.StatusCode == 200 {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("example did not become healthy: %v\n%s", err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("/hello", ""); code != 200 || !strings.Contains(body, "host app") {
		t.Fatalf("host route: %d %q", code, body)
	}
	tok, err := auth.MintHS256([]byte("s3cret"), auth.Claims{Subject: "u1", Email: "u1@example.com"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get("/docindex/api/collections", tok); code != 200 || !strings.Contains(body, `"collections"`) {
		t.Fatalf("docindex route: %d %q", code, body)
	}
	if code, _ := get("/docindex/api/collections", ""); code != 401 {
		t.Fatalf("docindex route without token: %d", code)
	}
	if code, body := get("/docindex/api/embedding-models", tok); code != 200 || !strings.Contains(body, "hash") {
		t.Fatalf("embedding models: %d %s", code, body)
	}
}
