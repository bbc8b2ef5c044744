package queue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

const (
	benchJobs = 20000
	// Each system runs its jobs in rounds, the systems taking turns, so that the load of
	// anything else on the machine falls on all of them alike.
	benchRounds = 10
)

// BenchmarkQueue runs 20,000 no-op jobs through Claim and Complete with concurrent workers, and
// the same number through a bare loop on a twin table of the same shape (one transaction per
// job: SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1, then UPDATE), in alternating rounds of 2,000.
// Metrics:
//
//	queue_jobs/s, bare_jobs/s   throughput of each
//	ratio                       queue_jobs/s over bare_jobs/s (the target is at least 0.7)
//	fifo_violations             jobs the queue claimed after a younger job while they were
//	                            eligible first (see fifoViolations); must be 0
//	bare_fifo_violations        the same count for the bare loop
//	pool_jobs/s, pool_ratio     20,000 jobs in another database run by a worker.Pool of as many
//	                            workers (it claims for its free slots, heartbeats, listens), as
//	                            production runs them, in rounds between the others
func BenchmarkQueue(b *testing.B) {
	for _, workers := range []int{2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) { benchQueue(b, workers) })
	}
}

func benchQueue(b *testing.B, workers int) {
	ctx := context.Background()
	db := docindextest.NewDB(b)
	q := queue.New(db, queue.WithLogger(slog.New(slog.DiscardHandler)))
	if _, err := db.ExecContext(ctx, "CREATE TABLE jobs_twin (LIKE docindex.jobs INCLUDING ALL)"); err != nil {
		b.Fatal(err)
	}
	// The pool works on a database of its own, so the Claim loop's table sees exactly the
	// work the twin table sees.
	pdb := docindextest.NewDB(b)
	pq := queue.New(pdb, queue.WithLogger(slog.New(slog.DiscardHandler)))
	var queueTime, bareTime, poolTime time.Duration
	var poolJobs int64
	violations, bareViolations := 0, 0
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		fill(b, db, q, true)
		fill(b, pdb, pq, false)
		b.StartTimer()
		var qclk, bclk clock
		var qrecs, brecs []claimRec
		const round = benchJobs / benchRounds
		for r := range benchRounds {
			steps := []func(){
				func() {
					d, recs := drainQueue(b, q, workers, &qclk, round)
					queueTime += d
					qrecs = append(qrecs, recs...)
				},
				func() {
					d, recs := drainBare(b, db, workers, &bclk, round)
					bareTime += d
					brecs = append(brecs, recs...)
				},
				func() {
					d, n := drainPool(b, pq, workers, round)
					poolTime += d
					poolJobs += n
				},
			}
			for k := range steps {
				steps[(k+r)%len(steps)]()
			}
		}
		violations += fifoViolations(qrecs)
		bareViolations += fifoViolations(brecs)
	}
	total := float64(benchJobs * b.N)
	qps, bps := total/queueTime.Seconds(), total/bareTime.Seconds()
	pps := float64(poolJobs) / poolTime.Seconds()
	b.ReportMetric(qps, "queue_jobs/s")
	b.ReportMetric(bps, "bare_jobs/s")
	b.ReportMetric(qps/bps, "ratio")
	b.ReportMetric(float64(violations), "fifo_violations")
	b.ReportMetric(float64(bareViolations), "bare_fifo_violations")
	b.ReportMetric(pps, "pool_jobs/s")
	b.ReportMetric(pps/bps, "pool_ratio")
	if violations != 0 {
		b.Errorf("%d FIFO violations in the queue", violations)
	}
}

