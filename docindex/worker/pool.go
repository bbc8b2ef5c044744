package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex/queue"
)

// RescuerRole is the leadership name under which one pool at a time rescues expired leases.
const RescuerRole = "rescuer"

var (
	// ErrShutdown is the cause of a handler's context cancelled because the pool stopped and the
	// grace period ran out. Such a job goes back to its place in the queue, no retry counted.
	ErrShutdown = errors.New("worker: pool shutting down")
	// ErrJobTimeout is the cause of a handler's context cancelled by the job timeout.
	ErrJobTimeout = errors.New("worker: job timed out")
)

// finishTimeout bounds the database call that records a job's outcome; it does not depend on
// the pool's context so a shutdown never leaves a finished job looking like a dead worker's.
const finishTimeout = 30 * time.Second

// Pool runs jobs of a queue with a fixed number of concurrent workers.
type Pool struct {
	q *queue.Queue
	h Handler

	workers     int
	id          string
	poll        time.Duration
	heartbeat   time.Duration
	jobTimeout  time.Duration
	grace       time.Duration
	rescueEvery time.Duration
	rescuer     bool
	listen      bool
	log         *slog.Logger

	maxWaiting int

	started atomic.Bool
	freed   chan struct{} // a worker came free: claim
	mu      sync.Mutex
	running map[uuid.UUID]*task
	waiting int // running jobs that wait on another service (Wait) and need no worker
}

type task struct {
	pool      *Pool
	waiting   bool // in Wait; guarded by pool.mu
	job       queue.Job
	claimedAt time.Time
	cancel    context.CancelCauseFunc
	lost      atomic.Bool // no longer ours: the result is discarded
	handled   atomic.Bool // the handler returned; only the outcome remains to be recorded
}

// Option configures a Pool.
type Option func(*Pool)

// WithWorkers sets how many jobs run at once (default 2).
func WithWorkers(n int) Option {
	return func(p *Pool) {
		if n > 0 {
			p.workers = n
		}
	}
}

// WithMaxWaiting sets how many jobs a pool runs beyond its workers while jobs wait on another
// service (see Wait) (default 32 per worker; 0 makes Wait free no worker).
func WithMaxWaiting(n int) Option {
	return func(p *Pool) { p.maxWaiting = max(n, 0) }
}

// WithID sets the worker id recorded on claimed jobs (default host-pid-random). It must be
// unique among running pools: the lease guards compare it.
func WithID(id string) Option {
	return func(p *Pool) {
		if id != "" {
			p.id = id
		}
	}
}

// WithPoll sets how often an idle pool looks for jobs without a notification (default 2s).
// Notifications wake it at once; polling covers a lost listening connection and jobs whose
// retry backoff ran out.
func WithPoll(d time.Duration) Option {
	return func(p *Pool) {
		if d > 0 {
			p.poll = d
		}
	}
}

// WithHeartbeat sets how often running jobs' leases are renewed (default a third of the
// queue's lease).
func WithHeartbeat(d time.Duration) Option {
	return func(p *Pool) {
		if d > 0 {
			p.heartbeat = d
		}
	}
}

// WithJobTimeout bounds one run of a job (default 1h; 0 or less means none). A job that exceeds
// it fails with a retryable error.
func WithJobTimeout(d time.Duration) Option {
	return func(p *Pool) { p.jobTimeout = max(d, 0) }
}

// WithGrace sets how long Run lets running jobs finish after its context ends before cancelling
// them (default 30s).
func WithGrace(d time.Duration) Option {
	return func(p *Pool) {
		if d >= 0 {
			p.grace = d
		}
	}
}

// WithLogger sets the logger (default the queue's).
func WithLogger(l *slog.Logger) Option {
	return func(p *Pool) {
		if l != nil {
			p.log = l
		}
	}
}

