package queue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/queue"
)

func setup(t *testing.T, opts ...queue.Option) (*bun.DB, *queue.Queue) {
	t.Helper()
	db := docindextest.NewDB(t)
	return db, queue.New(db, append([]queue.Option{queue.WithLogger(logger(t))}, opts...)...)
}

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
	return slog.New(slog.NewTextHandler(w, nil))
}

func enqueue(t *testing.T, q *queue.Queue, db bun.IDB, jobs ...queue.NewJob) []queue.Job {
	t.Helper()
	out, err := q.Enqueue(context.Background(), db, jobs...)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	return out
}

func indexJobs(n int) []queue.NewJob {
	jobs := make([]queue.NewJob, n)
	for i := range jobs {
		jobs[i] = queue.NewJob{Type: queue.TypeIndex, FileID: uuid.NullUUID{UUID: uuid.New(), Valid: true}}
	}
	return jobs
}

func get(t *testing.T, db bun.IDB, id uuid.UUID) queue.Job {
	t.Helper()
	var j queue.Job
	if err := db.NewSelect().Model(&j).Where("j.id = ?", id).Scan(context.Background()); err != nil {
		t.Fatalf("load job %s: %v", id, err)
	}
	return j
}

func claim(t *testing.T, q *queue.Queue, worker string, n int) []queue.Job {
	t.Helper()
	jobs, err := q.Claim(context.Background(), worker, n)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	return jobs
}

func exec(t *testing.T, db bun.IDB, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func seqs(jobs []queue.Job) []int64 {
	s := make([]int64, len(jobs))
	for i, j := range jobs {
		s[i] = j.Seq
	}
	return s
}

func TestEnqueueAndClaimInFIFOOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, q := setup(t)

	first := enqueue(t, q, db, indexJobs(4)...)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	second := enqueue(t, q, tx, indexJobs(3)...)
	if got := claim(t, q, "w", 10); len(got) != 4 {
		t.Fatalf("claimed %d jobs while the second batch was uncommitted, want the 4 committed ones", len(got))
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rolledBack, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, q, rolledBack, indexJobs(2)...)
	if err := rolledBack.Rollback(); err != nil {
		t.Fatal(err)
	}

	for i, j := range append(first, second...) {
		if j.Status != queue.StatusQueued || j.MaxRetries != queue.DefaultMaxRetries || j.RetryCount != 0 ||
			j.ID == uuid.Nil || j.CreatedAt.IsZero() || j.RunAfter.IsZero() || j.Type != queue.TypeIndex || !j.FileID.Valid {
			t.Fatalf("enqueued job %d = %+v", i, j)
		}
		if i > 0 && j.Seq <= first[0].Seq+int64(i-1) {
			t.Fatalf("seq does not follow the enqueue order: %v", seqs(append(first, second...)))
		}
	}
	var got []queue.Job
	for {
		jobs := claim(t, q, "w2", 1)
		if len(jobs) == 0 {
			break
		}
		got = append(got, jobs...)
	}
	if want := seqs(second); !slices.Equal(seqs(got), want) {
		t.Fatalf("claim order %v, want %v", seqs(got), want)
	}
	c := got[0]
	if c.Status != queue.StatusRunning || c.WorkerID == nil || *c.WorkerID != "w2" || c.HeartbeatAt == nil || c.StartedAt == nil {
		t.Fatalf("claimed job = %+v", c)
	}

	if _, err := q.Enqueue(ctx, db, queue.NewJob{Type: "bogus"}); err == nil {
		t.Fatal("Enqueue of an unknown type succeeded")
	}
	none := enqueue(t, q, db, queue.NewJob{Type: queue.TypeRebuildFTS, MaxRetries: -1})
	if none[0].MaxRetries != 0 || none[0].FileID.Valid {
		t.Fatalf("MaxRetries -1 / no file: got %+v", none[0])
	}
}

func TestClaimBatchIsOldestFirst(t *testing.T) {
	t.Parallel()
	db, q := setup(t)
	jobs := enqueue(t, q, db, indexJobs(5)...)
	got := claim(t, q, "w", 3)
	if want := seqs(jobs[:3]); !slices.Equal(seqs(got), want) {
		t.Fatalf("batch claim %v, want %v", seqs(got), want)
	}
	if got := claim(t, q, "w", 0); len(got) != 0 {
		t.Fatalf("Claim(0) = %d jobs", len(got))
	}
}

