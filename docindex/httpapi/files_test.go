package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/httpapi"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/vectorstore"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

// Documents whose sentences the tests look for after indexing.
const (
	textDoc = "Field notes from the north coast.\n\n" +
		"The lighthouse keeper counted forty seven ships before the storm arrived.\n\n" +
		"Gulls nested on the rocks below the tower all summer."
	textSentence = "The lighthouse keeper counted forty seven ships before the storm arrived."

	markdownDoc = "# Orchard handbook\n\n## Pruning\n\n" +
		"Apple trees are pruned in late winter while the buds are still dormant.\n\n" +
		"## Harvest\n\nPears ripen off the tree in a cool cellar.\n"
	markdownSentence = "Apple trees are pruned in late winter while the buds are still dormant."

	htmlDoc = `<!DOCTYPE html><html><head><title>Volcanoes</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<main><article><h1>Volcanoes</h1>
<p>Basalt columns form when thick lava cools slowly and cracks into hexagons.</p>
<p>Obsidian is volcanic glass that cooled too fast for crystals to grow.</p>
</article></main><footer>Copyright</footer></body></html>`
	htmlSentence = "Basalt columns form when thick lava cools slowly and cracks into hexagons."
)

// newIndexServer starts the real stack (hash embeddings, a blob directory, no workers yet)
// whose every exchange is checked against openapi.yaml.
func newIndexServer(t *testing.T, opts ...docindex.Option) *docindextest.Server {
	t.Helper()
	s := docindextest.NewServer(t, append([]docindex.Option{docindex.WithEmbedders(hash.New())}, opts...)...)
	s.Check = contractCheck(t)
	return s
}

// sharedCollection creates a rag collection of owner, shared with coAdmin as admin and with
// viewer as viewer, and returns its id with a token per kind of caller.
func sharedCollection(t *testing.T, s *docindextest.Server, name string) (string, map[string]string) {
	t.Helper()
	own := s.Token(owner)
	id := createCollection(t, s, own, map[string]any{"name": name})["id"].(string)
	share(t, s, own, id, map[string]any{"type": "user", "target": coAdmin.Email, "role": "admin"})
	share(t, s, own, id, map[string]any{"type": "user", "target": viewer.Email, "role": "viewer"})
	return id, map[string]string{
		"owner": own, "shared admin": s.Token(coAdmin), "viewer": s.Token(viewer), "outsider": s.Token(outsider),
		"global admin": s.Token(root), "read-only key": s.Key(owner, "read"),
	}
}

// upload posts a file and returns the stored file and the id of its job.
func upload(t *testing.T, s *docindextest.Server, token, collectionID, name, ctype, content string) (map[string]any, string) {
	t.Helper()
	r := s.Upload(token, docindextest.FileUpload{CollectionID: collectionID, Name: name, ContentType: ctype, Body: strings.NewReader(content)})
	wantStatus(t, r, http.StatusCreated)
	var body struct {
		File  map[string]any `json:"file"`
		JobID string         `json:"jobId"`
	}
	r.JSON(t, &body)
	return body.File, body.JobID
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// getJob returns the job detail of id.
func getJob(t *testing.T, s *docindextest.Server, token, id string) (job, file map[string]any) {
	t.Helper()
	r := s.Do("GET", "/jobs/"+id, token, nil)
	wantStatus(t, r, http.StatusOK)
	var body struct {
		Job  map[string]any `json:"job"`
		File map[string]any `json:"file"`
	}
	r.JSON(t, &body)
	return body.Job, body.File
}

// waitJob waits until the job reached a final state (completed, failed, cancelled) and returns it.
func waitJob(t *testing.T, s *docindextest.Server, token, id string) map[string]any {
	t.Helper()
	var job map[string]any
	eventually(t, "job "+id+" to finish", func() bool {
		job, _ = getJob(t, s, token, id)
		switch job["status"] {
		case "completed", "failed", "cancelled":
			return true
		}
		return false
	})
	return job
}

func getFile(t *testing.T, s *docindextest.Server, token, id string) (map[string]any, []map[string]any) {
	t.Helper()
	r := s.Do("GET", "/files/"+id, token, nil)
	wantStatus(t, r, http.StatusOK)
	var body struct {
		File map[string]any   `json:"file"`
		Jobs []map[string]any `json:"jobs"`
	}
	r.JSON(t, &body)
	return body.File, body.Jobs
}

// chunkCount counts the chunks of a file in its collection's chunk table.
func chunkCount(t *testing.T, s *docindextest.Server, collectionID, fileID string) int {
	t.Helper()
	var n int
	err := s.DB.QueryRowContext(context.Background(),
		"SELECT count(*) FROM "+vectorstore.Relation(uuid.MustParse(collectionID))+" k WHERE file_id = ?", fileID).Scan(&n)
	if err != nil {
		t.Fatalf("count chunks: %v", err)
	}
	return n
}

// blobFiles lists the regular files under the blob directory (attribute files included).
func blobFiles(t *testing.T, s *docindextest.Server) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(s.BlobDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk blob dir: %v", err)
	}
	return out
}

func blobExists(t *testing.T, s *docindextest.Server, blobPath string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(s.BlobDir, filepath.FromSlash(blobPath)))
	return err == nil
}

func randomBytes(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	// A NUL up front: no text signature (a UTF-16 byte-order mark would make it text) by chance.
	b[0], b[1], b[2], b[3] = 0, 0xff, 0, 0xfe
	return string(b)
}