// fill empties the database's queue and queues benchJobs jobs; with twin, it does the same for
// the twin table. Statistics are refreshed so both start alike.
func fill(b *testing.B, db *bun.DB, q *queue.Queue, twin bool) {
	ctx := context.Background()
	stmts := []string{"TRUNCATE docindex.jobs"}
	if twin {
		stmts = append(stmts, "TRUNCATE jobs_twin")
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	n := benchJobs
	if !twin {
		// The pool may run a few jobs past its budget per round (it fills its free slots as
		// it stops): a margin of 10 per round.
		n += 10 * benchRounds
	}
	for left := n; left > 0; left -= 1000 {
		jobs := make([]queue.NewJob, min(left, 1000))
		for i := range jobs {
			jobs[i] = queue.NewJob{Type: queue.TypeIndex, FileID: uuid.NullUUID{UUID: uuid.New(), Valid: true}}
		}
		if _, err := q.Enqueue(ctx, db, jobs...); err != nil {
			b.Fatal(err)
		}
	}
	stmts = []string{"VACUUM ANALYZE docindex.jobs"}
	if twin {
		stmts = append(stmts,
			fmt.Sprintf(`INSERT INTO jobs_twin (type, file_id) SELECT 'index', gen_random_uuid() FROM generate_series(1, %d)`, benchJobs),
			"VACUUM ANALYZE jobs_twin")
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
}

// drain runs workers goroutines of work until they used up budget jobs between them, and
// returns the elapsed time and every claim record.
func drain(b *testing.B, workers int, budget int64,
	work func(worker string, take func() bool) ([]claimRec, error)) (time.Duration, []claimRec) {
	var (
		left atomic.Int64
		mu   sync.Mutex
		all  []claimRec
		wg   sync.WaitGroup
		errs = make(chan error, workers)
	)
	left.Store(budget)
	take := func() bool { return left.Add(-1) >= 0 }
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			recs, err := work(fmt.Sprintf("bench-%d", w), take)
			if err != nil {
				errs <- err
			}
			mu.Lock()
			all = append(all, recs...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	if int64(len(all)) != budget {
		b.Fatalf("ran %d jobs, want %d", len(all), budget)
	}
	return elapsed, all
}

func drainQueue(b *testing.B, q *queue.Queue, workers int, clk *clock, budget int64) (time.Duration, []claimRec) {
	ctx := context.Background()
	return drain(b, workers, budget, func(worker string, take func() bool) ([]claimRec, error) {
		var recs []claimRec
		for take() {
			start := clk.tick()
			jobs, err := q.Claim(ctx, worker, 1)
			end := clk.tick()
			if err != nil {
				return recs, err
			}
			if len(jobs) == 0 {
				return recs, errors.New("queue empty before the budget was used")
			}
			for _, j := range jobs {
				recs = append(recs, claimRec{seq: j.Seq, start: start, end: end})
				if err := q.Complete(ctx, worker, j.ID); err != nil {
					return recs, err
				}
			}
		}
		return recs, nil
	})
}

func drainBare(b *testing.B, db *bun.DB, workers int, clk *clock, budget int64) (time.Duration, []claimRec) {
	ctx := context.Background()
	return drain(b, workers, budget, func(worker string, take func() bool) ([]claimRec, error) {
		var recs []claimRec
		for take() {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return recs, err
			}
			start := clk.tick()
			var id uuid.UUID
			var seq int64
			err = tx.QueryRowContext(ctx, `SELECT id, seq FROM jobs_twin
				WHERE status = 'queued' AND run_after <= now()
				ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED`).Scan(&id, &seq)
			if err != nil {
				_ = tx.Rollback()
				return recs, err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE jobs_twin
				SET status = 'completed', worker_id = ?, started_at = now(), completed_at = now()
				WHERE id = ?`, worker, id); err != nil {
				_ = tx.Rollback()
				return recs, err
			}
			if err := tx.Commit(); err != nil {
				return recs, err
			}
			recs = append(recs, claimRec{seq: seq, start: start, end: clk.tick()})
		}
		return recs, nil
	})
}

// drainPool runs a worker.Pool until its handler saw budget jobs and the pool stopped (Run
// returns once its running jobs are recorded), and returns the elapsed time and how many jobs
// it completed (a few more than budget when free slots were filled as it stopped).
func drainPool(b *testing.B, q *queue.Queue, workers int, budget int64) (time.Duration, int64) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var handled atomic.Int64
	h := worker.HandlerFunc(func(context.Context, queue.Job) error {
		if handled.Add(1) == budget {
			cancel()
		}
		return nil
	})
	p := worker.New(q, h, worker.WithWorkers(workers), worker.WithRescuer(false),
		worker.WithLogger(slog.New(slog.DiscardHandler)))
	start := time.Now()
	if err := p.Run(ctx); err != nil {
		b.Fatal(err)
	}
	return time.Since(start), handled.Load()
}