// Several goroutines enqueue and several claim at the same time; every job is claimed once and
// no job is claimed after a younger one while it was eligible.
func TestConcurrentEnqueueAndClaimKeepFIFO(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, q := setup(t)
	var (
		clk      clock
		mu       sync.Mutex
		enqAt    = map[uuid.UUID]int64{}
		recs     []claimRec
		recIDs   []uuid.UUID
		claimed  = map[uuid.UUID]int{}
		wg       sync.WaitGroup
		done     = make(chan struct{})
		total    = 0
		failures = make(chan error, 16)
	)
	// A backlog, so claimers always have a choice to make while producers add to the tail.
	for _, j := range enqueue(t, q, db, indexJobs(150)...) {
		enqAt[j.ID] = 0
		total++
	}
	const producers, batches = 3, 40
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					failures <- err
					return
				}
				jobs, err := q.Enqueue(ctx, tx, indexJobs(1+(p+b)%3)...)
				if err != nil {
					failures <- err
					return
				}
				if err := tx.Commit(); err != nil {
					failures <- err
					return
				}
				at := clk.tick()
				mu.Lock()
				for _, j := range jobs {
					enqAt[j.ID] = at
				}
				total += len(jobs)
				mu.Unlock()
			}
		}()
	}
	var cwg sync.WaitGroup
	for c := range 3 {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			worker := fmt.Sprintf("w%d", c)
			for {
				start := clk.tick()
				jobs, err := q.Claim(ctx, worker, 1+c%2)
				end := clk.tick()
				if err != nil {
					failures <- err
					return
				}
				mu.Lock()
				for _, j := range jobs {
					claimed[j.ID]++
					recs = append(recs, claimRec{seq: j.Seq, start: start, end: end})
					recIDs = append(recIDs, j.ID)
				}
				mu.Unlock()
				for _, j := range jobs {
					if err := q.Complete(ctx, worker, j.ID); err != nil {
						failures <- err
						return
					}
				}
				if len(jobs) == 0 {
					select {
					case <-done:
						return
					default:
					}
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	cwg.Wait()
	close(failures)
	for err := range failures {
		t.Fatal(err)
	}
	// A claim can return before its producer recorded the commit tick; resolve them now.
	for i, id := range recIDs {
		recs[i].enq = enqAt[id]
	}
	if len(claimed) != total || len(recs) != total {
		t.Fatalf("claimed %d distinct jobs in %d claims, enqueued %d", len(claimed), len(recs), total)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Fatalf("job %s claimed %d times", id, n)
		}
	}
	if n := fifoViolations(recs); n != 0 {
		t.Fatalf("%d FIFO violations among %d claims", n, len(recs))
	}
}

func TestTransitionsAreGuardedByTheLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, q := setup(t)
	job := enqueue(t, q, db, indexJobs(1)...)[0]
	if err := q.Complete(ctx, "w1", job.ID); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("Complete of a queued job: %v, want ErrLeaseLost", err)
	}
	claim(t, q, "w1", 1)
	if err := q.Complete(ctx, "w2", job.ID); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("Complete by a non-owner: %v, want ErrLeaseLost", err)
	}
	if err := q.Fail(ctx, "w2", job.ID, errors.New("x"), false); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("Fail by a non-owner: %v, want ErrLeaseLost", err)
	}
	if err := q.Release(ctx, "w2", job.ID); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("Release by a non-owner: %v, want ErrLeaseLost", err)
	}
	if lost, err := q.Heartbeat(ctx, "w2", []uuid.UUID{job.ID}); err != nil || !slices.Equal(lost, []uuid.UUID{job.ID}) {
		t.Fatalf("Heartbeat by a non-owner: lost %v, %v", lost, err)
	}
	if j := get(t, db, job.ID); j.Status != queue.StatusRunning || *j.WorkerID != "w1" {
		t.Fatalf("non-owner changed the job: %+v", j)
	}
	before := get(t, db, job.ID).HeartbeatAt
	if lost, err := q.Heartbeat(ctx, "w1", []uuid.UUID{job.ID}); err != nil || len(lost) != 0 {
		t.Fatalf("Heartbeat by the owner: lost %v, %v", lost, err)
	}
	if after := get(t, db, job.ID).HeartbeatAt; !after.After(*before) {
		t.Fatalf("heartbeat not renewed: %v -> %v", before, after)
	}
	if err := q.Complete(ctx, "w1", job.ID); err != nil {
		t.Fatalf("Complete by the owner: %v", err)
	}
	j := get(t, db, job.ID)
	if j.Status != queue.StatusCompleted || j.CompletedAt == nil || j.Error != nil {
		t.Fatalf("completed job = %+v", j)
	}
	if err := q.Complete(ctx, "w1", job.ID); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("second Complete: %v, want ErrLeaseLost", err)
	}
	if err := q.Fail(ctx, "w1", job.ID, errors.New("late"), false); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("Fail after Complete: %v, want ErrLeaseLost", err)
	}
}

func TestAutomaticRetryWithBackoffThenFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	var retries []int
	db, q := setup(t, queue.WithBackoff(func(retry int) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		retries = append(retries, retry)
		return time.Duration(retry) * time.Hour
	}))
	job := enqueue(t, q, db, queue.NewJob{Type: queue.TypeIndex, MaxRetries: 2})[0]

	for attempt := 1; attempt <= 3; attempt++ {
		got := claim(t, q, "w", 1)
		if len(got) != 1 || got[0].ID != job.ID {
			t.Fatalf("attempt %d: claimed %v", attempt, got)
		}
		if err := q.Fail(ctx, "w", job.ID, fmt.Errorf("embedder down (attempt %d)", attempt), false); err != nil {
			t.Fatalf("Fail: %v", err)
		}
		j := get(t, db, job.ID)
		if attempt == 3 {
			if j.Status != queue.StatusFailed || j.RetryCount != 2 || j.Error == nil ||
				*j.Error != "embedder down (attempt 3)" || j.CompletedAt == nil {
				t.Fatalf("after the last attempt: %+v", j)
			}
			break
		}
		if j.Status != queue.StatusQueued || j.RetryCount != attempt || j.Seq != job.Seq || j.WorkerID != nil ||
			j.Error == nil || !strings.Contains(*j.Error, fmt.Sprintf("attempt %d", attempt)) {
			t.Fatalf("after attempt %d: %+v", attempt, j)
		}
		// The backoff is measured by the database clock.
		var wait float64
		if err := db.NewRaw("SELECT extract(epoch FROM run_after - now()) FROM docindex.jobs WHERE id = ?", job.ID).
			Scan(ctx, &wait); err != nil {
			t.Fatal(err)
		}
		if want := float64(attempt) * 3600; wait < want-60 || wait > want+1 {
			t.Fatalf("run_after is %.0fs away, want about %.0fs", wait, want)
		}
		// Not eligible during the backoff, even to a younger job's claimer.
		enqueue(t, q, db, indexJobs(1)...)
		got = claim(t, q, "w", 5)
		if len(got) == 0 {
			t.Fatal("the younger jobs were not claimable")
		}
		for _, g := range got {
			if g.ID == job.ID {
				t.Fatalf("claimed during its backoff: %+v", g)
			}
			if err := q.Complete(ctx, "w", g.ID); err != nil {
				t.Fatal(err)
			}
		}
		// Due again, it keeps its place ahead of jobs enqueued after it.
		enqueue(t, q, db, indexJobs(1)...)
		exec(t, db, "UPDATE docindex.jobs SET run_after = now() WHERE id = ?", job.ID)
		if next := claim(t, q, "w", 1); len(next) != 1 || next[0].ID != job.ID {
			t.Fatalf("the due retried job was not first: %v", next)
		}
		if err := q.Release(ctx, "w", job.ID); err != nil {
			t.Fatal(err)
		}
		if j := get(t, db, job.ID); j.RetryCount != attempt || j.Status != queue.StatusQueued {
			t.Fatalf("Release counted a retry: %+v", j)
		}
	}
	if !slices.Equal(retries, []int{1, 2}) {
		t.Fatalf("backoff called for retries %v, want [1 2]", retries)
	}
}

func TestPermanentErrorFailsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, q := setup(t)
	job := enqueue(t, q, db, indexJobs(1)...)[0]
	claim(t, q, "w", 1)
	if err := q.Fail(ctx, "w", job.ID, errors.New("unsupported format: image/x-foo"), true); err != nil {
		t.Fatal(err)
	}
	j := get(t, db, job.ID)
	if j.Status != queue.StatusFailed || j.RetryCount != 0 || j.Error == nil || *j.Error != "unsupported format: image/x-foo" {
		t.Fatalf("after a permanent error: %+v", j)
	}
	// A huge error text is kept bounded.
	job = enqueue(t, q, db, indexJobs(1)...)[0]
	claim(t, q, "w", 1)
	if err := q.Fail(ctx, "w", job.ID, errors.New(strings.Repeat("x", 1<<20)), true); err != nil {
		t.Fatal(err)
	}
	if j := get(t, db, job.ID); len(*j.Error) > 9000 {
		t.Fatalf("error text of %d bytes kept", len(*j.Error))
	}
}