func TestUploadStoresFileAndQueuesJob(t *testing.T) {
	s := newIndexServer(t)
	own := s.Token(owner)
	cid := createCollection(t, s, own, map[string]any{"name": "notes"})["id"].(string)

	r := s.Upload(own, docindextest.FileUpload{CollectionID: cid, Metadata: `{"author": "Ann", "tags": ["sea", "ships"], "n": 3}`,
		Name: "notes.txt", ContentType: "text/plain", Body: strings.NewReader(textDoc)})
	wantStatus(t, r, http.StatusCreated)
	var body struct {
		File  map[string]any `json:"file"`
		JobID string         `json:"jobId"`
	}
	r.JSON(t, &body)
	f := body.File
	if f["name"] != "notes.txt" || f["status"] != "pending" || f["collectionId"] != cid || f["collectionName"] != "notes" ||
		f["contentType"] != "text/plain" || f["sizeBytes"] != float64(len(textDoc)) || f["lastIndexedAt"] != nil {
		t.Errorf("uploaded file %v", f)
	}
	meta, _ := f["sourceMetadata"].(map[string]any)
	if meta["author"] != "Ann" || meta["n"] != float64(3) || len(meta["tags"].([]any)) != 2 {
		t.Errorf("metadata not merged into sourceMetadata: %v", f["sourceMetadata"])
	}
	blobPath := f["blobPath"].(string)
	content, err := os.ReadFile(filepath.Join(s.BlobDir, filepath.FromSlash(blobPath)))
	if err != nil || string(content) != textDoc {
		t.Fatalf("blob %s: %q, %v", blobPath, content, err)
	}

	// The job is queued, first in the queue; nothing runs it yet.
	job, jf := getJob(t, s, own, body.JobID)
	if job["status"] != "queued" || job["type"] != "index" || job["fileId"] != f["id"] || job["retryCount"] != float64(0) ||
		job["maxRetries"] != float64(queue.DefaultMaxRetries) || job["startedAt"] != nil || job["error"] != nil {
		t.Errorf("queued job %v", job)
	}
	if jf["id"] != f["id"] {
		t.Errorf("job detail file %v", jf)
	}
	var list struct {
		Jobs []map[string]any `json:"jobs"`
	}
	s.Do("GET", "/jobs?fileId="+f["id"].(string), own, nil).JSON(t, &list)
	if len(list.Jobs) != 1 || list.Jobs[0]["queuePosition"] != float64(1) || list.Jobs[0]["fileName"] != "notes.txt" ||
		list.Jobs[0]["collectionId"] != cid || list.Jobs[0]["collectionName"] != "notes" {
		t.Errorf("job list %v", list.Jobs)
	}

	// A file part without a content type is sniffed.
	f2, _ := upload(t, s, own, cid, "page", "", "<!DOCTYPE html><html><body><p>Hello there</p></body></html>")
	if ct, _ := f2["contentType"].(string); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("sniffed content type %q", ct)
	}
	// No metadata: sourceMetadata is left out.
	if _, ok := f2["sourceMetadata"]; ok {
		t.Errorf("empty sourceMetadata sent: %v", f2)
	}
}

