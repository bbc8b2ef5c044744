package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex/docindextest"
)

// listJobs returns GET /jobs with the query.
func listJobs(t *testing.T, s *docindextest.Server, token, query string) []map[string]any {
	t.Helper()
	r := s.Do("GET", "/jobs"+query, token, nil)
	wantStatus(t, r, http.StatusOK)
	var body struct {
		Jobs []map[string]any `json:"jobs"`
	}
	r.JSON(t, &body)
	return body.Jobs
}

func byID(jobs []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, j := range jobs {
		out[j["id"].(string)] = j
	}
	return out
}

// failedUpload uploads an unreadable file and runs workers until its job failed; the workers
// are stopped again.
func failedUpload(t *testing.T, s *docindextest.Server, token, collectionID, name string) (fileID, jobID string) {
	t.Helper()
	f, jobID := upload(t, s, token, collectionID, name, "", randomBytes(t, 2048))
	stop := s.StartWorkers(nil)
	defer stop()
	if job := waitJob(t, s, token, jobID); job["status"] != "failed" {
		t.Fatalf("job of an unreadable file: %v", job)
	}
	return f["id"].(string), jobID
}

func TestGetJob(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "jobs")
	_, jobID := upload(t, s, tok["owner"], cid, "a.txt", "text/plain", textDoc)
	for caller, status := range map[string]int{"owner": 200, "shared admin": 200, "viewer": 200, "read-only key": 200,
		"global admin": 200, "outsider": 403} {
		t.Run(caller, func(t *testing.T) { wantStatus(t, s.Do("GET", "/jobs/"+jobID, tok[caller], nil), status) })
	}
	r := s.Do("GET", "/jobs/"+uuid.NewString(), tok["owner"], nil)
	wantStatus(t, r, http.StatusNotFound)
	if !strings.Contains(string(r.Body), "Job not found") {
		t.Errorf("404 body %s", r.Body)
	}
	r = s.Do("GET", "/jobs/12", tok["owner"], nil)
	wantStatus(t, r, http.StatusBadRequest)
	if !strings.Contains(string(r.Body), "Invalid job ID") {
		t.Errorf("400 body %s", r.Body)
	}
	wantStatus(t, s.Do("GET", "/jobs/"+jobID, "", nil), http.StatusUnauthorized)
}

func TestDeleteJob(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "deljobs")
	own := tok["owner"]
	_, failed := failedUpload(t, s, own, cid, "bad.bin")
	done, completed := upload(t, s, own, cid, "done.txt", "text/plain", textDoc)
	stop := s.StartWorkers(nil)
	waitJob(t, s, own, completed)
	stop()
	gone, cancelled := upload(t, s, own, cid, "gone.txt", "text/plain", textDoc)
	wantStatus(t, s.Do("DELETE", "/files/"+gone["id"].(string), own, nil), http.StatusOK)
	_, queued := upload(t, s, own, cid, "waiting.txt", "text/plain", textDoc)

	// Who may delete: the owner and collection admins (with write access); a caller without a
	// role learns nothing more than for an unknown job.
	for caller, status := range map[string]int{"viewer": 403, "read-only key": 403, "outsider": 404} {
		t.Run(caller, func(t *testing.T) { wantStatus(t, s.Do("DELETE", "/jobs/"+queued, tok[caller], nil), status) })
	}
	wantStatus(t, s.Do("DELETE", "/jobs/"+uuid.NewString(), own, nil), http.StatusNotFound)
	wantStatus(t, s.Do("DELETE", "/jobs/not-an-id", own, nil), http.StatusBadRequest)

	for name, id := range map[string]string{"queued": queued, "completed": completed, "failed": failed, "cancelled": cancelled} {
		t.Run(name, func(t *testing.T) {
			r := s.Do("DELETE", "/jobs/"+id, tok["shared admin"], nil)
			wantStatus(t, r, http.StatusOK)
			if r.Map(t)["status"] != "deleted" {
				t.Errorf("answer %s", r.Body)
			}
			wantStatus(t, s.Do("GET", "/jobs/"+id, own, nil), http.StatusNotFound)
		})
	}
	// A deleted queued job never runs; the file it was for stays.
	if n := count(t, s, "docindex.jobs"); n != 0 {
		t.Errorf("%d jobs left", n)
	}
	file, jobs := getFile(t, s, own, done["id"].(string))
	if file["status"] != "indexed" || len(jobs) != 0 {
		t.Errorf("file after its job was deleted: %v, jobs %v", file, jobs)
	}

	// A running job cannot be deleted (TestJobLifecycle holds one through the HTTP worker;
	// here one is claimed directly, as a worker of another process would).
	_, running := upload(t, s, own, cid, "busy.txt", "text/plain", textDoc)
	claimed, err := s.Svc.Queue().Claim(context.Background(), "elsewhere", 1)
	if err != nil || len(claimed) != 1 || claimed[0].ID.String() != running {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	r := s.Do("DELETE", "/jobs/"+running, own, nil)
	wantStatus(t, r, http.StatusConflict)
	if !strings.Contains(string(r.Body), "Cannot delete a running job") {
		t.Errorf("409 body %s", r.Body)
	}
	if j, _ := getJob(t, s, own, running); j["status"] != "running" {
		t.Errorf("running job after a refused delete: %v", j)
	}
}