func TestManualRetryGoesToTheTail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, q := setup(t)
	jobs := enqueue(t, q, db, indexJobs(4)...) // a b c d
	a, b, c, d := jobs[0], jobs[1], jobs[2], jobs[3]
	for _, j := range []queue.Job{a, b} {
		if got := claim(t, q, "w", 1); got[0].ID != j.ID {
			t.Fatalf("claimed %v, want %v", got[0].Seq, j.Seq)
		}
		if err := q.Fail(ctx, "w", j.ID, errors.New("boom"), true); err != nil {
			t.Fatal(err)
		}
	}
	e := enqueue(t, q, db, indexJobs(1)...)[0]

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// c is queued, not failed: left alone. b before a in the list; their old order is kept.
	n, err := q.Retry(ctx, tx, []uuid.UUID{b.ID, c.ID, a.ID, uuid.New()})
	if err != nil || n != 2 {
		t.Fatalf("Retry = %d, %v; want 2", n, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ra := get(t, db, a.ID)
	if ra.Status != queue.StatusQueued || ra.RetryCount != 0 || ra.Error != nil || ra.CompletedAt != nil || ra.Seq <= e.Seq {
		t.Fatalf("retried job = %+v (last seq before retry %d)", ra, e.Seq)
	}
	var order []uuid.UUID
	for {
		got := claim(t, q, "w", 1)
		if len(got) == 0 {
			break
		}
		order = append(order, got[0].ID)
	}
	if want := []uuid.UUID{c.ID, d.ID, e.ID, a.ID, b.ID}; !slices.Equal(order, want) {
		t.Fatalf("order after retry %v, want c d e a b = %v", order, want)
	}
}

func TestPositionsUnderConcurrentEnqueues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, q := setup(t)
	var (
		mu    sync.Mutex
		known []queue.Job
		wg    sync.WaitGroup
		errs  = make(chan error, 8)
		stop  = make(chan struct{})
	)
	for p := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					errs <- err
					return
				}
				jobs, err := q.Enqueue(ctx, tx, indexJobs(1+p)...)
				if err == nil {
					err = tx.Commit()
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				known = append(known, jobs...)
				mu.Unlock()
			}
		}()
	}
	var bg sync.WaitGroup
	// A claimer removes jobs from the head while positions are read.
	bg.Add(1)
	go func() {
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := q.Claim(ctx, "w", 1); err != nil {
				errs <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	checks := 0
	bg.Add(1)
	go func() {
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			mu.Lock()
			ids := make([]uuid.UUID, len(known))
			bySeq := map[uuid.UUID]int64{}
			for i, j := range known {
				ids[i] = j.ID
				bySeq[j.ID] = j.Seq
			}
			mu.Unlock()
			pos, err := q.Positions(ctx, ids)
			if err != nil {
				errs <- err
				return
			}
			// One snapshot: distinct positions, increasing with seq, each at least the rank
			// among the returned jobs (jobs not yet known here can only be ahead).
			got := make([]uuid.UUID, 0, len(pos))
			for id := range pos {
				got = append(got, id)
			}
			slices.SortFunc(got, func(a, b uuid.UUID) int { return int(bySeq[a] - bySeq[b]) })
			for i, id := range got {
				if pos[id] < i+1 || (i > 0 && pos[id] <= pos[got[i-1]]) {
					errs <- fmt.Errorf("inconsistent positions: job seq %d at %d, previous seq %d at %d, rank %d",
						bySeq[id], pos[id], bySeq[got[max(i-1, 0)]], pos[got[max(i-1, 0)]], i+1)
					return
				}
			}
			checks++
		}
	}()
	wg.Wait()
	close(stop)
	bg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if checks == 0 {
		t.Fatal("no position check ran")
	}
	// At rest: exactly 1..n in seq order over the jobs still queued.
	ids := make([]uuid.UUID, len(known))
	for i, j := range known {
		ids[i] = j.ID
	}
	pos, err := q.Positions(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	var queued []queue.Job
	if err := db.NewSelect().Model(&queued).Where("status = 'queued'").Order("seq").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if len(pos) != len(queued) || len(queued) == 0 {
		t.Fatalf("%d positions for %d queued jobs", len(pos), len(queued))
	}
	for i, j := range queued {
		if pos[j.ID] != i+1 {
			t.Fatalf("job seq %d at position %d, want %d", j.Seq, pos[j.ID], i+1)
		}
	}
	// Running jobs have no position.
	running := claim(t, q, "w", 1)[0]
	if p, err := q.Positions(ctx, []uuid.UUID{running.ID, queued[1].ID}); err != nil || len(p) != 1 || p[queued[1].ID] != 1 {
		t.Fatalf("Positions(running, next) = %v, %v", p, err)
	}
}

func TestCancelFileJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, q := setup(t)
	file := uuid.NullUUID{UUID: uuid.New(), Valid: true}
	other := uuid.NullUUID{UUID: uuid.New(), Valid: true}
	done := enqueue(t, q, db, queue.NewJob{Type: queue.TypeIndex, FileID: file})[0]
	claim(t, q, "w", 1)
	if err := q.Complete(ctx, "w", done.ID); err != nil {
		t.Fatal(err)
	}
	running := enqueue(t, q, db, queue.NewJob{Type: queue.TypeReindex, FileID: file})[0]
	claim(t, q, "w", 1)
	queued := enqueue(t, q, db, queue.NewJob{Type: queue.TypeReindex, FileID: file})[0]
	keep := enqueue(t, q, db, queue.NewJob{Type: queue.TypeIndex, FileID: other})[0]

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.CancelFileJobs(ctx, tx, file.UUID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[uuid.UUID]string{done.ID: queue.StatusCompleted, running.ID: queue.StatusCancelled,
		queued.ID: queue.StatusCancelled, keep.ID: queue.StatusQueued} {
		if j := get(t, db, id); j.Status != want {
			t.Fatalf("job seq %d: %s, want %s", j.Seq, j.Status, want)
		}
	}
	if lost, err := q.Heartbeat(ctx, "w", []uuid.UUID{running.ID}); err != nil || len(lost) != 1 {
		t.Fatalf("Heartbeat of a cancelled job: lost %v, %v", lost, err)
	}
	if err := q.Complete(ctx, "w", running.ID); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("Complete of a cancelled job: %v", err)
	}
	if got := claim(t, q, "w", 5); len(got) != 1 || got[0].ID != keep.ID {
		t.Fatalf("claimable after cancel: %v, want only the other file's job", got)
	}
}