// TestJobLifecycle watches an upload's job go queued -> running -> completed, holding it while
// it runs.
func TestJobLifecycle(t *testing.T) {
	s := newIndexServer(t)
	own := s.Token(owner)
	cid := createCollection(t, s, own, map[string]any{"name": "lifecycle"})["id"].(string)
	f, jobID := upload(t, s, own, cid, "notes.txt", "text/plain", textDoc)
	if job, _ := getJob(t, s, own, jobID); job["status"] != "queued" {
		t.Fatalf("job after upload: %v", job)
	}

	started := make(chan string, 1)
	release := make(chan struct{})
	s.StartWorkers(worker.HandlerFunc(func(ctx context.Context, j queue.Job) error {
		started <- j.ID.String()
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return s.Svc.Handle(ctx, j)
	}), worker.WithWorkers(1))
	select {
	case id := <-started:
		if id != jobID {
			t.Fatalf("worker took job %s, want %s", id, jobID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no worker took the job")
	}
	job, _ := getJob(t, s, own, jobID)
	if job["status"] != "running" || job["startedAt"] == nil || job["completedAt"] != nil {
		t.Errorf("running job %v", job)
	}
	var list struct {
		Jobs []map[string]any `json:"jobs"`
	}
	s.Do("GET", "/jobs?status=running", own, nil).JSON(t, &list)
	if len(list.Jobs) != 1 || list.Jobs[0]["id"] != jobID || list.Jobs[0]["queuePosition"] != nil {
		t.Errorf("running jobs %v", list.Jobs)
	}
	r := s.Do("DELETE", "/jobs/"+jobID, own, nil)
	wantStatus(t, r, http.StatusConflict)
	if !strings.Contains(string(r.Body), "Cannot delete a running job") {
		t.Errorf("409 body %s", r.Body)
	}
	close(release)

	job = waitJob(t, s, own, jobID)
	if job["status"] != "completed" || job["completedAt"] == nil || job["error"] != nil || job["retryCount"] != float64(0) {
		t.Fatalf("finished job %v", job)
	}
	file, jobs := getFile(t, s, own, f["id"].(string))
	if file["status"] != "indexed" || file["lastIndexedAt"] == nil {
		t.Errorf("indexed file %v", file)
	}
	if len(jobs) != 1 || jobs[0]["id"] != jobID {
		t.Errorf("file jobs %v", jobs)
	}
	if n := chunkCount(t, s, cid, f["id"].(string)); n < 1 {
		t.Errorf("%d chunks written", n)
	}
}

func TestUploadErrors(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "target")
	dataset := createCollection(t, s, tok["owner"], map[string]any{"name": "rows", "type": "dataset", "datasetMode": "live",
		"tables": map[string]any{"t": map[string]any{"columns": []any{map[string]any{"name": "a", "type": "text"}}}}})["id"].(string)
	body := func() *strings.Reader { return strings.NewReader(textDoc) }
	for name, tc := range map[string]struct {
		token  string
		up     docindextest.FileUpload
		status int
	}{
		"missing file":            {tok["owner"], docindextest.FileUpload{CollectionID: cid}, 400},
		"missing collectionId":    {tok["owner"], docindextest.FileUpload{Name: "a.txt", Body: body()}, 400},
		"malformed id":            {tok["owner"], docindextest.FileUpload{CollectionID: "not-a-uuid", Name: "a.txt", Body: body()}, 400},
		"metadata not JSON":       {tok["owner"], docindextest.FileUpload{CollectionID: cid, Metadata: "{author", Name: "a.txt", Body: body()}, 400},
		"metadata an array":       {tok["owner"], docindextest.FileUpload{CollectionID: cid, Metadata: `["a"]`, Name: "a.txt", Body: body()}, 400},
		"metadata null":           {tok["owner"], docindextest.FileUpload{CollectionID: cid, Metadata: `null`, Name: "a.txt", Body: body()}, 400},
		"live dataset":            {tok["owner"], docindextest.FileUpload{CollectionID: dataset, Name: "a.txt", Body: body()}, 400},
		"unknown collection":      {tok["owner"], docindextest.FileUpload{CollectionID: uuid.NewString(), Name: "a.txt", Body: body()}, 404},
		"viewer":                  {tok["viewer"], docindextest.FileUpload{CollectionID: cid, Name: "a.txt", Body: body()}, 404},
		"outsider":                {tok["outsider"], docindextest.FileUpload{CollectionID: cid, Name: "a.txt", Body: body()}, 404},
		"read-only key":           {tok["read-only key"], docindextest.FileUpload{CollectionID: cid, Name: "a.txt", Body: body()}, 403},
		"no token":                {"", docindextest.FileUpload{CollectionID: cid, Name: "a.txt", Body: body()}, 401},
		"unknown for an outsider": {tok["outsider"], docindextest.FileUpload{CollectionID: uuid.NewString(), Name: "a.txt", Body: body()}, 404},
	} {
		t.Run(name, func(t *testing.T) { wantStatus(t, s.Upload(tc.token, tc.up), tc.status) })
	}
	t.Run("not multipart", func(t *testing.T) {
		wantStatus(t, s.Do("POST", "/files", tok["owner"], map[string]any{"collectionId": cid}), 400)
	})
	t.Run("collectionId after the file", func(t *testing.T) {
		// The file streams as it arrives, so the form fields must come first.
		raw := "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nhello\r\n" +
			"--B\r\nContent-Disposition: form-data; name=\"collectionId\"\r\n\r\n" + cid + "\r\n--B--\r\n"
		req, _ := http.NewRequest("POST", s.URL+"/files", strings.NewReader(raw))
		req.Header.Set("Content-Type", "multipart/form-data; boundary=B")
		req.Header.Set("Authorization", "Bearer "+tok["owner"])
		wantStatus(t, s.Send(req), 400)
	})
	if n := count(t, s, "docindex.files"); n != 0 {
		t.Errorf("%d files stored by refused uploads", n)
	}
	if n := count(t, s, "docindex.jobs"); n != 0 {
		t.Errorf("%d jobs queued by refused uploads", n)
	}
	if b := blobFiles(t, s); len(b) != 0 {
		t.Errorf("blobs stored by refused uploads: %v", b)
	}
	// Those who may upload: owner, collection admin, global admin.
	for _, caller := range []string{"owner", "shared admin", "global admin"} {
		upload(t, s, tok[caller], cid, caller+".txt", "text/plain", textDoc)
	}
}

func TestUploadTooLarge(t *testing.T) {
	const limit = 1024
	s := newIndexServer(t, docindex.WithMaxUploadBytes(limit))
	own := s.Token(owner)
	cid := createCollection(t, s, own, map[string]any{"name": "small"})["id"].(string)

	for name, size := range map[string]int{"one byte over": limit + 1, "many times over": 64 * limit,
		"past the multipart allowance": limit + 2<<20} {
		t.Run(name, func(t *testing.T) {
			r := s.Upload(own, docindextest.FileUpload{CollectionID: cid, Name: "big.txt", ContentType: "text/plain",
				Body: strings.NewReader(strings.Repeat("a", size))})
			wantStatus(t, r, http.StatusRequestEntityTooLarge)
		})
	}
	if n := count(t, s, "docindex.files"); n != 0 {
		t.Errorf("%d files stored by uploads over the limit", n)
	}
	if n := count(t, s, "docindex.jobs"); n != 0 {
		t.Errorf("%d jobs queued by uploads over the limit", n)
	}
	if b := blobFiles(t, s); len(b) != 0 {
		t.Errorf("blobs stored by uploads over the limit: %v", b)
	}
	// Exactly at the limit is accepted.
	f, _ := upload(t, s, own, cid, "fits.txt", "text/plain", strings.Repeat("b", limit))
	if f["sizeBytes"] != float64(limit) {
		t.Errorf("size %v", f["sizeBytes"])
	}
}

// TestUnsupportedFormatFailsAtOnce: a file no extractor reads fails its job on the first run,
// without retries, and the file ends failed with the reason.
func TestUnsupportedFormatFailsAtOnce(t *testing.T) {
	s := newIndexServer(t)
	own := s.Token(owner)
	cid := createCollection(t, s, own, map[string]any{"name": "junk"})["id"].(string)
	f, jobID := upload(t, s, own, cid, "noise.bin", "", randomBytes(t, 4096))
	s.StartWorkers(nil)
	job := waitJob(t, s, own, jobID)
	errText, _ := job["error"].(string)
	if job["status"] != "failed" || job["retryCount"] != float64(0) || !strings.Contains(strings.ToLower(errText), "unsupported") {
		t.Fatalf("job of an unreadable file: %v", job)
	}
	file, _ := getFile(t, s, own, f["id"].(string))
	if file["status"] != "failed" || file["warning"] != errText {
		t.Errorf("file of a failed job: %v", file)
	}
	if n := chunkCount(t, s, cid, f["id"].(string)); n != 0 {
		t.Errorf("%d chunks for an unreadable file", n)
	}
}

func TestGetFile(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "detail")
	f, job1 := upload(t, s, tok["owner"], cid, "notes.txt", "text/plain", textDoc)
	id := f["id"].(string)
	s.StartWorkers(nil)
	waitJob(t, s, tok["owner"], job1)
	r := s.Do("POST", "/files/"+id+"/reindex", tok["owner"], nil)
	wantStatus(t, r, http.StatusOK)
	job2 := r.Map(t)["jobId"].(string)
	waitJob(t, s, tok["owner"], job2)

	for caller, status := range map[string]int{"owner": 200, "shared admin": 200, "viewer": 200, "global admin": 200,
		"read-only key": 200, "outsider": 403} {
		t.Run(caller, func(t *testing.T) { wantStatus(t, s.Do("GET", "/files/"+id, tok[caller], nil), status) })
	}
	file, jobs := getFile(t, s, tok["viewer"], id)
	if file["status"] != "indexed" || file["name"] != "notes.txt" {
		t.Errorf("file %v", file)
	}
	if len(jobs) != 2 || jobs[0]["id"] != job2 || jobs[1]["id"] != job1 || jobs[0]["type"] != "reindex" || jobs[1]["type"] != "index" {
		t.Errorf("jobs not newest first: %v", jobs)
	}
	for _, j := range jobs {
		for _, listOnly := range []string{"fileName", "collectionId", "collectionName", "queuePosition"} {
			if _, ok := j[listOnly]; ok {
				t.Errorf("file detail job carries list-only field %s: %v", listOnly, j)
			}
		}
	}
	r = s.Do("GET", "/files/"+uuid.NewString(), tok["owner"], nil)
	wantStatus(t, r, http.StatusNotFound)
	if !strings.Contains(string(r.Body), "File not found") {
		t.Errorf("404 body %s", r.Body)
	}
	wantStatus(t, s.Do("GET", "/files/nope", tok["owner"], nil), http.StatusBadRequest)
	wantStatus(t, s.Do("GET", "/files/"+id, "", nil), http.StatusUnauthorized)
}