// WithRescuer sets whether the pool competes for the rescuer role and, while it holds it,
// requeues jobs whose lease expired (default true). Leadership makes one rescuer run at a time
// however many pools there are.
func WithRescuer(on bool) Option {
	return func(p *Pool) { p.rescuer = on }
}

// WithRescueInterval sets how often the rescuer looks for expired leases (default a quarter of
// the queue's lease, at least one second).
func WithRescueInterval(d time.Duration) Option {
	return func(p *Pool) {
		if d > 0 {
			p.rescueEvery = d
		}
	}
}

// WithListen sets whether the pool listens for enqueue notifications (default true); without
// it the pool only polls.
func WithListen(on bool) Option {
	return func(p *Pool) { p.listen = on }
}

// New returns a pool that runs the jobs of q with h.
func New(q *queue.Queue, h Handler, opts ...Option) *Pool {
	lease := q.Lease()
	p := &Pool{
		q: q, h: h,
		workers:     2,
		id:          defaultID(),
		poll:        2 * time.Second,
		heartbeat:   lease / 3,
		jobTimeout:  time.Hour,
		grace:       30 * time.Second,
		rescueEvery: max(lease/4, time.Second),
		rescuer:     true,
		listen:      true,
		log:         q.Logger(),
		running:     map[uuid.UUID]*task{},
		freed:       make(chan struct{}, 1),
		maxWaiting:  -1,
	}
	for _, o := range opts {
		o(p)
	}
	if p.maxWaiting < 0 {
		p.maxWaiting = 32 * p.workers
	}
	// Tickers need a positive period, whatever tiny lease a test chose.
	p.heartbeat = max(p.heartbeat, time.Millisecond)
	p.log = p.log.With("worker", p.id)
	return p
}

func defaultID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// ID returns the worker id the pool claims jobs under.
func (p *Pool) ID() string { return p.id }

// Run claims and runs jobs until ctx ends. Then it stops claiming, lets running jobs finish for
// the grace period, cancels the rest (they go back to the queue), stops heartbeats and returns.
// A pool runs once.
func (p *Pool) Run(ctx context.Context) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("worker: pool already ran")
	}
	// Heartbeats, the listener and the rescuer outlive ctx until the last job is settled, and
	// jobs keep ctx's values but not its cancellation.
	bg, stopBg := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBg()
	jobsCtx, stopJobs := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopJobs(nil)

	wake := make(chan struct{}, 1)
	var bgWG sync.WaitGroup
	if p.listen {
		bgWG.Go(func() {
			err := p.q.Listen(bg, func() { signal(wake) })
			if err != nil && bg.Err() == nil {
				p.log.Warn("worker: not listening for new jobs; polling only", "err", err, "poll", p.poll)
			}
		})
	}
	bgWG.Go(func() { p.heartbeats(bg) })
	if p.rescuer {
		bgWG.Go(func() { p.rescue(bg, wake) })
	}

	var jobsWG sync.WaitGroup
	p.claimLoop(ctx, jobsCtx, wake, &jobsWG)

	drained := make(chan struct{})
	go func() { jobsWG.Wait(); close(drained) }()
	var err error
	select {
	case <-drained:
	case <-time.After(p.grace):
		p.log.Warn("worker: grace period over; cancelling running jobs", "jobs", p.count())
		stopJobs(ErrShutdown)
		select {
		case <-drained:
		case <-time.After(max(p.grace, 5*time.Second)):
			// Handlers that ignore their context cannot be stopped; their leases expire without
			// heartbeats and the rescuer requeues them.
			n := p.abandon()
			err = fmt.Errorf("worker: %d handlers ignored cancellation; their jobs are left to the rescuer", n)
		}
	}
	stopBg()
	bgWG.Wait()
	if p.rescuer {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if rerr := p.q.Resign(rctx, RescuerRole, p.id); rerr != nil {
			p.log.Warn("worker: resign rescuer role", "err", rerr)
		}
		cancel()
	}
	return err
}

func signal(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (p *Pool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.running)
}