func TestRetryAllFailed(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "retries")
	own := tok["owner"]
	badFile, failed := failedUpload(t, s, own, cid, "bad.bin")
	// Two jobs wait in the queue; the retried job must go behind them.
	_, first := upload(t, s, own, cid, "one.txt", "text/plain", textDoc)
	_, second := upload(t, s, own, cid, "two.txt", "text/plain", textDoc)

	// Callers with no collection they administer are denied.
	for caller, status := range map[string]int{"viewer": 403, "outsider": 403, "read-only key": 403} {
		t.Run(caller, func(t *testing.T) { wantStatus(t, s.Do("POST", "/jobs/retry-all-failed", tok[caller], nil), status) })
	}
	wantStatus(t, s.Do("POST", "/jobs/retry-all-failed", "", nil), http.StatusUnauthorized)
	// A collection admin elsewhere retries only its own collections' failed jobs.
	createCollection(t, s, tok["outsider"], map[string]any{"name": "other"})
	r := s.Do("POST", "/jobs/retry-all-failed", tok["outsider"], nil)
	wantStatus(t, r, http.StatusOK)
	if b := r.Map(t); b["status"] != "queued" || b["count"] != float64(0) {
		t.Errorf("retry in a collection without failed jobs: %v", b)
	}

	r = s.Do("POST", "/jobs/retry-all-failed", tok["shared admin"], nil)
	wantStatus(t, r, http.StatusOK)
	if b := r.Map(t); b["status"] != "queued" || b["count"] != float64(1) {
		t.Fatalf("retry: %v", b)
	}
	queued := byID(listJobs(t, s, own, "?status=queued"))
	if len(queued) != 3 || queued[first]["queuePosition"] != float64(1) || queued[second]["queuePosition"] != float64(2) ||
		queued[failed]["queuePosition"] != float64(3) {
		t.Fatalf("queue after retry (want the retried job last): %v", queued)
	}
	if j := queued[failed]; j["retryCount"] != float64(0) || j["error"] != nil || j["startedAt"] != nil || j["completedAt"] != nil {
		t.Errorf("retried job %v", j)
	}
	if f, _ := getFile(t, s, own, badFile); f["status"] != "pending" {
		t.Errorf("file of a retried job: %v", f["status"])
	}
	// Nothing failed any more: a second call requeues nothing.
	r = s.Do("POST", "/jobs/retry-all-failed", own, nil)
	wantStatus(t, r, http.StatusOK)
	if b := r.Map(t); b["count"] != float64(0) {
		t.Errorf("second retry: %v", b)
	}
	// The queue runs in order: the retried job fails again, the others complete.
	s.StartWorkers(nil)
	for id, want := range map[string]string{first: "completed", second: "completed", failed: "failed"} {
		if j := waitJob(t, s, own, id); j["status"] != want {
			t.Errorf("job %s: %v, want %s", id, j["status"], want)
		}
	}
}