func TestListFiles(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "listed")
	other := createCollection(t, s, tok["outsider"], map[string]any{"name": "elsewhere"})["id"].(string)
	names := []string{"alpha.txt", "beta.txt", "Gamma_report.txt"}
	for _, n := range names {
		upload(t, s, tok["owner"], cid, n, "text/plain", textDoc)
	}
	upload(t, s, tok["outsider"], other, "theirs.txt", "text/plain", textDoc)
	list := func(token, query string) []map[string]any {
		t.Helper()
		r := s.Do("GET", "/files"+query, token, nil)
		wantStatus(t, r, http.StatusOK)
		var body struct {
			Files []map[string]any `json:"files"`
		}
		r.JSON(t, &body)
		return body.Files
	}
	for caller, want := range map[string]int{"owner": 3, "shared admin": 3, "viewer": 3, "read-only key": 3, "outsider": 1, "global admin": 4} {
		if got := list(tok[caller], ""); len(got) != want {
			t.Errorf("%s sees %d files, want %d", caller, len(got), want)
		}
	}
	got := list(tok["owner"], "")
	if got[0]["name"] != "Gamma_report.txt" || got[2]["name"] != "alpha.txt" {
		t.Errorf("not newest first: %v, %v", got[0]["name"], got[2]["name"])
	}
	for query, want := range map[string]int{
		"?collectionId=" + cid: 3, "?collectionId=" + other: 0, "?status=pending": 3, "?status=indexed": 0,
		"?search=GAMMA": 1, "?search=_": 1, "?search=%25": 0, "?search=.txt&status=pending&collectionId=" + cid: 3,
		"?limit=2": 2, "?limit=2&offset=2": 1, "?offset=3": 0, "?limit=1000": 3,
	} {
		if n := len(list(tok["owner"], query)); n != want {
			t.Errorf("GET /files%s: %d files, want %d", query, n, want)
		}
	}
	if a, b := list(tok["owner"], "?limit=2"), list(tok["owner"], "?limit=2&offset=2"); a[0]["id"] == b[0]["id"] || a[1]["id"] == b[0]["id"] {
		t.Errorf("pages overlap")
	}
	for _, q := range []string{"?status=done", "?collectionId=xyz", "?limit=0x", "?limit=1001", "?limit=-1", "?offset=-1"} {
		wantStatus(t, s.Do("GET", "/files"+q, tok["owner"], nil), http.StatusBadRequest)
	}
}

func TestReindexFile(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "reindex")
	f, jobID := upload(t, s, tok["owner"], cid, "notes.txt", "text/plain", textDoc)
	id := f["id"].(string)
	stop := s.StartWorkers(nil)
	waitJob(t, s, tok["owner"], jobID)
	stop()

	for caller, status := range map[string]int{"viewer": 403, "outsider": 403, "read-only key": 403,
		"owner": 200, "shared admin": 200, "global admin": 200} {
		t.Run(caller, func(t *testing.T) {
			r := s.Do("POST", "/files/"+id+"/reindex", tok[caller], nil)
			wantStatus(t, r, status)
			if status != 200 {
				return
			}
			body := r.Map(t)
			file := body["file"].(map[string]any)
			if body["status"] != "queued" || file["id"] != id || file["status"] != "pending" || file["collectionName"] != "reindex" {
				t.Errorf("reindex answer %v", body)
			}
			job, _ := getJob(t, s, tok["owner"], body["jobId"].(string))
			if job["type"] != "reindex" || job["status"] != "queued" || job["fileId"] != id {
				t.Errorf("reindex job %v", job)
			}
		})
	}
	wantStatus(t, s.Do("POST", "/files/"+uuid.NewString()+"/reindex", tok["owner"], nil), http.StatusNotFound)
	wantStatus(t, s.Do("POST", "/files/xyz/reindex", tok["owner"], nil), http.StatusBadRequest)

	// The queued reindex jobs run, and the file is indexed again, its chunks replaced.
	before := chunkCount(t, s, cid, id)
	s.StartWorkers(nil)
	eventually(t, "the reindex jobs to finish", func() bool {
		file, jobs := getFile(t, s, tok["owner"], id)
		for _, j := range jobs {
			if j["status"] != "completed" {
				return false
			}
		}
		return file["status"] == "indexed" && len(jobs) == 4
	})
	if after := chunkCount(t, s, cid, id); after != before || after == 0 {
		t.Errorf("chunks %d after reindex, %d before", after, before)
	}

	// Without its blob the file cannot be reindexed: it must be uploaded again.
	if err := os.Remove(filepath.Join(s.BlobDir, filepath.FromSlash(f["blobPath"].(string)))); err != nil {
		t.Fatal(err)
	}
	jobs := count(t, s, "docindex.jobs")
	r := s.Do("POST", "/files/"+id+"/reindex", tok["owner"], nil)
	wantStatus(t, r, http.StatusBadRequest)
	if n := count(t, s, "docindex.jobs"); n != jobs {
		t.Errorf("a refused reindex queued a job")
	}
}

