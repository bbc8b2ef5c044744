package docindex_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/vectorstore"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

// stallingEmbedder hangs on every call: the worker process that uses it is killed mid-job.
type stallingEmbedder struct{ embedder.Embedder }

func (s stallingEmbedder) Embed(ctx context.Context, _ string, _ []string) ([][]float32, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

const lease = 2 * time.Second

func newService(t testing.TB, url, blobDir string, e embedder.Embedder) *docindex.Service {
	t.Helper()
	db, err := docindex.OpenDB(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.NewDir(blobDir)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := docindex.New(db, docindex.WithEmbedders(e), docindex.WithBlobStore(blobs),
		docindex.WithLogger(testLogger()),
		docindex.WithQueueOptions(queue.WithLease(lease)))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestWorkerProcess is the body of the worker process that TestKilledWorkerJobIsRescued starts
// and kills; it does nothing in a normal run.
func TestWorkerProcess(t *testing.T) {
	url := os.Getenv("DOCINDEX_RESCUE_DB")
	if url == "" {
		return
	}
	svc := newService(t, url, os.Getenv("DOCINDEX_RESCUE_BLOBS"), stallingEmbedder{hash.New()})
	pool := worker.New(svc.Queue(), svc, worker.WithWorkers(1), worker.WithPoll(100*time.Millisecond),
		worker.WithRescuer(false), worker.WithID("doomed-worker"))
	_ = pool.Run(context.Background()) // runs until killed
}

// A worker process is killed in the middle of an indexing job; after its lease expires another
// worker rescues the job and completes it, and the file's chunks exist exactly once.
func TestKilledWorkerJobIsRescued(t *testing.T) {
	ctx := context.Background()
	url := docindextest.URL(t)
	blobDir := t.TempDir()
	svc := newService(t, url, blobDir, hash.New())
	p := ownerPrincipal(t, svc)
	c, err := svc.CreateCollection(ctx, p, docindex.CollectionInput{Name: "rescue"})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("Workers die and jobs survive them. ", 400)
	up, err := svc.UploadFile(ctx, p, docindex.Upload{CollectionID: c.ID, Name: "survivor.txt", Body: strings.NewReader(text)})
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$")
	cmd.Env = append(os.Environ(), "DOCINDEX_RESCUE_DB="+url, "DOCINDEX_RESCUE_BLOBS="+blobDir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	job := waitJob(t, svc, up.JobID, func(j *queue.Job) bool { return j.Status == queue.StatusRunning })
	if job.WorkerID == nil || *job.WorkerID != "doomed-worker" {
		t.Fatalf("job runs on %v, want the worker process", job.WorkerID)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no chance to clean up
		t.Fatal(err)
	}
	_ = cmd.Wait()

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	pool := worker.New(svc.Queue(), svc, worker.WithWorkers(1), worker.WithPoll(100*time.Millisecond),
		worker.WithRescueInterval(500*time.Millisecond), worker.WithID("survivor"))
	go func() { _ = pool.Run(runCtx) }()
	job = waitJob(t, svc, up.JobID, func(j *queue.Job) bool { return j.Status == queue.StatusCompleted || j.Status == queue.StatusFailed })
	if job.Status != queue.StatusCompleted || job.WorkerID == nil || *job.WorkerID != "survivor" {
		t.Fatalf("job ended %s on %v (error %v)", job.Status, job.WorkerID, job.Error)
	}
	if job.RetryCount != 1 {
		t.Errorf("retryCount %d, want 1 (the rescue)", job.RetryCount)
	}
	vs := vectorstore.New(svc.DB())
	n, err := vs.Count(ctx, c.ID, uuid.NullUUID{UUID: up.File.ID, Valid: true})
	if err != nil {
		t.Fatal(err)
	}
	var ordinals, distinct int
	if err := svc.DB().QueryRowContext(ctx, "SELECT count(*), count(DISTINCT ordinal) FROM "+vectorstore.Relation(c.ID)+" k").
		Scan(&ordinals, &distinct); err != nil {
		t.Fatal(err)
	}
	if n == 0 || ordinals != distinct || n != ordinals {
		t.Fatalf("chunks: %d for the file, %d rows, %d distinct ordinals: duplicated or missing", n, ordinals, distinct)
	}
	d, err := svc.GetFile(ctx, p, up.File.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.File.Status != "indexed" {
		t.Fatalf("file status %s", d.File.Status)
	}
}

func waitJob(t *testing.T, svc *docindex.Service, id uuid.UUID, done func(*queue.Job) bool) *queue.Job {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j := &queue.Job{}
		err := svc.DB().NewSelect().Model(j).Where("j.id = ?", id).Scan(context.Background())
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		if done(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s stuck in %s", id, j.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// testLogger discards logs unless DOCINDEX_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("DOCINDEX_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func ownerPrincipal(t testing.TB, svc *docindex.Service) *access.Principal {
	t.Helper()
	u, err := svc.EnsureUser(context.Background(), "owner@example.com", "Owner", false)
	if err != nil {
		t.Fatal(err)
	}
	return &access.Principal{UserID: u.ID, Email: u.Email}
}
