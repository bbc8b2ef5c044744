package embedbatch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docindex/docindex/plugins/embedder"
)

// Defaults of New.
const (
	// DefaultMaxBatch is the largest call when neither WithMaxBatch nor the
	// model's MaxBatch says otherwise: past a few hundred texts a call's
	// fixed cost no longer matters and the response only grows.
	DefaultMaxBatch = 256
	// DefaultLinger is how long a text waits for company when the embedder
	// is idle: short against a file's indexing time (tens of ms).
	DefaultLinger = 5 * time.Millisecond
	// DefaultMaxInFlight is how many calls per model run at once.
	DefaultMaxInFlight = 1
)

// Option configures New.
type Option func(*Batcher)

// WithMaxBatch sets the most texts per call (default DefaultMaxBatch). A
// model whose MaxBatch is lower caps it.
func WithMaxBatch(n int) Option { return func(b *Batcher) { b.maxBatch = n } }

// WithLinger sets how long the oldest queued text waits for more before an
// incomplete batch is sent while a call slot is free (default
// DefaultLinger; 0 sends at once).
func WithLinger(d time.Duration) Option { return func(b *Batcher) { b.linger = d } }

// WithMaxInFlight sets how many calls per model may run at once (default
// DefaultMaxInFlight). More suit an embedder that serves calls in
// parallel; fewer make larger batches.
func WithMaxInFlight(n int) Option { return func(b *Batcher) { b.maxInFlight = n } }

// WithMaxPending bounds the texts queued per model (default four batches);
// callers wait for room. A caller larger than the bound is admitted when the
// queue is empty.
func WithMaxPending(n int) Option { return func(b *Batcher) { b.maxPending = n } }

// WithDirectBelow sends calls of fewer than n texts straight to the
// embedder, unbatched and without linger: for latency-bound callers such as
// a search query (one text), which should not wait behind document batches.
func WithDirectBelow(n int) Option { return func(b *Batcher) { b.directBelow = n } }

// Batcher is an embedder.Embedder that merges concurrent calls. It is safe
// for concurrent use and needs no closing: its goroutines run only while
// texts are queued or calls are running.
type Batcher struct {
	inner       embedder.Embedder
	maxBatch    int
	linger      time.Duration
	maxInFlight int
	maxPending  int
	directBelow int

	mu    sync.Mutex
	lanes map[string]*lane
}

var _ embedder.Embedder = (*Batcher)(nil)

// New wraps inner.
func New(inner embedder.Embedder, opts ...Option) *Batcher {
	b := &Batcher{inner: inner, maxBatch: DefaultMaxBatch, linger: DefaultLinger,
		maxInFlight: DefaultMaxInFlight, lanes: map[string]*lane{}}
	for _, o := range opts {
		o(b)
	}
	b.maxBatch = max(b.maxBatch, 1)
	b.maxInFlight = max(b.maxInFlight, 1)
	b.linger = max(b.linger, 0)
	return b
}

// Models lists the wrapped embedder's models.
func (b *Batcher) Models(ctx context.Context) ([]embedder.Model, error) {
	return b.inner.Models(ctx)
}

// Embed returns one vector per text, in order, from calls shared with
// other callers of the same model.
func (b *Batcher) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	if len(texts) < b.directBelow {
		return b.inner.Embed(ctx, model, texts)
	}
	l, err := b.lane(ctx, model)
	if err != nil {
		// The catalog is unreachable: the call itself says what is wrong, or works.
		return b.inner.Embed(ctx, model, texts)
	}
	return l.embed(ctx, texts)
}