func TestDeleteFile(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "deletes")
	f, jobID := upload(t, s, tok["owner"], cid, "notes.txt", "text/plain", textDoc)
	id, blobPath := f["id"].(string), f["blobPath"].(string)
	stop := s.StartWorkers(nil)
	waitJob(t, s, tok["owner"], jobID)
	stop()
	if chunkCount(t, s, cid, id) == 0 || !blobExists(t, s, blobPath) {
		t.Fatal("nothing indexed to delete")
	}
	for caller, status := range map[string]int{"viewer": 403, "read-only key": 403, "outsider": 404} {
		wantStatus(t, s.Do("DELETE", "/files/"+id, tok[caller], nil), status)
	}
	wantStatus(t, s.Do("DELETE", "/files/xyz", tok["owner"], nil), http.StatusBadRequest)
	wantStatus(t, s.Do("DELETE", "/files/"+uuid.NewString(), tok["owner"], nil), http.StatusNotFound)

	r := s.Do("DELETE", "/files/"+id, tok["shared admin"], nil)
	wantStatus(t, r, http.StatusOK)
	if r.Map(t)["status"] != "deleted" {
		t.Errorf("delete answer %s", r.Body)
	}
	if n := chunkCount(t, s, cid, id); n != 0 {
		t.Errorf("%d chunks left after delete", n)
	}
	if blobExists(t, s, blobPath) {
		t.Errorf("blob %s left after delete", blobPath)
	}
	wantStatus(t, s.Do("GET", "/files/"+id, tok["owner"], nil), http.StatusNotFound)
	// The job outlives its file; its detail no longer carries the file.
	job, file := getJob(t, s, tok["owner"], jobID)
	if job["status"] != "completed" || file != nil {
		t.Errorf("job of a deleted file: %v, file %v", job, file)
	}

	// A queued job of a deleted file is cancelled and never runs.
	f2, job2 := upload(t, s, tok["owner"], cid, "later.txt", "text/plain", textDoc)
	wantStatus(t, s.Do("DELETE", "/files/"+f2["id"].(string), tok["owner"], nil), http.StatusOK)
	if j, _ := getJob(t, s, tok["owner"], job2); j["status"] != "cancelled" || j["completedAt"] == nil {
		t.Errorf("queued job of a deleted file: %v", j)
	}
	var list struct {
		Jobs []map[string]any `json:"jobs"`
	}
	s.Do("GET", "/jobs?status=queued", tok["owner"], nil).JSON(t, &list)
	if len(list.Jobs) != 0 {
		t.Errorf("queued jobs left: %v", list.Jobs)
	}
	if b := blobFiles(t, s); len(b) != 0 {
		t.Errorf("blobs left: %v", b)
	}
}

// insertFiles writes n file rows directly (no blobs): bulk deletes of hundreds of files need no
// real uploads to exercise their limits.
func insertFiles(t *testing.T, s *docindextest.Server, collectionID any, status, prefix string, n int) {
	t.Helper()
	_, err := s.DB.ExecContext(context.Background(), `INSERT INTO docindex.files (collection_id, name, blob_path, status, created_at)
		SELECT ?, ? || g, 'files/' || gen_random_uuid() || '/x', ?, now() - g * interval '1 second'
		FROM generate_series(1, ?) AS g`, collectionID, prefix, status, n)
	if err != nil {
		t.Fatalf("insert files: %v", err)
	}
}

