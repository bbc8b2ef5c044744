package queue

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

var validTypes = []string{TypeIndex, TypeReindex, TypeDelete, TypeRebuildFTS}

// Enqueue inserts jobs in the caller's transaction (or directly when tx is the database), in the
// order given, and returns them as stored. Idle workers are notified when the transaction
// commits; nothing is notified when it rolls back.
func (q *Queue) Enqueue(ctx context.Context, tx bun.IDB, jobs ...NewJob) ([]Job, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	rows := make([]Job, len(jobs))
	for i, nj := range jobs {
		if !slices.Contains(validTypes, nj.Type) {
			return nil, fmt.Errorf("queue: enqueue: unknown job type %q", nj.Type)
		}
		maxRetries := nj.MaxRetries
		switch {
		case maxRetries == 0:
			maxRetries = DefaultMaxRetries
		case maxRetries < 0:
			maxRetries = 0
		}
		rows[i] = Job{Type: nj.Type, FileID: nj.FileID, CollectionID: nj.CollectionID, MaxRetries: maxRetries}
	}
	// The VALUES list is inserted in order, so seq follows the order of jobs.
	if _, err := tx.NewInsert().Model(&rows).
		Column("file_id", "collection_id", "type", "max_retries").
		Returning("*").Exec(ctx); err != nil {
		return nil, wrap("enqueue", err)
	}
	// Inside a transaction the notification is delivered at commit; outside one it follows the
	// committed insert.
	if err := notify(ctx, tx); err != nil {
		return nil, wrap("enqueue", err)
	}
	return rows, nil
}

func notify(ctx context.Context, db bun.IDB) error {
	_, err := db.ExecContext(ctx, "SELECT pg_notify(?, '')", Channel)
	return err
}

// claimSQL locks the oldest eligible queued jobs, skipping rows other claimers hold, and takes
// them in the same statement, so a claim is one round trip and one short transaction.
//
// The hot statements of the queue (claim, heartbeat, complete, fail) go to the driver with real
// parameters instead of bun's inlined values: the text stays constant, so pgx prepares each once
// per connection and PostgreSQL skips parsing and planning on every later call.
//
// The limit stays a literal (one statement per batch size): with LIMIT $2, PostgreSQL's generic
// plan for a prepared statement assumes a tenth of the table and joins back with a sequential
// scan, which made a claim of one job cost a scan of the whole table.
const claimSQL = `UPDATE docindex.jobs AS j
SET status = 'running', worker_id = $1, heartbeat_at = now(), started_at = now()
FROM (
	SELECT id FROM docindex.jobs
	WHERE status = 'queued' AND run_after <= now()
	ORDER BY seq
	LIMIT %d
	FOR UPDATE SKIP LOCKED
) AS c
WHERE j.id = c.id
RETURNING j.*`

// Claim takes up to n of the oldest eligible queued jobs (FIFO by seq) for workerID and returns
// them in seq order, running, with a fresh lease.
func (q *Queue) Claim(ctx context.Context, workerID string, n int) ([]Job, error) {
	if n <= 0 {
		return nil, nil
	}
	rows, err := q.db.DB.QueryContext(ctx, fmt.Sprintf(claimSQL, n), workerID)
	if err != nil {
		return nil, wrap("claim", err)
	}
	var jobs []Job
	if err := q.db.ScanRows(ctx, rows, &jobs); err != nil {
		return nil, wrap("claim", err)
	}
	// RETURNING gives no order.
	slices.SortFunc(jobs, func(a, b Job) int { return cmp.Compare(a.Seq, b.Seq) })
	return jobs, nil
}

// Heartbeat renews the lease of the given running jobs of workerID. It returns the ids that are
// no longer running under workerID (rescued, cancelled, deleted): the worker must stop them and
// discard their results.
func (q *Queue) Heartbeat(ctx context.Context, workerID string, ids []uuid.UUID) (lost []uuid.UUID, err error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := q.db.DB.QueryContext(ctx, `UPDATE docindex.jobs SET heartbeat_at = now()
		WHERE id = ANY($1::uuid[]) AND `+owned("$2")+`
		RETURNING id`, idStrings(ids), workerID)
	if err != nil {
		return nil, wrap("heartbeat", err)
	}
	var alive []uuid.UUID
	if err := q.db.ScanRows(ctx, rows, &alive); err != nil {
		return nil, wrap("heartbeat", err)
	}
	for _, id := range ids {
		if !slices.Contains(alive, id) {
			lost = append(lost, id)
		}
	}
	return lost, nil
}