func TestDeleteFailedJobs(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "failures")
	own := tok["owner"]
	badFile, failed := failedUpload(t, s, own, cid, "bad.bin")
	_, queued := upload(t, s, own, cid, "ok.txt", "text/plain", textDoc)
	// A failed job in someone else's collection stays.
	foreign := createCollection(t, s, tok["outsider"], map[string]any{"name": "foreign"})["id"].(string)
	_, foreignFailed := failedUpload(t, s, tok["outsider"], foreign, "theirs.bin")

	for caller, status := range map[string]int{"viewer": 403, "read-only key": 403} {
		t.Run(caller, func(t *testing.T) { wantStatus(t, s.Do("DELETE", "/jobs/failed", tok[caller], nil), status) })
	}
	wantStatus(t, s.Do("DELETE", "/jobs/failed", "", nil), http.StatusUnauthorized)
	r := s.Do("DELETE", "/jobs/failed", tok["shared admin"], nil)
	wantStatus(t, r, http.StatusOK)
	if b := r.Map(t); b["status"] != "deleted" || b["count"] != float64(1) {
		t.Fatalf("delete failed jobs: %v", b)
	}
	wantStatus(t, s.Do("GET", "/jobs/"+failed, own, nil), http.StatusNotFound)
	wantStatus(t, s.Do("GET", "/jobs/"+queued, own, nil), http.StatusOK)
	wantStatus(t, s.Do("GET", "/files/"+badFile, own, nil), http.StatusOK)
	if j, _ := getJob(t, s, tok["outsider"], foreignFailed); j["status"] != "failed" {
		t.Errorf("foreign failed job: %v", j)
	}
	r = s.Do("DELETE", "/jobs/failed", own, nil)
	wantStatus(t, r, http.StatusOK)
	if b := r.Map(t); b["count"] != float64(0) {
		t.Errorf("second delete: %v", b)
	}
	// The global administrator administers every collection.
	r = s.Do("DELETE", "/jobs/failed", tok["global admin"], nil)
	wantStatus(t, r, http.StatusOK)
	if b := r.Map(t); b["count"] != float64(1) {
		t.Errorf("global admin delete: %v", b)
	}
}

func TestReindexAll(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "everything")
	own := tok["owner"]
	// Only collections without files: no_files.
	r := s.Do("POST", "/reindex-all", own, nil)
	wantStatus(t, r, http.StatusOK)
	if b := r.Map(t); b["status"] != "no_files" || b["fileCount"] != float64(0) || len(b["jobIds"].([]any)) != 0 {
		t.Errorf("reindex-all without files: %v", b)
	}
	for caller, status := range map[string]int{"viewer": 403, "outsider": 403, "read-only key": 403} {
		t.Run(caller, func(t *testing.T) { wantStatus(t, s.Do("POST", "/reindex-all", tok[caller], nil), status) })
	}
	wantStatus(t, s.Do("POST", "/reindex-all", "", nil), http.StatusUnauthorized)

	a, _ := upload(t, s, own, cid, "a.txt", "text/plain", textDoc)
	b, _ := upload(t, s, own, cid, "b.md", "text/markdown", markdownDoc)
	foreign := createCollection(t, s, tok["outsider"], map[string]any{"name": "foreign"})["id"].(string)
	upload(t, s, tok["outsider"], foreign, "c.txt", "text/plain", textDoc)
	s.StartWorkers(nil)
	eventually(t, "the uploads to be indexed", func() bool {
		return len(listJobs(t, s, tok["global admin"], "?status=completed")) == 3
	})

	r = s.Do("POST", "/reindex-all", tok["shared admin"], nil)
	wantStatus(t, r, http.StatusOK)
	var res struct {
		Status    string   `json:"status"`
		FileCount int      `json:"fileCount"`
		JobIDs    []string `json:"jobIds"`
	}
	r.JSON(t, &res)
	if res.Status != "queued" || res.FileCount != 2 || len(res.JobIDs) != 2 {
		t.Fatalf("reindex-all: %+v", res)
	}
	files := map[string]bool{}
	for _, id := range res.JobIDs {
		j := waitJob(t, s, own, id)
		if j["type"] != "reindex" || j["status"] != "completed" {
			t.Errorf("reindex job %v", j)
		}
		files[j["fileId"].(string)] = true
	}
	if !files[a["id"].(string)] || !files[b["id"].(string)] {
		t.Errorf("reindexed files %v", files)
	}
	// The global administrator reindexes every collection.
	r = s.Do("POST", "/reindex-all", tok["global admin"], nil)
	wantStatus(t, r, http.StatusOK)
	r.JSON(t, &res)
	if res.FileCount != 3 {
		t.Errorf("global reindex-all: %+v", res)
	}
}