func TestBulkDelete(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "bulk")
	own := tok["owner"]
	// A collection where the owner is only a viewer: its files are skipped silently (rule 2).
	foreign := createCollection(t, s, tok["outsider"], map[string]any{"name": "foreign"})["id"].(string)
	share(t, s, tok["outsider"], foreign, map[string]any{"type": "user", "target": owner.Email, "role": "viewer"})
	theirs, _ := upload(t, s, tok["outsider"], foreign, "theirs.txt", "text/plain", textDoc)

	var ids, blobs []string
	for i := range 4 {
		f, _ := upload(t, s, own, cid, fmt.Sprintf("doc%d.txt", i), "text/plain", textDoc)
		ids = append(ids, f["id"].(string))
		blobs = append(blobs, f["blobPath"].(string))
	}
	s.StartWorkers(nil)
	eventually(t, "the uploads to be indexed", func() bool {
		var list struct {
			Files []map[string]any `json:"files"`
		}
		s.Do("GET", "/files?status=indexed", tok["global admin"], nil).JSON(t, &list)
		return len(list.Files) == 5
	})

	bulk := func(token string, body any, status int) map[string]any {
		t.Helper()
		r := s.Do("POST", "/files/bulk-delete", token, body)
		wantStatus(t, r, status)
		if status != http.StatusOK {
			return nil
		}
		return r.Map(t)
	}
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = uuid.NewString()
	}
	for name, tc := range map[string]struct {
		token  string
		body   any
		status int
	}{
		"both modes":        {own, map[string]any{"fileIds": ids[:1], "status": "indexed"}, 400},
		"neither mode":      {own, map[string]any{}, 400},
		"search alone":      {own, map[string]any{"search": "doc"}, 400},
		"ids with a filter": {own, map[string]any{"fileIds": ids[:1], "collectionIds": []string{cid}}, 400},
		"malformed id":      {own, map[string]any{"fileIds": []string{"nope"}}, 400},
		"malformed coll id": {own, map[string]any{"status": "indexed", "collectionIds": []string{"nope"}}, 400},
		"101 ids":           {own, map[string]any{"fileIds": tooMany}, 400},
		"bad status":        {own, map[string]any{"status": "gone"}, 400},
		"malformed body":    {own, "{", 400},
		"no token":          {"", map[string]any{"fileIds": ids}, 401},
		"read-only key":     {tok["read-only key"], map[string]any{"fileIds": ids}, 403},
		"viewer only":       {tok["viewer"], map[string]any{"fileIds": ids}, 403},
	} {
		t.Run(name, func(t *testing.T) { bulk(tc.token, tc.body, tc.status) })
	}
	if n := count(t, s, "docindex.files"); n != 5 {
		t.Fatalf("refused bulk deletes deleted files: %d left", n)
	}

	// Explicit mode: the caller's own file goes, the foreign one (viewer only) and an unknown id
	// are skipped silently.
	res := bulk(own, map[string]any{"fileIds": []string{ids[0], theirs["id"].(string), uuid.NewString()}}, 200)
	if res["status"] != "completed" || res["count"] != float64(1) || res["failedCount"] != float64(0) {
		t.Errorf("explicit bulk delete: %v", res)
	}
	if chunkCount(t, s, cid, ids[0]) != 0 || blobExists(t, s, blobs[0]) {
		t.Errorf("chunks or blob of a bulk-deleted file left")
	}
	wantStatus(t, s.Do("GET", "/files/"+theirs["id"].(string), tok["outsider"], nil), http.StatusOK)
	if res := bulk(own, map[string]any{"fileIds": []string{}}, 200); res["count"] != float64(0) {
		t.Errorf("empty list: %v", res)
	}

	// Rule 3: a teardown that fails (the blob cannot be removed: a non-empty directory stands
	// where it was) is counted in failedCount and does not stop the others.
	stuck := filepath.Join(s.BlobDir, filepath.FromSlash(blobs[1]))
	if err := os.Remove(stuck); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(stuck, "in-the-way"), 0o750); err != nil {
		t.Fatal(err)
	}
	res = bulk(tok["shared admin"], map[string]any{"fileIds": []string{ids[1], ids[2]}}, 200)
	if res["status"] != "partial" || res["count"] != float64(1) || res["failedCount"] != float64(1) {
		t.Errorf("bulk delete with a failing teardown: %v", res)
	}
	if chunkCount(t, s, cid, ids[2]) != 0 || blobExists(t, s, blobs[2]) {
		t.Errorf("the file after the failed one was not torn down")
	}

	// Filter mode, with collectionIds and search; the foreign collection's file is skipped.
	res = bulk(own, map[string]any{"status": "indexed", "collectionIds": []string{cid, foreign}, "search": "DOC3"}, 200)
	if res["count"] != float64(1) || res["failedCount"] != float64(0) {
		t.Errorf("filter bulk delete: %v", res)
	}
	res = bulk(own, map[string]any{"status": "indexed"}, 200)
	if res["count"] != float64(0) {
		t.Errorf("filter bulk delete took a foreign file: %v", res)
	}
	wantStatus(t, s.Do("GET", "/files/"+theirs["id"].(string), tok["outsider"], nil), http.StatusOK)

	// At most 500 files per filtered request; the rest on the next call.
	insertFiles(t, s, cid, "failed", "many", 502)
	if res := bulk(own, map[string]any{"status": "failed", "collectionIds": []string{cid}}, 200); res["count"] != float64(500) {
		t.Errorf("first filtered page: %v", res)
	}
	if res := bulk(own, map[string]any{"status": "failed"}, 200); res["count"] != float64(2) {
		t.Errorf("second filtered page: %v", res)
	}

	// Rule 1: a file without a collection needs a global administrator.
	insertFiles(t, s, nil, "pending", "orphan", 1)
	var orphan string
	if err := s.DB.QueryRowContext(context.Background(), "SELECT id FROM docindex.files WHERE collection_id IS NULL").Scan(&orphan); err != nil {
		t.Fatal(err)
	}
	if res := bulk(own, map[string]any{"fileIds": []string{orphan}}, 200); res["count"] != float64(0) {
		t.Errorf("owner deleted a file without a collection: %v", res)
	}
	if res := bulk(tok["global admin"], map[string]any{"fileIds": []string{orphan}}, 200); res["count"] != float64(1) {
		t.Errorf("global admin could not delete a file without a collection: %v", res)
	}
	// The outsider owns the foreign collection and deletes its file.
	if res := bulk(tok["outsider"], map[string]any{"status": "indexed"}, 200); res["count"] != float64(1) {
		t.Errorf("outsider's own bulk delete: %v", res)
	}
}

func TestDeleteCollectionTearsDownFiles(t *testing.T) {
	s := newIndexServer(t)
	own := s.Token(owner)
	cid := createCollection(t, s, own, map[string]any{"name": "doomed"})["id"].(string)
	indexed, j1 := upload(t, s, own, cid, "a.txt", "text/plain", textDoc)
	stop := s.StartWorkers(nil)
	waitJob(t, s, own, j1)
	stop()
	pending, j2 := upload(t, s, own, cid, "b.txt", "text/plain", textDoc)
	if len(blobFiles(t, s)) == 0 {
		t.Fatal("no blobs stored")
	}
	wantStatus(t, s.Do("DELETE", "/api/collections/"+cid, own, nil), http.StatusOK)
	for _, f := range []map[string]any{indexed, pending} {
		wantStatus(t, s.Do("GET", "/files/"+f["id"].(string), own, nil), http.StatusNotFound)
	}
	for _, j := range []string{j1, j2} {
		wantStatus(t, s.Do("GET", "/jobs/"+j, own, nil), http.StatusNotFound)
	}
	if b := blobFiles(t, s); len(b) != 0 {
		t.Errorf("blobs left: %v", b)
	}
	var table *string
	if err := s.DB.QueryRowContext(context.Background(), "SELECT to_regclass(?)::text",
		"docindex."+vectorstore.Table(uuid.MustParse(cid))).Scan(&table); err != nil || table != nil {
		t.Errorf("chunk table left: %v %v", table, err)
	}
}

