package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/worker"
)

// The helper process reads its mode from these variables.
const (
	envHelper   = "DOCINDEX_WORKER_HELPER"
	envHelperDB = "DOCINDEX_WORKER_HELPER_DB"
	envHelperID = "DOCINDEX_WORKER_HELPER_ID"
)

// A short lease so a dead worker's job is rescued within seconds.
const processLease = 3 * time.Second

// writeResult is the handler's idempotent write: one row per file whatever the number of runs;
// runs counts them so the test can see the dead worker's write happened.
func writeResult(ctx context.Context, db bun.IDB, j queue.Job, workerID string) error {
	_, err := db.ExecContext(ctx, `INSERT INTO results (file_id, worker, runs) VALUES (?, ?, 1)
		ON CONFLICT (file_id) DO UPDATE SET worker = excluded.worker, runs = results.runs + 1`,
		j.FileID.UUID, workerID)
	return err
}

// TestWorkerProcess is not a test of its own: TestKilledWorkerProcessJobIsRescued runs the test
// binary again with envHelper set, and this function becomes a worker process whose handler
// writes its result and then hangs, until the parent kills it.
func TestWorkerProcess(t *testing.T) {
	if os.Getenv(envHelper) != "1" {
		return
	}
	// Never outlive a parent that died without killing us.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := docindex.OpenDB(ctx, os.Getenv(envHelperDB))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id := os.Getenv(envHelperID)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	q := queue.New(db, queue.WithLease(processLease), queue.WithLogger(log))
	h := worker.HandlerFunc(func(ctx context.Context, j queue.Job) error {
		if err := writeResult(ctx, db, j, id); err != nil {
			return err
		}
		<-ctx.Done() // hangs mid-job
		return ctx.Err()
	})
	p := worker.New(q, h, worker.WithID(id), worker.WithWorkers(1), worker.WithRescuer(false),
		worker.WithHeartbeat(200*time.Millisecond), worker.WithPoll(100*time.Millisecond), worker.WithLogger(log))
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// A worker in a separate process claims a job and is killed with SIGKILL mid-job. A pool in this
// process, which leaves the job alone while the worker lives, rescues it once the lease expired
// and completes it; the result exists exactly once.
func TestKilledWorkerProcessJobIsRescued(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := docindextest.URL(t)
	db, err := docindex.OpenDB(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(ctx, `CREATE TABLE results (file_id uuid PRIMARY KEY, worker text NOT NULL, runs int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	q := queue.New(db, queue.WithLease(processLease), queue.WithBackoff(noBackoff), queue.WithLogger(logger(t)))
	j := enqueue(t, q, db, fileJob(0))[0]

	childID := fmt.Sprintf("child-%s", uuid.NewString()[:8])
	var out bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envHelper+"=1", envHelperDB+"="+url, envHelperID+"="+childID)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("worker process output:\n%s", out.String())
		}
	})

	// The child owns the job and has written its result.
	var running queue.Job
	waitFor(t, "the worker process to claim the job and write its result", func() bool {
		running = job(t, db, j.ID)
		var n int
		_ = db.NewRaw("SELECT count(*) FROM results").Scan(ctx, &n)
		return running.Status == queue.StatusRunning && running.WorkerID != nil && *running.WorkerID == childID && n == 1
	})

	// This process's pool rescues expired leases; a live child's lease does not expire.
	var handled []string
	h := worker.HandlerFunc(func(ctx context.Context, got queue.Job) error {
		handled = append(handled, got.ID.String())
		return writeResult(ctx, db, got, "parent")
	})
	p := worker.New(q, h, worker.WithID("parent"), worker.WithRescueInterval(200*time.Millisecond),
		worker.WithPoll(100*time.Millisecond), worker.WithLogger(logger(t)))
	stop := runPool(t, p)
	time.Sleep(2 * processLease)
	alive := job(t, db, j.ID)
	if alive.Status != queue.StatusRunning || *alive.WorkerID != childID || !alive.HeartbeatAt.After(*running.HeartbeatAt) {
		t.Fatalf("while the worker process lives its job must stay its own with a renewed lease: %+v", alive)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("worker process ended with %v, want killed by SIGKILL", err)
	}

	done := waitStatus(t, db, j.ID, queue.StatusCompleted)
	stop()
	if done.WorkerID == nil || *done.WorkerID != "parent" || done.RetryCount != 1 {
		t.Fatalf("rescued job = %+v, want completed by the parent after one retry", done)
	}
	var rows []struct {
		FileID uuid.UUID `bun:"file_id,type:uuid"`
		Worker string    `bun:"worker"`
		Runs   int       `bun:"runs"`
	}
	if err := db.NewRaw("SELECT file_id, worker, runs FROM results").Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].FileID != j.FileID.UUID || rows[0].Worker != "parent" || rows[0].Runs != 2 {
		t.Fatalf("results = %+v, want one row for the file, written by both runs, last by the parent", rows)
	}
	if len(handled) != 1 {
		t.Fatalf("the parent ran the job %d times", len(handled))
	}
}