func TestListJobs(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "listing")
	own := tok["owner"]
	fa, ja := upload(t, s, own, cid, "a.txt", "text/plain", textDoc)
	_, jb := upload(t, s, own, cid, "b.txt", "text/plain", textDoc)
	// A language change queues a rebuild_fts job, which concerns the whole collection.
	wantStatus(t, s.Do("PUT", "/api/collections/"+cid, own, map[string]any{"searchLanguage": "german"}), http.StatusOK)
	foreign := createCollection(t, s, tok["outsider"], map[string]any{"name": "foreign"})["id"].(string)
	_, jc := upload(t, s, tok["outsider"], foreign, "c.txt", "text/plain", textDoc)

	all := listJobs(t, s, own, "")
	if len(all) != 3 || all[1]["id"] != jb || all[2]["id"] != ja {
		t.Fatalf("owner's jobs, newest first: %v", all)
	}
	rebuild := all[0]
	if rebuild["type"] != "rebuild_fts" || rebuild["fileId"] != nil || rebuild["fileName"] != nil ||
		rebuild["collectionId"] != cid || rebuild["collectionName"] != "listing" || rebuild["queuePosition"] != float64(3) {
		t.Errorf("rebuild_fts job %v", rebuild)
	}
	if all[2]["queuePosition"] != float64(1) || all[1]["queuePosition"] != float64(2) || all[2]["fileName"] != "a.txt" {
		t.Errorf("queue positions %v / %v", all[2], all[1])
	}
	// Positions are global: the foreign job is fourth for its owner too.
	if theirs := listJobs(t, s, tok["outsider"], ""); len(theirs) != 1 || theirs[0]["id"] != jc || theirs[0]["queuePosition"] != float64(4) {
		t.Errorf("outsider's jobs %v", theirs)
	}
	for caller, want := range map[string]int{"shared admin": 3, "viewer": 3, "read-only key": 3, "global admin": 4} {
		if got := listJobs(t, s, tok[caller], ""); len(got) != want {
			t.Errorf("%s sees %d jobs, want %d", caller, len(got), want)
		}
	}
	for query, want := range map[string]int{
		"?fileId=" + fa["id"].(string): 1, "?collectionId=" + cid: 3, "?collectionId=" + foreign: 0, "?status=queued": 3,
		"?status=completed": 0, "?status=queued&collectionId=" + cid + "&fileId=" + fa["id"].(string): 1,
		"?limit=1": 1, "?limit=2&offset=2": 1, "?offset=3": 0,
	} {
		if got := listJobs(t, s, own, query); len(got) != want {
			t.Errorf("GET /jobs%s: %d jobs, want %d", query, len(got), want)
		}
	}
	if page := listJobs(t, s, own, "?limit=1&offset=1"); page[0]["id"] != jb {
		t.Errorf("second page %v", page)
	}
	for _, q := range []string{"?status=waiting", "?collectionId=x", "?fileId=1", "?limit=1001", "?limit=-5", "?offset=-1", "?limit=ten"} {
		wantStatus(t, s.Do("GET", "/jobs"+q, own, nil), http.StatusBadRequest)
	}
	wantStatus(t, s.Do("GET", "/jobs", "", nil), http.StatusUnauthorized)

	// Once run, the jobs have no queue position; the rebuild_fts job completes too.
	s.StartWorkers(nil)
	eventually(t, "the queue to drain", func() bool { return len(listJobs(t, s, tok["global admin"], "?status=completed")) == 4 })
	for _, j := range listJobs(t, s, own, "") {
		if j["queuePosition"] != nil || j["startedAt"] == nil || j["completedAt"] == nil {
			t.Errorf("completed job %v", j)
		}
	}
}