func TestRescueExpiredLeases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, q := setup(t, queue.WithLease(time.Minute), queue.WithBackoff(func(int) time.Duration { return 0 }))
	jobs := enqueue(t, q, db,
		queue.NewJob{Type: queue.TypeIndex},
		queue.NewJob{Type: queue.TypeIndex, MaxRetries: -1},
		queue.NewJob{Type: queue.TypeIndex})
	stale, exhausted, fresh := jobs[0], jobs[1], jobs[2]
	claim(t, q, "dead", 2)
	claim(t, q, "alive", 1)
	// Age the leases by the database clock instead of sleeping through them.
	exec(t, db, "UPDATE docindex.jobs SET heartbeat_at = now() - interval '61 seconds' WHERE worker_id = 'dead'")
	exec(t, db, "UPDATE docindex.jobs SET heartbeat_at = now() - interval '59 seconds' WHERE worker_id = 'alive'")

	n, err := q.Rescue(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Rescue = %d, %v; want 2", n, err)
	}
	if j := get(t, db, stale.ID); j.Status != queue.StatusQueued || j.RetryCount != 1 || j.WorkerID != nil ||
		j.Error == nil || !strings.Contains(*j.Error, "dead") || j.Seq != stale.Seq {
		t.Fatalf("rescued job = %+v", j)
	}
	if j := get(t, db, exhausted.ID); j.Status != queue.StatusFailed || j.Error == nil || j.CompletedAt == nil {
		t.Fatalf("rescued job without retries = %+v", j)
	}
	if j := get(t, db, fresh.ID); j.Status != queue.StatusRunning {
		t.Fatalf("job within its lease = %+v", j)
	}
	if err := q.Complete(ctx, "dead", stale.ID); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("the dead worker completed a rescued job: %v", err)
	}
	if lost, err := q.Heartbeat(ctx, "dead", []uuid.UUID{stale.ID}); err != nil || len(lost) != 1 {
		t.Fatalf("Heartbeat of a rescued job: lost %v, %v", lost, err)
	}
	if n, err := q.Rescue(ctx); err != nil || n != 0 {
		t.Fatalf("second Rescue = %d, %v", n, err)
	}
	if got := claim(t, q, "alive", 1); len(got) != 1 || got[0].ID != stale.ID || got[0].RetryCount != 1 {
		t.Fatalf("rescued job not claimable again: %v", got)
	}
}