// lane returns the queue of model, made on first use with the batch size
// capped by the model's MaxBatch.
func (b *Batcher) lane(ctx context.Context, model string) (*lane, error) {
	b.mu.Lock()
	l := b.lanes[model]
	b.mu.Unlock()
	if l != nil {
		return l, nil
	}
	models, err := b.inner.Models(ctx)
	if err != nil {
		return nil, err
	}
	size := b.maxBatch
	for _, m := range models {
		if m.ID == model && m.MaxBatch > 0 {
			size = min(size, m.MaxBatch)
		}
	}
	// An unknown model gets a lane too: its calls fail with the embedder's
	// own error, batched like any other.
	pending := b.maxPending
	if pending <= 0 {
		pending = 4 * size
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if l := b.lanes[model]; l != nil {
		return l, nil
	}
	l = &lane{b: b, model: model, maxBatch: size, maxPending: pending, wake: make(chan struct{}, 1),
		room: make(chan struct{})}
	b.lanes[model] = l
	return l, nil
}

// lane is the queue and the calls of one model.
type lane struct {
	b          *Batcher
	model      string
	maxBatch   int
	maxPending int

	mu       sync.Mutex
	queue    []*request // FIFO; the head may be partly sent
	queued   int        // texts queued and not yet sent
	inflight int
	running  bool          // a dispatcher goroutine runs
	wake     chan struct{} // tells the dispatcher of new texts or a free slot
	room     chan struct{} // closed (and replaced) when queued texts leave
}

// request is one caller's Embed.
type request struct {
	ctx   context.Context
	texts []string
	at    time.Time // when it was queued: the linger counts from here
	next  int       // first text not yet sent
	out   [][]float32
	left  int // texts not yet answered
	err   error
	done  chan struct{}
	ended bool // answered, failed or abandoned; guarded by lane.mu
}

// segment is a run of one request's texts inside a call.
type segment struct {
	r        *request
	off, len int
}

func (l *lane) embed(ctx context.Context, texts []string) ([][]float32, error) {
	r := &request{ctx: ctx, texts: texts, out: make([][]float32, len(texts)), left: len(texts), done: make(chan struct{})}
	l.mu.Lock()
	for l.queued > 0 && l.queued+len(texts) > l.maxPending {
		room := l.room
		l.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return nil, fmt.Errorf("embed: waiting for room in the batch queue: %w", ctx.Err())
		}
		l.mu.Lock()
	}
	r.at = time.Now()
	l.queue = append(l.queue, r)
	l.queued += len(texts)
	if !l.running {
		l.running = true
		go l.dispatch()
	} else {
		l.signal()
	}
	l.mu.Unlock()

	select {
	case <-r.done:
		return r.result()
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.ended { // answered while the context ended: the answer is there
		return r.result()
	}
	l.end(r, nil)
	return nil, fmt.Errorf("embed: %w", ctx.Err())
}

func (r *request) result() ([][]float32, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.out, nil
}

// signal wakes the dispatcher without blocking. Caller holds l.mu.
func (l *lane) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// end finishes r with err (nil: answered, or abandoned by its caller) and
// releases its unsent texts. Caller holds l.mu.
func (l *lane) end(r *request, err error) {
	if r.ended {
		return
	}
	r.ended, r.err = true, err
	if unsent := len(r.texts) - r.next; unsent > 0 {
		l.queued -= unsent
		r.next = len(r.texts)
		close(l.room)
		l.room = make(chan struct{})
	}
	close(r.done)
}

// dispatch sends batches while texts are queued, then exits.
func (l *lane) dispatch() {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		l.mu.Lock()
		for len(l.queue) > 0 && l.queue[0].next == len(l.queue[0].texts) {
			l.queue[0] = nil
			l.queue = l.queue[1:]
		}
		if len(l.queue) == 0 {
			l.queue = nil // let the backing array go
			l.running = false
			l.mu.Unlock()
			return
		}
		var wait <-chan time.Time
		switch {
		case l.inflight >= l.b.maxInFlight:
			// A call finishing signals; texts keep gathering meanwhile.
		case l.queued < l.maxBatch && l.b.linger > 0 && time.Since(l.queue[0].at) < l.b.linger:
			d := l.b.linger - time.Since(l.queue[0].at)
			if timer == nil {
				timer = time.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			wait = timer.C
		default:
			segs, texts := l.take()
			l.inflight++
			l.mu.Unlock()
			go l.call(segs, texts)
			continue
		}
		l.mu.Unlock()
		select {
		case <-l.wake:
		case <-wait:
		}
	}
}

// take removes up to maxBatch queued texts from the head. Caller holds l.mu.
func (l *lane) take() ([]segment, []string) {
	var segs []segment
	texts := make([]string, 0, min(l.queued, l.maxBatch))
	for _, r := range l.queue {
		if len(texts) == l.maxBatch {
			break
		}
		n := min(len(r.texts)-r.next, l.maxBatch-len(texts))
		if n == 0 {
			continue // ended: nothing left to send
		}
		segs = append(segs, segment{r: r, off: r.next, len: n})
		texts = append(texts, r.texts[r.next:r.next+n]...)
		r.next += n
		l.queued -= n
	}
	close(l.room)
	l.room = make(chan struct{})
	return segs, texts
}

// call embeds one batch and hands each caller its vectors.
func (l *lane) call(segs []segment, texts []string) {
	// The call serves several callers, so no one caller's cancellation may
	// end it; it ends when all of them have gone. Values (trace ids) come
	// from the first caller.
	ctx, cancel := context.WithCancel(context.WithoutCancel(segs[0].r.ctx))
	defer cancel()
	var live atomic.Int64
	live.Store(int64(len(segs)))
	stops := make([]func() bool, len(segs))
	for i, s := range segs {
		stops[i] = context.AfterFunc(s.r.ctx, func() {
			if live.Add(-1) == 0 {
				cancel()
			}
		})
	}
	vecs, err := l.b.inner.Embed(ctx, l.model, texts)
	for _, stop := range stops {
		stop()
	}
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("embed: model %q: the embedder returned %d vectors for %d texts", l.model, len(vecs), len(texts))
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	pos := 0
	for _, s := range segs {
		r := s.r
		if err != nil {
			l.end(r, err)
			continue
		}
		if !r.ended {
			copy(r.out[s.off:s.off+s.len], vecs[pos:pos+s.len])
			r.left -= s.len
			if r.left == 0 {
				l.end(r, nil)
			}
		}
		pos += s.len
	}
	l.inflight--
	l.signal()
}
