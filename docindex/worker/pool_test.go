package worker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/worker"
)

// testLog sends log lines to t.Log until the test ends (a late line would panic).
type testLog struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

func logger(t testing.TB) *slog.Logger {
	w := &testLog{t: t}
	t.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func noBackoff(int) time.Duration { return 0 }

// runPool runs p until the test ends and fails the test if Run returns an error.
func runPool(t *testing.T, p *worker.Pool) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(60 * time.Second):
				t.Errorf("Run did not return after its context ended")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func job(t *testing.T, db bun.IDB, id uuid.UUID) queue.Job {
	t.Helper()
	var j queue.Job
	if err := db.NewSelect().Model(&j).Where("j.id = ?", id).Scan(context.Background()); err != nil {
		t.Fatalf("load job: %v", err)
	}
	return j
}

// waitFor polls cond until it holds; the deadline is generous because the assertion is about
// what happens, not how fast.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitStatus(t *testing.T, db bun.IDB, id uuid.UUID, status string) queue.Job {
	t.Helper()
	var j queue.Job
	waitFor(t, "job "+status, func() bool { j = job(t, db, id); return j.Status == status })
	return j
}

func enqueue(t *testing.T, q *queue.Queue, db bun.IDB, jobs ...queue.NewJob) []queue.Job {
	t.Helper()
	out, err := q.Enqueue(context.Background(), db, jobs...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fileJob(maxRetries int) queue.NewJob {
	return queue.NewJob{Type: queue.TypeIndex, FileID: uuid.NullUUID{UUID: uuid.New(), Valid: true}, MaxRetries: maxRetries}
}

func TestPoolCompletesRetriesAndFails(t *testing.T) {
	t.Parallel()
	db := docindextest.NewDB(t)
	q := queue.New(db, queue.WithBackoff(noBackoff), queue.WithLogger(logger(t)))
	var mu sync.Mutex
	attempts := map[uuid.UUID]int{}
	behaviour := map[uuid.UUID]string{}
	h := worker.HandlerFunc(func(ctx context.Context, j queue.Job) error {
		mu.Lock()
		attempts[j.ID]++
		n, b := attempts[j.ID], behaviour[j.ID]
		mu.Unlock()
		switch {
		case b == "flaky" && n == 1:
			return errors.New("embedder unavailable")
		case b == "panic" && n == 1:
			panic("nil map somewhere")
		case b == "unsupported":
			return worker.Permanent(fmt.Errorf("extract: %w", errors.New("unsupported format application/x-foo")))
		case b == "always":
			return fmt.Errorf("attempt %d failed", n)
		}
		return nil
	})
	jobs := enqueue(t, q, db, fileJob(0), fileJob(0), fileJob(0), fileJob(0), fileJob(2))
	mu.Lock()
	behaviour[jobs[1].ID] = "flaky"
	behaviour[jobs[2].ID] = "panic"
	behaviour[jobs[3].ID] = "unsupported"
	behaviour[jobs[4].ID] = "always"
	mu.Unlock()
	runPool(t, worker.New(q, h, worker.WithWorkers(3), worker.WithPoll(50*time.Millisecond), worker.WithLogger(logger(t))))

	ok := waitStatus(t, db, jobs[0].ID, queue.StatusCompleted)
	if ok.RetryCount != 0 || ok.Error != nil || ok.CompletedAt == nil {
		t.Fatalf("plain job = %+v", ok)
	}
	if flaky := waitStatus(t, db, jobs[1].ID, queue.StatusCompleted); flaky.RetryCount != 1 {
		t.Fatalf("flaky job = %+v, want completed after one retry", flaky)
	}
	if p := waitStatus(t, db, jobs[2].ID, queue.StatusCompleted); p.RetryCount != 1 {
		t.Fatalf("panicking job = %+v, want completed after one retry", p)
	}
	perm := waitStatus(t, db, jobs[3].ID, queue.StatusFailed)
	if perm.RetryCount != 0 || perm.Error == nil || *perm.Error != "extract: unsupported format application/x-foo" {
		t.Fatalf("permanent failure = %+v", perm)
	}
	always := waitStatus(t, db, jobs[4].ID, queue.StatusFailed)
	if always.RetryCount != 2 || always.Error == nil || *always.Error != "attempt 3 failed" {
		t.Fatalf("job failing every time = %+v, want failed after 2 retries with the last error", always)
	}
	mu.Lock()
	defer mu.Unlock()
	if attempts[jobs[3].ID] != 1 || attempts[jobs[4].ID] != 3 {
		t.Fatalf("attempts: permanent %d (want 1), always %d (want 3)", attempts[jobs[3].ID], attempts[jobs[4].ID])
	}
}

func TestPanicIsRecordedWithItsStack(t *testing.T) {
	t.Parallel()
	db := docindextest.NewDB(t)
	q := queue.New(db, queue.WithLogger(logger(t)))
	h := worker.HandlerFunc(func(ctx context.Context, j queue.Job) error {
		var m map[string]int
		m["boom"]++ // a real runtime panic
		return nil
	})
	j := enqueue(t, q, db, fileJob(-1))[0]
	runPool(t, worker.New(q, h, worker.WithLogger(logger(t))))
	got := waitStatus(t, db, j.ID, queue.StatusFailed)
	if got.Error == nil || !strings.Contains(*got.Error, "handler panic: assignment to entry in nil map") ||
		!strings.Contains(*got.Error, "pool_test.go") {
		t.Fatalf("error of a panicking job: %v", got.Error)
	}
}

// An idle pool with an hour-long poll interval still picks a new job up: only the notification
// can have woken it.
func TestNotificationWakesIdlePool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := docindextest.NewDB(t)
	q := queue.New(db, queue.WithLogger(logger(t)))
	done := make(chan uuid.UUID, 4)
	h := worker.HandlerFunc(func(ctx context.Context, j queue.Job) error { done <- j.ID; return nil })
	runPool(t, worker.New(q, h, worker.WithPoll(time.Hour), worker.WithRescuer(false), worker.WithLogger(logger(t))))
	// Wait until the pool listens, so neither its first claim nor the wake-up on connecting can
	// pick the job up.
	waitFor(t, "the pool to listen", func() bool {
		var n int
		err := db.NewRaw(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query = ?`,
			"LISTEN "+queue.Channel).Scan(ctx, &n)
		return err == nil && n == 1
	})
	time.Sleep(100 * time.Millisecond) // let the claim after connecting finish; a late one only helps
	for i := range 2 {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		j := enqueue(t, q, tx, fileJob(0))[0]
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-done:
			if id != j.ID {
				t.Fatalf("ran %s, want %s", id, j.ID)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("job %d not picked up by an idle pool polling hourly", i)
		}
		waitStatus(t, db, j.ID, queue.StatusCompleted)
	}
}

// A job cancelled (its file deleted) while running: the heartbeat tells the worker, the handler's
// context is cancelled with ErrLeaseLost, and whatever it returns is discarded.
func TestLostJobIsStoppedAndItsResultDiscarded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := docindextest.NewDB(t)
	q := queue.New(db, queue.WithLease(3*time.Second), queue.WithLogger(logger(t)))
	started := make(chan struct{})
	cause := make(chan error, 1)
	h := worker.HandlerFunc(func(ctx context.Context, j queue.Job) error {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return nil // claims success; must not complete a cancelled job
	})
	fj := fileJob(0)
	j := enqueue(t, q, db, fj)[0]
	runPool(t, worker.New(q, h, worker.WithHeartbeat(100*time.Millisecond), worker.WithLogger(logger(t))))
	<-started
	if err := q.CancelFileJobs(ctx, db, fj.FileID.UUID); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-cause:
		if !errors.Is(err, queue.ErrLeaseLost) {
			t.Fatalf("handler context cause %v, want ErrLeaseLost", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("handler of a cancelled job was not stopped")
	}
	time.Sleep(200 * time.Millisecond)
	if got := job(t, db, j.ID); got.Status != queue.StatusCancelled {
		t.Fatalf("cancelled job ended %s", got.Status)
	}
}

func TestJobTimeoutFailsTheJob(t *testing.T) {
	t.Parallel()
	db := docindextest.NewDB(t)
	q := queue.New(db, queue.WithLogger(logger(t)))
	h := worker.HandlerFunc(func(ctx context.Context, j queue.Job) error {
		<-ctx.Done()
		return fmt.Errorf("embed: %w", ctx.Err())
	})
	j := enqueue(t, q, db, fileJob(-1))[0]
	runPool(t, worker.New(q, h, worker.WithJobTimeout(200*time.Millisecond), worker.WithLogger(logger(t))))
	got := waitStatus(t, db, j.ID, queue.StatusFailed)
	if got.Error == nil || !strings.Contains(*got.Error, "job timed out after 200ms") {
		t.Fatalf("timed-out job error: %v", got.Error)
	}
}

func TestShutdownLetsJobsFinishWithinGrace(t *testing.T) {
	t.Parallel()
	db := docindextest.NewDB(t)
	q := queue.New(db, queue.WithLogger(logger(t)))
	started := make(chan struct{})
	release := make(chan struct{})
	var sawCancel atomic.Bool
	h := worker.HandlerFunc(func(ctx context.Context, j queue.Job) error {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			sawCancel.Store(true)
			return ctx.Err()
		}
		return nil
	})
	j := enqueue(t, q, db, fileJob(0))[0]
	p := worker.New(q, h, worker.WithGrace(time.Minute), worker.WithLogger(logger(t)))
	stop := runPool(t, p)
	<-started
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	time.Sleep(300 * time.Millisecond)
	select {
	case <-stopped:
		t.Fatal("Run returned while a job was still running within the grace period")
	default:
	}
	later := enqueue(t, q, db, fileJob(0))[0]
	close(release)
	<-stopped
	if sawCancel.Load() {
		t.Fatal("the job's context was cancelled within the grace period")
	}
	if got := job(t, db, j.ID); got.Status != queue.StatusCompleted {
		t.Fatalf("job finished during shutdown ended %s", got.Status)
	}
	if got := job(t, db, later.ID); got.Status != queue.StatusQueued {
		t.Fatalf("a stopping pool claimed a new job: %s", got.Status)
	}
}

func TestShutdownAfterGraceReleasesJobs(t *testing.T) {
	t.Parallel()
	db := docindextest.NewDB(t)
	q := queue.New(db, queue.WithLogger(logger(t)))
	started := make(chan struct{})
	cause := make(chan error, 1)
	h := worker.HandlerFunc(func(ctx context.Context, j queue.Job) error {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	})
	j := enqueue(t, q, db, fileJob(0))[0]
	stop := runPool(t, worker.New(q, h, worker.WithGrace(100*time.Millisecond), worker.WithLogger(logger(t))))
	<-started
	stop()
	if err := <-cause; !errors.Is(err, worker.ErrShutdown) {
		t.Fatalf("cause %v, want ErrShutdown", err)
	}
	got := job(t, db, j.ID)
	if got.Status != queue.StatusQueued || got.RetryCount != 0 || got.WorkerID != nil || got.Seq != j.Seq {
		t.Fatalf("job stopped by shutdown = %+v, want queued in its place without a retry counted", got)
	}
}

func TestPermanent(t *testing.T) {
	t.Parallel()
	base := errors.New("unsupported format")
	err := fmt.Errorf("index file: %w", worker.Permanent(base))
	if !worker.IsPermanent(err) || !errors.Is(err, base) || err.Error() != "index file: unsupported format" {
		t.Fatalf("wrapped permanent error: %v", err)
	}
	if worker.IsPermanent(base) || worker.IsPermanent(nil) || worker.Permanent(nil) != nil {
		t.Fatal("plain errors are not permanent")
	}
}

// A job waiting on another service (worker.Wait) frees its worker for the next job, up to
// WithMaxWaiting jobs beyond the workers; a job that does not wait keeps its worker.
func TestWaitingJobsFreeTheirWorker(t *testing.T) {
	t.Parallel()
	db := docindextest.NewDB(t)
	q := queue.New(db, queue.WithLogger(logger(t)))
	release := make(chan struct{})
	var running, waited atomic.Int32
	h := worker.HandlerFunc(func(ctx context.Context, j queue.Job) error {
		running.Add(1)
		defer running.Add(-1)
		if j.Type == queue.TypeIndex {
			resume := worker.Wait(ctx)
			defer resume()
			nested := worker.Wait(ctx) // within a wait: counts once
			defer nested()
			waited.Add(1)
		}
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	})
	jobs := enqueue(t, q, db, fileJob(0), fileJob(0), fileJob(0), fileJob(0))
	runPool(t, worker.New(q, h, worker.WithWorkers(1), worker.WithMaxWaiting(2), worker.WithPoll(20*time.Millisecond), worker.WithLogger(logger(t))))
	waitFor(t, "three jobs waiting", func() bool { return waited.Load() == 3 })
	time.Sleep(200 * time.Millisecond) // polls that must not start a fourth
	if n := running.Load(); n != 3 {
		t.Fatalf("%d jobs running, want 3: one worker and two waiting beyond it", n)
	}
	if got := job(t, db, jobs[3].ID); got.Status != queue.StatusQueued {
		t.Fatalf("fourth job %s, want queued", got.Status)
	}
	close(release)
	for _, j := range jobs {
		waitStatus(t, db, j.ID, queue.StatusCompleted)
	}

	// Outside a pool Wait does nothing, and a job that does not wait holds its worker.
	worker.Wait(context.Background())()
	release = make(chan struct{})
	busy := enqueue(t, q, db, queue.NewJob{Type: queue.TypeReindex, FileID: uuid.NullUUID{UUID: uuid.New(), Valid: true}},
		queue.NewJob{Type: queue.TypeReindex, FileID: uuid.NullUUID{UUID: uuid.New(), Valid: true}})
	waitStatus(t, db, busy[0].ID, queue.StatusRunning)
	time.Sleep(200 * time.Millisecond)
	if n := running.Load(); n != 1 {
		t.Fatalf("%d jobs running, want 1: a job that does not wait keeps the only worker", n)
	}
	if got := job(t, db, busy[1].ID); got.Status != queue.StatusQueued {
		t.Fatalf("second job %s, want queued", got.Status)
	}
	close(release)
	waitStatus(t, db, busy[1].ID, queue.StatusCompleted)
}