func TestLeaderElection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, q := setup(t)
	lead := func(name, holder string) bool {
		t.Helper()
		ok, err := q.Lead(ctx, name, holder, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !lead("rescuer", "a") || lead("rescuer", "b") || !lead("rescuer", "a") {
		t.Fatal("a should take and keep the role, b be refused")
	}
	if !lead("scheduler", "b") {
		t.Fatal("roles are independent")
	}
	exec(t, db, "UPDATE docindex.leaders SET expires_at = now() - interval '1 second' WHERE name = 'rescuer'")
	if !lead("rescuer", "b") || lead("rescuer", "a") {
		t.Fatal("after expiry b should take the role from a")
	}
	if err := q.Resign(ctx, "rescuer", "a"); err != nil { // not the holder: no effect
		t.Fatal(err)
	}
	if lead("rescuer", "a") {
		t.Fatal("resign by a non-holder released the role")
	}
	if err := q.Resign(ctx, "rescuer", "b"); err != nil {
		t.Fatal(err)
	}
	if !lead("rescuer", "a") {
		t.Fatal("the role was not free after its holder resigned")
	}

	// Exclusive under contention: repeatedly, many holders race for a fresh role.
	for round := range 5 {
		name := fmt.Sprintf("race-%d", round)
		var wg sync.WaitGroup
		var mu sync.Mutex
		winners := 0
		for h := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := q.Lead(ctx, name, fmt.Sprintf("h%d", h), time.Minute)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					winners++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if winners != 1 {
			t.Fatalf("round %d: %d leaders", round, winners)
		}
	}
}

func TestDeleteRefusesRunningJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, q := setup(t)
	jobs := enqueue(t, q, db, indexJobs(2)...)
	claim(t, q, "w", 1)
	if err := q.Delete(ctx, db, jobs[0].ID); !errors.Is(err, queue.ErrRunning) {
		t.Fatalf("Delete(running) = %v", err)
	}
	if err := q.Delete(ctx, db, jobs[1].ID); err != nil {
		t.Fatalf("Delete(queued) = %v", err)
	}
	if err := q.Delete(ctx, db, jobs[1].ID); !errors.Is(err, queue.ErrNotFound) {
		t.Fatalf("Delete(missing) = %v", err)
	}
}

func TestListenWakesOnCommitAndReconnects(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	db, q := setup(t)
	wake := make(chan struct{}, 1)
	listening := make(chan error, 1)
	go func() {
		listening <- q.Listen(ctx, func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
	}()
	defer func() {
		cancel()
		if err := <-listening; !errors.Is(err, context.Canceled) {
			t.Errorf("Listen returned %v", err)
		}
	}()
	waitWake := func(what string) {
		t.Helper()
		select {
		case <-wake:
		case <-time.After(20 * time.Second):
			t.Fatalf("no wake-up %s", what)
		}
	}
	waitWake("when the listener connected")

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, q, tx, indexJobs(1)...)
	select {
	case <-wake:
		t.Fatal("woken before the enqueue committed")
	case <-time.After(200 * time.Millisecond):
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	waitWake("after an enqueue committed")

	// Kill the listening backend: the listener reconnects and wakes once it listens again.
	var pids []int
	if err := db.NewRaw(`SELECT pg_terminate_backend(pid)::int FROM pg_stat_activity
		WHERE datname = current_database() AND query = ?`, "LISTEN "+queue.Channel).Scan(ctx, &pids); err != nil || len(pids) != 1 {
		t.Fatalf("terminate the listener: %v, %v", pids, err)
	}
	waitWake("after the listening connection was killed")
	enqueue(t, q, db, indexJobs(1)...)
	waitWake("after an enqueue on the new connection")
}

func TestDefaultBackoff(t *testing.T) {
	t.Parallel()
	for retry, base := range map[int]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 4: 80 * time.Second, 30: time.Hour} {
		seen := map[time.Duration]bool{}
		for range 50 {
			d := queue.DefaultBackoff(retry)
			if d < base*8/10 || d > base*12/10 {
				t.Fatalf("DefaultBackoff(%d) = %v, want %v ±20%%", retry, d, base)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Fatalf("DefaultBackoff(%d) has no jitter: %d distinct values", retry, len(seen))
		}
	}
}