// Complete marks a running job of workerID completed. It returns ErrLeaseLost when the job is no
// longer running under workerID.
func (q *Queue) Complete(ctx context.Context, workerID string, id uuid.UUID) error {
	res, err := q.db.DB.ExecContext(ctx, `UPDATE docindex.jobs
		SET status = 'completed', completed_at = now(), error = NULL
		WHERE id = $1 AND `+owned("$2"), id, workerID)
	return guarded("complete", res, err)
}

// owned is the guard of every move of a running job: it is still running and still leased to
// the worker. It is a CASE so the planner cannot use it to choose an index and finds the row by
// its id: as plain conditions, statistics taken while few jobs ran made status = 'running' look
// more selective than the primary key, and each update walked the status index over every job
// that had run since the last vacuum.
func owned(worker string) string {
	return "CASE WHEN status = 'running' THEN worker_id = " + worker + " ELSE false END"
}

func guarded(op string, res sql.Result, err error) error {
	if err != nil {
		return wrap(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return wrap(op, err)
	}
	if n == 0 {
		return fmt.Errorf("queue: %s: %w", op, ErrLeaseLost)
	}
	return nil
}

// Fail records that a running job of workerID failed with cause. A job with retries left whose
// error is not permanent goes back to the queue in its place (same seq), eligible again after
// the backoff and with one more retry counted; otherwise it ends failed with the error text.
// It returns ErrLeaseLost when the job is no longer running under workerID.
func (q *Queue) Fail(ctx context.Context, workerID string, id uuid.UUID, cause error, permanent bool) error {
	var cur struct{ RetryCount, MaxRetries int }
	err := q.db.DB.QueryRowContext(ctx, `SELECT retry_count, max_retries FROM docindex.jobs
		WHERE id = $1 AND `+owned("$2"), id, workerID).Scan(&cur.RetryCount, &cur.MaxRetries)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("queue: fail: %w", ErrLeaseLost)
	}
	if err != nil {
		return wrap("fail", err)
	}
	text := errorText(cause)
	var res sql.Result
	if !permanent && cur.RetryCount < cur.MaxRetries {
		delay := q.backoff(cur.RetryCount + 1)
		// Guarded by retry_count too: the backoff was computed for this attempt.
		res, err = q.db.DB.ExecContext(ctx, `UPDATE docindex.jobs
			SET status = 'queued', retry_count = retry_count + 1, error = $1,
				run_after = now() + $2 * interval '1 microsecond',
				worker_id = NULL, heartbeat_at = NULL, started_at = NULL
			WHERE id = $3 AND retry_count = $5 AND `+owned("$4"),
			text, micros(delay), id, workerID, cur.RetryCount)
	} else {
		res, err = q.db.DB.ExecContext(ctx, `UPDATE docindex.jobs
			SET status = 'failed', error = $1, completed_at = now()
			WHERE id = $2 AND `+owned("$3"), text, id, workerID)
	}
	return guarded("fail", res, err)
}

// Release puts a running job of workerID back at its place in the queue without counting a
// retry: the worker is shutting down and stopped the job before it finished.
func (q *Queue) Release(ctx context.Context, workerID string, id uuid.UUID) error {
	res, err := q.db.ExecContext(ctx, `UPDATE docindex.jobs
		SET status = 'queued', run_after = now(), worker_id = NULL, heartbeat_at = NULL, started_at = NULL
		WHERE id = ? AND `+owned("?"), id, workerID)
	if err := guarded("release", res, err); err != nil {
		return err
	}
	return wrap("release", notify(ctx, q.db))
}