// TestContractFileAndJobShapes checks that the document catches breaches in the shapes of the
// file, job and search endpoints, which the server-driven tests only see in their correct form.
func TestContractFileAndJobShapes(t *testing.T) {
	c, err := httpapi.NewContract()
	if err != nil {
		t.Fatal(err)
	}
	const id, when = "0b9e3c1e-4a57-4f0e-9d6b-2d3c4e5f6a7b", "2026-11-22T01:02:03Z"
	file := func() map[string]any {
		return map[string]any{"id": id, "name": "a.txt", "blobPath": "files/" + id + "/a.txt", "sizeBytes": 3,
			"contentType": "text/plain", "status": "indexed", "collectionId": id, "collectionName": "c",
			"createdAt": when, "updatedAt": when, "lastIndexedAt": when}
	}
	job := func() map[string]any {
		return map[string]any{"id": id, "fileId": id, "type": "index", "status": "completed", "retryCount": 0,
			"maxRetries": 3, "error": nil, "createdAt": when, "startedAt": when, "completedAt": when}
	}
	item := func() map[string]any {
		j := job()
		j["fileName"], j["collectionId"], j["collectionName"], j["queuePosition"] = "a.txt", id, "c", nil
		return j
	}
	set := func(m map[string]any, k string, v any) map[string]any {
		if v == del {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	hit := func() map[string]any {
		return map[string]any{"chunkId": id, "fileId": id, "fileName": "a.txt", "text": "t", "score": 0.03, "ordinal": 0,
			"metadata": map[string]any{"pages": []any{1, 2}}}
	}
	for _, tc := range []struct {
		name, method, path string
		status             int
		body               any
		wantErr            string
	}{
		{"upload", "POST", "/files", 201, map[string]any{"file": set(file(), "sourceMetadata", map[string]any{"a": 1}), "jobId": id}, ""},
		{"upload too large", "POST", "/files", 413, map[string]any{"error": "File too large"}, ""},
		{"file list", "GET", "/files?limit=5", 200, map[string]any{"files": []any{file(), set(set(file(), "collectionId", nil), "pageCount", 2)}}, ""},
		{"file detail", "GET", "/files/" + id, 200, map[string]any{"file": file(), "jobs": []any{job()}}, ""},
		{"reindex", "POST", "/files/" + id + "/reindex", 200, map[string]any{"status": "queued", "jobId": id, "file": file()}, ""},
		{"bulk delete", "POST", "/files/bulk-delete", 200, map[string]any{"status": "partial", "count": 1, "failedCount": 1}, ""},
		{"job list", "GET", "/jobs", 200, map[string]any{"jobs": []any{item(), set(set(item(), "fileId", nil), "queuePosition", 1)}}, ""},
		{"job detail without file", "GET", "/jobs/" + id, 200, map[string]any{"job": job()}, ""},
		{"running job", "DELETE", "/jobs/" + id, 409, map[string]any{"error": "Cannot delete a running job"}, ""},
		{"retry", "POST", "/jobs/retry-all-failed", 200, map[string]any{"status": "queued", "count": 2}, ""},
		{"delete failed", "DELETE", "/jobs/failed", 200, map[string]any{"status": "deleted", "count": 0}, ""},
		{"reindex all", "POST", "/reindex-all", 200, map[string]any{"status": "no_files", "fileCount": 0, "jobIds": []any{}}, ""},
		{"search", "POST", "/api/collections/" + id + "/search", 200, map[string]any{"results": []any{hit()}}, ""},

		{"file without collectionId", "GET", "/files/" + id, 200, map[string]any{"file": set(file(), "collectionId", del), "jobs": []any{}}, "collectionId"},
		{"empty sourceMetadata", "GET", "/files", 200, map[string]any{"files": []any{set(file(), "sourceMetadata", map[string]any{})}}, "sourceMetadata"},
		{"bad file status", "GET", "/files", 200, map[string]any{"files": []any{set(file(), "status", "done")}}, "status"},
		{"list item without queuePosition", "GET", "/jobs", 200, map[string]any{"jobs": []any{set(item(), "queuePosition", del)}}, "queuePosition"},
		{"list-only field in a detail", "GET", "/jobs/" + id, 200, map[string]any{"job": set(job(), "fileName", "a.txt")}, "fileName"},
		{"queue position 0", "GET", "/jobs", 200, map[string]any{"jobs": []any{set(item(), "queuePosition", 0)}}, "queuePosition"},
		{"bulk result without failedCount", "POST", "/files/bulk-delete", 200, map[string]any{"status": "completed", "count": 1}, "failedCount"},
		{"unknown reindex-all status", "POST", "/reindex-all", 200, map[string]any{"status": "done", "fileCount": 0, "jobIds": []any{}}, "status"},
		{"score as text", "POST", "/api/collections/" + id + "/search", 200, map[string]any{"results": []any{set(hit(), "score", "high")}}, "score"},
		{"409 on a read", "GET", "/jobs/" + id, 409, map[string]any{"error": "x"}, "status is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Check(httptest.NewRequest(tc.method, tc.path, nil), tc.status,
				http.Header{"Content-Type": {"application/json"}}, mustJSON(t, tc.body))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("want a pass, got %v", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("want an error about %q, got a pass", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("want an error about %q, got %v", tc.wantErr, err)
			}
		})
	}
}

var del = new(int)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gatedEmbedder holds the first Embed call until release is closed, so a test can act while a
// job is between extraction and writing its chunks. Embeddings are the real hash embedder's.
type gatedEmbedder struct {
	embedder.Embedder
	entered chan struct{} // receives once, when the first call is held
	release chan struct{}
	once    sync.Once
}

func (g *gatedEmbedder) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	held := false
	g.once.Do(func() { held = true })
	if held {
		g.entered <- struct{}{}
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Embedder.Embed(ctx, model, texts)
}

// TestDeleteFileWhileIndexing: a file deleted while its job embeds leaves no chunks behind once
// the job writes them: the job notices the file is gone and removes what it wrote.
func TestDeleteFileWhileIndexing(t *testing.T) {
	g := &gatedEmbedder{Embedder: hash.New(), entered: make(chan struct{}, 1), release: make(chan struct{})}
	s := newIndexServer(t, docindex.WithEmbedders(g))
	own := s.Token(owner)
	cid := createCollection(t, s, own, map[string]any{"name": "racing"})["id"].(string)
	f, _ := upload(t, s, own, cid, "notes.txt", "text/plain", textDoc)
	handled := make(chan error, 1)
	s.StartWorkers(worker.HandlerFunc(func(ctx context.Context, j queue.Job) error {
		err := s.Svc.Handle(ctx, j)
		handled <- err
		return err
	}), worker.WithWorkers(1))
	select {
	case <-g.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the job never embedded")
	}
	wantStatus(t, s.Do("DELETE", "/files/"+f["id"].(string), own, nil), http.StatusOK)
	close(g.release)
	select {
	case err := <-handled:
		t.Logf("handler returned %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the job never finished")
	}
	if n := chunkCount(t, s, cid, f["id"].(string)); n != 0 {
		t.Errorf("%d chunks of a deleted file left in the chunk table", n)
	}
	if hits := search(t, s, own, cid, map[string]any{"query": "lighthouse keeper", "mode": "fulltext"}); len(hits) != 0 {
		t.Errorf("search finds a deleted file: %+v", hits)
	}
}

// startS3 runs the S3 gateway versitygw (installed by scripts/s3gw.sh) on a loopback port until
// the test ends, creates a bucket through the S3 API and returns the bucket's blob-store URL.
func startS3(t *testing.T) (url string, stop func()) {
	t.Helper()
	bin := os.Getenv("DOCINDEX_VERSITYGW")
	if bin == "" {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(root, ".tools", "bin", "versitygw")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the S3 gateway versitygw is not installed at %s: run scripts/s3gw.sh (or set DOCINDEX_VERSITYGW to its path)", bin)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	const access, secret = "docindex-test", "docindex-test-secret-key"
	var out bytes.Buffer
	cmd := exec.Command(bin, "--access", access, "--secret", secret, "--port", addr, "posix", t.TempDir())
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		})
	}
	t.Cleanup(stop)
	endpoint := "http://" + addr
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(access, secret, "")})
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("docindex")})
		if err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("versitygw exited (%v):\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw on %s: create bucket: %v\n%s", addr, err, out.String())
		}
	}
	return fmt.Sprintf("s3://docindex?endpoint=%s&region=us-east-1&use_path_style=true&access_key_id=%s&secret_access_key=%s",
		endpoint, access, secret), stop
}