// free returns how many jobs the pool may claim: a worker each for the jobs that do not wait,
// and no more than maxWaiting jobs beyond the workers in all.
func (p *Pool) free() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return min(p.workers-(len(p.running)-p.waiting), p.workers+p.maxWaiting-len(p.running))
}

type taskKey struct{}

// Wait tells the pool that runs the job of ctx that the job now waits on another service (an
// embedding API, a language model) and needs no worker meanwhile: the pool may start another
// job, up to WithMaxWaiting jobs beyond its workers. Against a provider that takes a quarter
// second a call, a few workers then keep many calls' worth of texts coming, which the
// embedding batcher merges. The job keeps its lease and heartbeat. Call the returned function
// when the wait is over; it takes the worker back at once (the pool may run over its workers
// for a moment rather than hold a finished call). Outside a pool, or within a wait, Wait does
// nothing.
func Wait(ctx context.Context) (resume func()) {
	t, _ := ctx.Value(taskKey{}).(*task)
	if t == nil || t.pool.maxWaiting == 0 {
		return func() {}
	}
	p := t.pool
	p.mu.Lock()
	if t.waiting {
		p.mu.Unlock()
		return func() {}
	}
	t.waiting = true
	p.waiting++
	p.mu.Unlock()
	signal(p.freed)
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			if t.waiting {
				t.waiting = false
				p.waiting--
			}
			p.mu.Unlock()
		})
	}
}

func (p *Pool) claimLoop(ctx, jobsCtx context.Context, wake <-chan struct{}, jobsWG *sync.WaitGroup) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for ctx.Err() == nil {
		if free := p.free(); free > 0 {
			// Not under ctx: a claim cut off mid-way may still commit, leaving jobs running
			// under this id that nobody runs until their lease expires.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
			jobs, err := p.q.Claim(cctx, p.id, free)
			cancel()
			if err != nil {
				p.log.Error("worker: claim jobs", "err", err)
			}
			for _, j := range jobs {
				if ctx.Err() != nil {
					p.release(ctx, j)
					continue
				}
				p.start(jobsCtx, j, jobsWG)
			}
		}
		timer.Reset(p.poll)
		select {
		case <-ctx.Done():
		case <-wake:
		case <-p.freed:
		case <-timer.C:
		}
	}
}

func (p *Pool) release(ctx context.Context, j queue.Job) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := p.q.Release(rctx, p.id, j.ID); err != nil {
		p.log.Warn("worker: release job", "job", j.ID, "err", err)
	}
}

func (p *Pool) start(jobsCtx context.Context, j queue.Job, wg *sync.WaitGroup) {
	ctx, cancel := context.WithCancelCause(jobsCtx)
	t := &task{pool: p, job: j, claimedAt: time.Now(), cancel: cancel}
	ctx = context.WithValue(ctx, taskKey{}, t)
	p.mu.Lock()
	p.running[j.ID] = t
	p.mu.Unlock()
	wg.Go(func() {
		p.execute(ctx, t)
		cancel(nil)
		p.mu.Lock()
		delete(p.running, j.ID)
		if t.waiting { // a handler that returned within a wait
			t.waiting = false
			p.waiting--
		}
		p.mu.Unlock()
		signal(p.freed)
	})
}