// Retry requeues failed jobs among ids at the tail of the queue (new seq values, in their old
// order), with the retry count reset and the error cleared. Jobs in other states are left alone.
// It returns how many jobs were requeued.
func (q *Queue) Retry(ctx context.Context, tx bun.IDB, ids []uuid.UUID) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	// nextval runs in the order of the sorted, locked subquery, so the retried jobs keep their
	// relative order behind every job already queued.
	res, err := tx.ExecContext(ctx, `UPDATE docindex.jobs AS j
		SET seq = r.seq, status = 'queued', retry_count = 0, error = NULL, run_after = now(),
			worker_id = NULL, heartbeat_at = NULL, started_at = NULL, completed_at = NULL
		FROM (
			SELECT f.id, nextval(pg_get_serial_sequence('docindex.jobs', 'seq')) AS seq
			FROM (
				SELECT id FROM docindex.jobs
				WHERE id = ANY(?::uuid[]) AND status = 'failed'
				ORDER BY seq
				FOR UPDATE
			) AS f
		) AS r
		WHERE j.id = r.id`, pgdialect.Array(idStrings(ids)))
	if err != nil {
		return 0, wrap("retry", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, wrap("retry", err)
	}
	if n > 0 {
		if err := notify(ctx, tx); err != nil {
			return 0, wrap("retry", err)
		}
	}
	return int(n), nil
}

// CancelFileJobs cancels the queued and running jobs of a file that is being deleted. A running
// job's worker learns it at its next heartbeat, stops the job and drops its result.
func (q *Queue) CancelFileJobs(ctx context.Context, tx bun.IDB, fileID uuid.UUID) error {
	_, err := tx.ExecContext(ctx, `UPDATE docindex.jobs
		SET status = 'cancelled', completed_at = now()
		WHERE file_id = ? AND status IN ('queued', 'running')`, fileID)
	return wrap("cancel file jobs", err)
}

