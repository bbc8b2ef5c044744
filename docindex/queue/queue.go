package queue

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Job is a row of docindex.jobs.
type Job struct {
	bun.BaseModel `bun:"table:docindex.jobs,alias:j"`

	ID           uuid.UUID     `bun:"id,pk,type:uuid"`
	Seq          int64         `bun:"seq"`
	FileID       uuid.NullUUID `bun:"file_id,type:uuid"`
	CollectionID uuid.NullUUID `bun:"collection_id,type:uuid"`
	Type         string        `bun:"type"`
	Status       string        `bun:"status"`
	RetryCount   int           `bun:"retry_count"`
	MaxRetries   int           `bun:"max_retries"`
	Error        *string       `bun:"error"`
	RunAfter     time.Time     `bun:"run_after"`
	WorkerID     *string       `bun:"worker_id"`
	HeartbeatAt  *time.Time    `bun:"heartbeat_at"`
	CreatedAt    time.Time     `bun:"created_at"`
	StartedAt    *time.Time    `bun:"started_at"`
	CompletedAt  *time.Time    `bun:"completed_at"`
}

// Job statuses.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Job types.
const (
	TypeIndex      = "index"
	TypeReindex    = "reindex"
	TypeDelete     = "delete"
	TypeRebuildFTS = "rebuild_fts"
)

// DefaultMaxRetries is the number of automatic retries of a job enqueued with MaxRetries 0.
const DefaultMaxRetries = 3

// Channel is the PostgreSQL notification channel on which enqueues wake idle workers.
const Channel = "docindex_jobs"

var (
	// ErrLeaseLost is returned when a worker moves a job it no longer owns: the job was rescued
	// after its lease expired, cancelled, or finished by someone else. The worker drops its result.
	ErrLeaseLost = errors.New("queue: job lease lost")
	// ErrNotFound is returned by Delete for a job that does not exist.
	ErrNotFound = errors.New("queue: job not found")
	// ErrRunning is returned by Delete for a running job, which cannot be removed.
	ErrRunning = errors.New("queue: job is running")
)

// NewJob describes a job to enqueue.
type NewJob struct {
	Type         string
	FileID       uuid.NullUUID
	CollectionID uuid.NullUUID
	MaxRetries   int // automatic retries; 0 means DefaultMaxRetries, negative means none
}

// Queue is the job queue over a database. It is safe for concurrent use.
type Queue struct {
	db      *bun.DB
	lease   time.Duration
	backoff func(retry int) time.Duration
	log     *slog.Logger
}

// Option configures a Queue.
type Option func(*Queue)

// WithLease sets how long a running job stays owned by its worker without a heartbeat before
// Rescue takes it back (default 30s). Workers heartbeat well within it.
func WithLease(d time.Duration) Option {
	return func(q *Queue) {
		if d > 0 {
			q.lease = d
		}
	}
}

// WithBackoff sets the delay before automatic retry number retry (1 for the first retry).
// The default is DefaultBackoff.
func WithBackoff(f func(retry int) time.Duration) Option {
	return func(q *Queue) {
		if f != nil {
			q.backoff = f
		}
	}
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(q *Queue) {
		if l != nil {
			q.log = l
		}
	}
}

// New returns a queue over db, a bun database over pgx (Listen needs the pgx stdlib driver).
func New(db *bun.DB, opts ...Option) *Queue {
	q := &Queue{db: db, lease: 30 * time.Second, backoff: DefaultBackoff, log: slog.Default()}
	for _, o := range opts {
		o(q)
	}
	return q
}

// Lease returns the lease duration of running jobs.
func (q *Queue) Lease() time.Duration { return q.lease }

// Logger returns the queue's logger, which workers built on the queue share by default.
func (q *Queue) Logger() *slog.Logger { return q.log }

// DefaultBackoff waits 10s before the first retry and doubles each time up to one hour, with
// ±20% jitter so jobs that failed together (an embedder outage) do not retry in lockstep.
func DefaultBackoff(retry int) time.Duration {
	const base, ceiling = 10 * time.Second, time.Hour
	d := ceiling
	if retry < 1 {
		retry = 1
	}
	if retry <= 20 {
		d = min(base<<(retry-1), ceiling)
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// maxErrorLen bounds the error text kept on a job: a panic's stack trace is useful, a megabyte
// of it is not.
const maxErrorLen = 8 << 10

func errorText(err error) string {
	if err == nil {
		return "unknown error"
	}
	s := err.Error()
	if len(s) > maxErrorLen {
		s = s[:maxErrorLen] + "… (truncated)"
	}
	return s
}

func micros(d time.Duration) int64 { return d.Microseconds() }

func idStrings(ids []uuid.UUID) []string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return s
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("queue: %s: %w", op, err)
}
