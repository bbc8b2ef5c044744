package quickstart

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
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

type client struct {
	t    *testing.T
	base string
	key  string
}

func (c *client) do(method, path string, body io.Reader, ctype string, out any) int {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
		}
	}
	return res.StatusCode
}

// upload is `curl -F collectionId=... -F file=@name`.
func (c *client) upload(collectionID, name string) string {
	c.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("collectionId", collectionID)
	fw, _ := w.CreateFormFile("file", name)
	data, err := os.ReadFile(name)
	if err != nil {
		c.t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = w.Close()
	var res struct {
		File  struct{ ID, Status string } `json:"file"`
		JobID string                      `json:"jobId"`
	}
	if code := c.do("POST", "/files", &body, w.FormDataContentType(), &res); code != 201 {
		c.t.Fatalf("upload %s: %d", name, code)
	}
	if res.File.Status != "pending" || res.JobID == "" {
		c.t.Fatalf("upload %s: %+v", name, res)
	}
	return res.File.ID
}

func TestWalkthrough(t *testing.T) {
	root, _ := filepath.Abs("../..")
	bin := filepath.Join(t.TempDir(), "docindex")
	build := exec.Command("go", "build", "-o", bin, "./cmd/docindex")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := append(os.Environ(), "DOCINDEX_DATABASE_URL="+docindextest.URL(t), "DOCINDEX_ADDR="+addr,
		"DOCINDEX_DATA_DIR="+t.TempDir(), "DOCINDEX_PLUGIN_DIR="+t.TempDir())
	mint := exec.Command(bin, "apikey", "create", "--email", "newcomer@example.com", "--admin")
	mint.Env = env
	out, err := mint.Output()
	if err != nil {
		t.Fatalf("apikey create: %v", err)
	}
	srv := exec.Command(bin, "serve")
	srv.Env = env
	var logs bytes.Buffer
	srv.Stderr = &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Signal(syscall.SIGTERM); _ = srv.Wait() })
	c := &client{t: t, base: "http://" + addr, key: strings.TrimSpace(string(out))}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if res, err := http.Get(c.base + "/healthz"); err == nil && res.StatusCode == 200 {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not up:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	var coll struct{ ID string }
	if code := c.do("POST", "/api/collections", strings.NewReader(`{"displayName": "Field notes"}`), "application/json", &coll); code != 201 {
		t.Fatalf("create collection: %d", code)
	}
	files := map[string]string{}
	for _, name := range []string{"sample.pdf", "sample.docx", "sample.html"} {
		files[name] = c.upload(coll.ID, name)
	}

	// Watch the jobs: queued -> running -> completed.
	seen := map[string]bool{}
	for deadline := time.Now().Add(60 * time.Second); ; {
		var list struct {
			Jobs []struct{ Status, FileName string } `json:"jobs"`
		}
		c.do("GET", "/jobs?collectionId="+coll.ID, nil, "", &list)
		done := 0
		for _, j := range list.Jobs {
			seen[j.Status] = true
			if j.Status == "completed" {
				done++
			}
			if j.Status == "failed" {
				t.Fatalf("job of %s failed:\n%s", j.FileName, logs.String())
			}
		}
		if done == len(files) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs did not complete: %+v", list.Jobs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for name, id := range files {
		var d struct {
			File struct{ Status string }   `json:"file"`
			Jobs []struct{ Status string } `json:"jobs"`
		}
		c.do("GET", "/files/"+id, nil, "", &d)
		if d.File.Status != "indexed" || len(d.Jobs) != 1 || d.Jobs[0].Status != "completed" {
			t.Errorf("%s: %+v", name, d)
		}
	}
	for name, query := range map[string]string{
		"sample.pdf":  "quick brown fox jumps over the lazy dog",
		"sample.docx": "grafted pear trees bear fruit",
		"sample.html": "steam siren sounded twice each minute",
	} {
		var res struct {
			Results []struct {
				FileName string `json:"fileName"`
				Text     string `json:"text"`
			} `json:"results"`
		}
		body := fmt.Sprintf(`{"query": %q, "topK": 3}`, query)
		if code := c.do("POST", "/api/collections/"+coll.ID+"/search", strings.NewReader(body), "application/json", &res); code != 200 {
			t.Fatalf("search: %d", code)
		}
		if len(res.Results) == 0 || res.Results[0].FileName != name {
			t.Errorf("search %q: best hit %+v, want a chunk of %s", query, res.Results, name)
		}
	}
}