// Delete removes a job that is not running. It returns ErrRunning for a running job and
// ErrNotFound for a missing one.
func (q *Queue) Delete(ctx context.Context, tx bun.IDB, id uuid.UUID) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM docindex.jobs WHERE id = ? AND status <> 'running'`, id)
	if err != nil {
		return wrap("delete", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return wrap("delete", err)
	} else if n > 0 {
		return nil
	}
	var status string
	err = tx.NewRaw(`SELECT status FROM docindex.jobs WHERE id = ?`, id).Scan(ctx, &status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrNotFound
	case err != nil:
		return wrap("delete", err)
	}
	return ErrRunning
}

// rescueBatch bounds the rows one rescue transaction locks.
const rescueBatch = 500

// Rescue takes back running jobs whose lease expired (no heartbeat for the lease duration: the
// worker died or lost the database): each is requeued in its place after the backoff, counting
// a retry, or failed when its retries are exhausted. It returns how many jobs it rescued.
// Run it on one process at a time (see Lead); running it on several is safe, only wasteful.
func (q *Queue) Rescue(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := q.rescueBatch(ctx)
		total += n
		if err != nil {
			return total, wrap("rescue", err)
		}
		if n < rescueBatch {
			return total, nil
		}
	}
}

func (q *Queue) rescueBatch(ctx context.Context) (int, error) {
	n := 0
	requeued := false
	err := q.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var stale []struct {
			ID         uuid.UUID `bun:"id,type:uuid"`
			RetryCount int       `bun:"retry_count"`
			MaxRetries int       `bun:"max_retries"`
			WorkerID   string    `bun:"worker_id"`
		}
		// SKIP LOCKED: a row locked now is being heartbeated or finished by its worker.
		err := tx.NewRaw(`SELECT id, retry_count, max_retries, coalesce(worker_id, '') AS worker_id
			FROM docindex.jobs
			WHERE status = 'running' AND heartbeat_at < now() - ? * interval '1 microsecond'
			ORDER BY heartbeat_at
			LIMIT ?
			FOR UPDATE SKIP LOCKED`, micros(q.lease), rescueBatch).Scan(ctx, &stale)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if len(stale) == 0 {
			return nil
		}
		ids := make([]string, len(stale))
		delays := make([]int64, len(stale))
		again := make([]bool, len(stale))
		texts := make([]string, len(stale))
		for i, s := range stale {
			ids[i] = s.ID.String()
			again[i] = s.RetryCount < s.MaxRetries
			if again[i] {
				delays[i] = micros(q.backoff(s.RetryCount + 1))
				requeued = true
			}
			texts[i] = fmt.Sprintf("worker %s stopped renewing its lease (no heartbeat for %s)", s.WorkerID, q.lease)
			q.log.Warn("queue: rescuing job of a silent worker",
				"job", s.ID, "worker", s.WorkerID, "requeue", again[i], "retry", s.RetryCount)
		}
		res, err := tx.ExecContext(ctx, `UPDATE docindex.jobs AS j SET
				status = CASE WHEN r.again THEN 'queued' ELSE 'failed' END,
				retry_count = CASE WHEN r.again THEN j.retry_count + 1 ELSE j.retry_count END,
				error = r.text,
				run_after = CASE WHEN r.again THEN now() + r.delay * interval '1 microsecond' ELSE j.run_after END,
				worker_id = CASE WHEN r.again THEN NULL ELSE j.worker_id END,
				heartbeat_at = CASE WHEN r.again THEN NULL ELSE j.heartbeat_at END,
				started_at = CASE WHEN r.again THEN NULL ELSE j.started_at END,
				completed_at = CASE WHEN r.again THEN NULL ELSE now() END
			FROM unnest(?::uuid[], ?::bigint[], ?::boolean[], ?::text[]) AS r(id, delay, again, text)
			WHERE j.id = r.id AND j.status = 'running'`,
			pgdialect.Array(ids), pgdialect.Array(delays), pgdialect.Array(again), pgdialect.Array(texts))
		if err != nil {
			return err
		}
		affected, err := res.RowsAffected()
		if err != nil {
			return err
		}
		n = int(affected)
		if requeued {
			return notify(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Positions returns the 1-based place in the global queue of each queued job among ids (jobs in
// other states are absent). The numbers come from one snapshot, so they are consistent with each
// other whatever is enqueued or claimed meanwhile.
func (q *Queue) Positions(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]int, error) {
	out := make(map[uuid.UUID]int, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID  uuid.UUID `bun:"id,type:uuid"`
		Pos int       `bun:"pos"`
	}
	// Jobs behind the last requested one cannot change the positions, so the window stops there.
	err := q.db.NewRaw(`WITH want AS (
			SELECT id, seq FROM docindex.jobs WHERE id = ANY(?::uuid[]) AND status = 'queued'
		)
		SELECT p.id, p.pos FROM (
			SELECT id, row_number() OVER (ORDER BY seq) AS pos
			FROM docindex.jobs
			WHERE status = 'queued' AND seq <= (SELECT max(seq) FROM want)
		) AS p
		JOIN want USING (id)`, pgdialect.Array(idStrings(ids))).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, wrap("positions", err)
	}
	for _, r := range rows {
		out[r.ID] = r.Pos
	}
	return out, nil
}

// Lead takes or renews the lease of the singleton role name for holder until ttl from now (by the
// database clock) and reports whether holder has it. A holder keeps the role by calling Lead again
// well within ttl; another holder gets it only once the lease expired.
func (q *Queue) Lead(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	res, err := q.db.ExecContext(ctx, `INSERT INTO docindex.leaders AS l (name, holder, expires_at)
		VALUES (?, ?, now() + ? * interval '1 microsecond')
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE l.holder = excluded.holder OR l.expires_at <= now()`, name, holder, micros(ttl))
	if err != nil {
		return false, wrap("lead", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, wrap("lead", err)
	}
	return n == 1, nil
}

// Resign gives up the role name if holder has it, so another process can take it at once.
func (q *Queue) Resign(ctx context.Context, name, holder string) error {
	_, err := q.db.ExecContext(ctx, `DELETE FROM docindex.leaders WHERE name = ? AND holder = ?`, name, holder)
	return wrap("resign", err)
}