func (p *Pool) execute(ctx context.Context, t *task) {
	log := p.log.With("job", t.job.ID, "type", t.job.Type, "retry", t.job.RetryCount)
	hctx := ctx
	if p.jobTimeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeoutCause(ctx, p.jobTimeout, ErrJobTimeout)
		defer cancel()
	}
	began := time.Now()
	err := p.call(hctx, t.job)
	t.handled.Store(true)

	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	var ferr error
	switch {
	case t.lost.Load():
		log.Warn("worker: job lost while running (rescued or cancelled); result discarded", "err", err)
		return
	case err == nil:
		ferr = p.q.Complete(fctx, p.id, t.job.ID)
		if ferr == nil {
			log.Info("worker: job completed", "took", time.Since(began))
		}
	case errors.Is(context.Cause(ctx), ErrShutdown):
		ferr = p.q.Release(fctx, p.id, t.job.ID)
		log.Info("worker: job stopped by shutdown; back in the queue", "err", err)
	default:
		if errors.Is(context.Cause(hctx), ErrJobTimeout) {
			err = fmt.Errorf("job timed out after %s: %w", p.jobTimeout, err)
		}
		permanent := IsPermanent(err)
		ferr = p.q.Fail(fctx, p.id, t.job.ID, err, permanent)
		log.Warn("worker: job failed", "err", err, "permanent", permanent, "took", time.Since(began))
	}
	switch {
	case errors.Is(ferr, queue.ErrLeaseLost):
		log.Warn("worker: job was taken from this worker before its outcome was recorded; result discarded")
	case ferr != nil:
		// The lease expires without heartbeats and the rescuer runs the job again.
		log.Error("worker: record job outcome", "err", ferr)
	}
}

// call runs the handler, turning a panic into a retryable error that keeps the stack.
func (p *Pool) call(ctx context.Context, j queue.Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panic: %v\n%s", r, debug.Stack())
		}
	}()
	return p.h.Handle(ctx, j)
}

// heartbeats renews the leases of running jobs and stops the jobs the queue says are lost.
func (p *Pool) heartbeats(ctx context.Context) {
	tick := time.NewTicker(p.heartbeat)
	defer tick.Stop()
	lastOK := time.Now() // when the last successful heartbeat was sent
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		tasks := p.live()
		if len(tasks) == 0 {
			continue
		}
		ids := make([]uuid.UUID, 0, len(tasks))
		for id := range tasks {
			ids = append(ids, id)
		}
		sent := time.Now()
		lost, err := p.q.Heartbeat(ctx, p.id, ids)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			p.log.Warn("worker: heartbeat", "err", err)
			// Without a renewal for a whole lease the rescuer may have handed the job to
			// another worker: stop, so one job never runs twice at once.
			for _, t := range tasks {
				if time.Since(latest(lastOK, t.claimedAt)) > p.q.Lease() {
					p.drop(t)
				}
			}
			continue
		}
		lastOK = sent
		for _, id := range lost {
			p.drop(tasks[id])
		}
	}
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (p *Pool) drop(t *task) {
	if t == nil || t.handled.Load() || t.lost.Swap(true) {
		return
	}
	p.log.Warn("worker: job no longer ours; stopping it", "job", t.job.ID)
	t.cancel(queue.ErrLeaseLost)
}

// live returns the running jobs whose handler has not returned yet.
func (p *Pool) live() map[uuid.UUID]*task {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[uuid.UUID]*task, len(p.running))
	for id, t := range p.running {
		if !t.handled.Load() && !t.lost.Load() {
			out[id] = t
		}
	}
	return out
}

// abandon marks every running job lost, so a handler that returns after Run did is ignored.
func (p *Pool) abandon() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.running {
		t.lost.Store(true)
	}
	return len(p.running)
}

// rescue takes or renews the rescuer role and, while holding it, requeues jobs whose lease
// expired.
func (p *Pool) rescue(ctx context.Context, wake chan<- struct{}) {
	ttl := 3 * p.rescueEvery
	for {
		leader, err := p.q.Lead(ctx, RescuerRole, p.id, ttl)
		if err != nil && ctx.Err() == nil {
			p.log.Warn("worker: rescuer leadership", "err", err)
		}
		if leader {
			n, err := p.q.Rescue(ctx)
			if err != nil && ctx.Err() == nil {
				p.log.Warn("worker: rescue expired jobs", "err", err)
			}
			if n > 0 {
				p.log.Info("worker: rescued jobs of silent workers", "jobs", n)
				signal(wake)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.rescueEvery):
		}
	}
}