// TestFileAndJobPermissions walks the permission rows of spec part 5 for the file and job
// endpoints, for every kind of caller, each on a fresh file.
func TestFileAndJobPermissions(t *testing.T) {
	s := newIndexServer(t)
	cid, tok := sharedCollection(t, s, "perms")
	own := tok["owner"]
	type setup struct{ fileID, jobID string }
	fresh := func() setup {
		f, j := upload(t, s, own, cid, "f.txt", "text/plain", textDoc)
		return setup{f["id"].(string), j}
	}
	ops := map[string]func(tok string, x setup) *docindextest.Response{
		"upload": func(tk string, _ setup) *docindextest.Response {
			return s.Upload(tk, docindextest.FileUpload{CollectionID: cid, Name: "x.txt", Body: strings.NewReader(textDoc)})
		},
		"get file": func(tk string, x setup) *docindextest.Response { return s.Do("GET", "/files/"+x.fileID, tk, nil) },
		"reindex": func(tk string, x setup) *docindextest.Response {
			return s.Do("POST", "/files/"+x.fileID+"/reindex", tk, nil)
		},
		"delete":     func(tk string, x setup) *docindextest.Response { return s.Do("DELETE", "/files/"+x.fileID, tk, nil) },
		"get job":    func(tk string, x setup) *docindextest.Response { return s.Do("GET", "/jobs/"+x.jobID, tk, nil) },
		"delete job": func(tk string, x setup) *docindextest.Response { return s.Do("DELETE", "/jobs/"+x.jobID, tk, nil) },
		"bulk delete": func(tk string, x setup) *docindextest.Response {
			return s.Do("POST", "/files/bulk-delete", tk, map[string]any{"fileIds": []string{x.fileID}})
		},
		"search": func(tk string, _ setup) *docindextest.Response {
			return s.Do("POST", "/api/collections/"+cid+"/search", tk, map[string]any{"query": "lighthouse"})
		},
	}
	want := map[string]map[string]int{
		"owner":         {"upload": 201, "get file": 200, "reindex": 200, "delete": 200, "get job": 200, "delete job": 200, "bulk delete": 200, "search": 200},
		"shared admin":  {"upload": 201, "get file": 200, "reindex": 200, "delete": 200, "get job": 200, "delete job": 200, "bulk delete": 200, "search": 200},
		"viewer":        {"upload": 404, "get file": 200, "reindex": 403, "delete": 403, "get job": 200, "delete job": 403, "bulk delete": 403, "search": 200},
		"outsider":      {"upload": 404, "get file": 403, "reindex": 403, "delete": 404, "get job": 403, "delete job": 404, "bulk delete": 403, "search": 403},
		"global admin":  {"upload": 201, "get file": 200, "reindex": 200, "delete": 200, "get job": 200, "delete job": 200, "bulk delete": 200, "search": 200},
		"read-only key": {"upload": 403, "get file": 200, "reindex": 403, "delete": 403, "get job": 200, "delete job": 403, "bulk delete": 403, "search": 200},
	}
	for caller, tk := range tok {
		for name, op := range ops {
			t.Run(caller+"/"+name, func(t *testing.T) {
				x := fresh()
				wantStatus(t, op(tk, x), want[caller][name])
				// Whatever was refused left the file and its job in place.
				if want[caller][name] >= 400 {
					wantStatus(t, s.Do("GET", "/files/"+x.fileID, own, nil), http.StatusOK)
					wantStatus(t, s.Do("GET", "/jobs/"+x.jobID, own, nil), http.StatusOK)
				}
			})
		}
	}
	// The bulk job endpoints: admin access to at least one collection.
	for caller, status := range map[string]int{"owner": 200, "shared admin": 200, "global admin": 200, "viewer": 403, "outsider": 403, "read-only key": 403} {
		for _, ep := range []struct{ method, path string }{{"POST", "/jobs/retry-all-failed"}, {"DELETE", "/jobs/failed"}, {"POST", "/reindex-all"}} {
			t.Run(caller+ep.path, func(t *testing.T) { wantStatus(t, s.Do(ep.method, ep.path, tok[caller], nil), status) })
		}
	}
}