// TestFilesOnS3 runs the life of a file with its content on S3-compatible storage.
func TestFilesOnS3(t *testing.T) {
	url, _ := startS3(t)
	ctx := context.Background()
	open := func() blob.Store {
		b, err := blob.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	s := newIndexServer(t, docindex.WithBlobStore(open()), docindex.WithMaxUploadBytes(64<<10))
	bucket := open() // a second client: what the server stored is there for anyone
	exists := func(key string) bool {
		t.Helper()
		ok, err := bucket.Exists(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	own := s.Token(owner)
	cid := createCollection(t, s, own, map[string]any{"name": "on_s3"})["id"].(string)

	f, jobID := upload(t, s, own, cid, "volcanoes.html", "text/html", htmlDoc)
	key := f["blobPath"].(string)
	r, err := bucket.Open(ctx, key)
	if err != nil {
		t.Fatalf("uploaded object: %v", err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if string(got) != htmlDoc {
		t.Fatalf("object holds %q", got)
	}
	wantStatus(t, s.Upload(own, docindextest.FileUpload{CollectionID: cid, Name: "big.txt",
		Body: strings.NewReader(strings.Repeat("x", 65<<10))}), http.StatusRequestEntityTooLarge)

	s.StartWorkers(nil)
	if job := waitJob(t, s, own, jobID); job["status"] != "completed" {
		t.Fatalf("job %v", job)
	}
	if hits := search(t, s, own, cid, map[string]any{"query": htmlSentence}); len(hits) == 0 || hits[0].FileID != f["id"] {
		t.Fatalf("search: %+v", hits)
	}
	r2 := s.Do("POST", "/files/"+f["id"].(string)+"/reindex", own, nil)
	wantStatus(t, r2, http.StatusOK)
	waitJob(t, s, own, r2.Map(t)["jobId"].(string))

	// Gone from the bucket: reindex is refused.
	if err := bucket.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, s.Do("POST", "/files/"+f["id"].(string)+"/reindex", own, nil), http.StatusBadRequest)

	// Deleting a file deletes its object.
	f2, j2 := upload(t, s, own, cid, "coast.txt", "text/plain", textDoc)
	waitJob(t, s, own, j2)
	if !exists(f2["blobPath"].(string)) {
		t.Fatal("object of the second upload missing")
	}
	wantStatus(t, s.Do("DELETE", "/files/"+f2["id"].(string), own, nil), http.StatusOK)
	if exists(f2["blobPath"].(string)) {
		t.Error("object of a deleted file left in the bucket")
	}
}

// TestUploadStorageDown: with the S3 gateway gone, an upload answers 503 and leaves no file and
// no job behind.
func TestUploadStorageDown(t *testing.T) {
	ctx := context.Background()
	url, stopS3 := startS3(t)
	store, err := blob.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	stopS3()
	s := newIndexServer(t, docindex.WithBlobStore(store))
	own := s.Token(owner)
	cid := createCollection(t, s, own, map[string]any{"name": "nowhere"})["id"].(string)
	r := s.Upload(own, docindextest.FileUpload{CollectionID: cid, Name: "a.txt", ContentType: "text/plain", Body: strings.NewReader("some text")})
	wantStatus(t, r, http.StatusServiceUnavailable)
	if !strings.Contains(string(r.Body), "File storage is unavailable") {
		t.Errorf("error %s", r.Body)
	}
	var files, jobs int
	if err := s.DB.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM docindex.files), (SELECT count(*) FROM docindex.jobs)").Scan(&files, &jobs); err != nil {
		t.Fatal(err)
	}
	if files != 0 || jobs != 0 {
		t.Fatalf("%d files and %d jobs after a failed upload, want none", files, jobs)
	}
}

// TestUploadTruncatedBody: a multipart body that ends in the middle of the file is the client's
// error (400), and nothing is stored.
func TestUploadTruncatedBody(t *testing.T) {
	s := newIndexServer(t)
	own := s.Token(owner)
	cid := createCollection(t, s, own, map[string]any{"name": "truncated"})["id"].(string)
	body := "--XYZ\r\nContent-Disposition: form-data; name=\"collectionId\"\r\n\r\n" + cid + "\r\n" +
		"--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\n" +
		strings.Repeat("cut off in the middle ", 500)
	req, err := http.NewRequest("POST", s.URL+"/files", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+own)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=XYZ")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "the file could not be read") {
		t.Fatalf("status %d: %s; want 400 with the reason", resp.StatusCode, msg)
	}
	var files int
	if err := s.DB.QueryRowContext(context.Background(), "SELECT count(*) FROM docindex.files").Scan(&files); err != nil || files != 0 {
		t.Fatalf("%d files after a truncated upload (%v)", files, err)
	}
}
