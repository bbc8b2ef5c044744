package embedbatch_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/embedbatch"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

var model = hash.ModelID(hash.DefaultDimensions)

// recorder wraps the real hash embedder: it records every call and can hold
// calls until released, fail them, or cap the model's batch.
type recorder struct {
	embedder.Embedder
	maxBatch int // reported as the model's MaxBatch

	mu    sync.Mutex
	calls [][]string
	ctxs  []context.Context
	gate  chan struct{} // non-nil: calls wait until it is closed
	fail  error
	short bool // answer one vector too few
	began chan int
}

func newRecorder() *recorder {
	return &recorder{Embedder: hash.New(), began: make(chan int, 1000)}
}

func (r *recorder) Models(ctx context.Context) ([]embedder.Model, error) {
	ms, err := r.Embedder.Models(ctx)
	for i := range ms {
		ms[i].MaxBatch = r.maxBatch
	}
	return ms, err
}

func (r *recorder) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.calls = append(r.calls, slices.Clone(texts))
	r.ctxs = append(r.ctxs, ctx)
	n, gate := len(r.calls), r.gate
	r.mu.Unlock()
	r.began <- n
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r.mu.Lock()
	fail, short := r.fail, r.short
	r.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	vs, err := r.Embedder.Embed(ctx, model, texts)
	if short && len(vs) > 0 {
		vs = vs[:len(vs)-1]
	}
	return vs, err
}

func (r *recorder) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, c := range r.calls {
		out = append(out, len(c))
	}
	return out
}

// waitCalls waits until n calls have begun.
func (r *recorder) waitCalls(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		r.mu.Lock()
		got := len(r.calls)
		r.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-r.began:
		case <-deadline:
			t.Fatalf("%d calls began, want %d", got, n)
		}
	}
}

func texts(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s text %d about %s", prefix, i, prefix)
	}
	return out
}

// want is what the hash embedder returns called directly.
func want(t *testing.T, ts []string) [][]float32 {
	t.Helper()
	vs, err := hash.New().Embed(context.Background(), model, ts)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func sameVectors(t *testing.T, got, exp [][]float32) {
	t.Helper()
	if len(got) != len(exp) {
		t.Fatalf("%d vectors, want %d", len(got), len(exp))
	}
	for i := range exp {
		if !slices.Equal(got[i], exp[i]) {
			t.Fatalf("vector %d differs from the direct call's", i)
		}
	}
}

type result struct {
	vs  [][]float32
	err error
}

func embedAsync(ctx context.Context, b *embedbatch.Batcher, ts []string) chan result {
	ch := make(chan result, 1)
	go func() {
		vs, err := b.Embed(ctx, model, ts)
		ch <- result{vs, err}
	}()
	return ch
}

// hold makes a call that stays in flight until the gate opens, so that the
// callers that follow queue up behind it.
func hold(t *testing.T, rec *recorder, b *embedbatch.Batcher) (chan struct{}, chan result) {
	t.Helper()
	gate := make(chan struct{})
	rec.mu.Lock()
	rec.gate = gate
	rec.mu.Unlock()
	first := embedAsync(context.Background(), b, texts("first", 1))
	rec.waitCalls(t, 1)
	return gate, first
}

func TestMergesWaitingCallersIntoOneCall(t *testing.T) {
	rec := newRecorder()
	b := embedbatch.New(rec, embedbatch.WithMaxBatch(64), embedbatch.WithLinger(0))
	gate, first := hold(t, rec, b)
	var chans []chan result
	var all [][]string
	for i := range 10 {
		ts := texts(fmt.Sprintf("caller%d", i), 1+i%4)
		all = append(all, ts)
		chans = append(chans, embedAsync(context.Background(), b, ts))
	}
	time.Sleep(50 * time.Millisecond) // let every caller queue
	close(gate)
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	for i, ch := range chans {
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		sameVectors(t, r.vs, want(t, all[i]))
	}
	total := 0
	for _, ts := range all {
		total += len(ts)
	}
	if got := rec.sizes(); !slices.Equal(got, []int{1, total}) {
		t.Fatalf("call sizes %v, want [1 %d]: the waiting callers should share one call", got, total)
	}
}

func TestLingerGathersCallersWhileIdle(t *testing.T) {
	rec := newRecorder()
	b := embedbatch.New(rec, embedbatch.WithLinger(200*time.Millisecond))
	a := embedAsync(context.Background(), b, texts("a", 3))
	time.Sleep(20 * time.Millisecond)
	c := embedAsync(context.Background(), b, texts("c", 2))
	for _, ch := range []chan result{a, c} {
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	}
	if got := rec.sizes(); !slices.Equal(got, []int{5}) {
		t.Fatalf("call sizes %v, want one call of 5", got)
	}
}

func TestFullBatchDoesNotWaitForLinger(t *testing.T) {
	rec := newRecorder()
	b := embedbatch.New(rec, embedbatch.WithMaxBatch(4), embedbatch.WithLinger(time.Hour))
	start := time.Now()
	vs, err := b.Embed(context.Background(), model, texts("x", 4))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a full batch waited %v", d)
	}
	sameVectors(t, vs, want(t, texts("x", 4)))
}

func TestLargeCallerIsSplitInOrder(t *testing.T) {
	rec := newRecorder()
	b := embedbatch.New(rec, embedbatch.WithMaxBatch(4), embedbatch.WithLinger(0))
	ts := texts("big", 10)
	vs, err := b.Embed(context.Background(), model, ts)
	if err != nil {
		t.Fatal(err)
	}
	sameVectors(t, vs, want(t, ts))
	if got := rec.sizes(); !slices.Equal(got, []int{4, 4, 2}) {
		t.Fatalf("call sizes %v, want [4 4 2]", got)
	}
}

func TestModelMaxBatchCapsTheBatch(t *testing.T) {
	rec := newRecorder()
	rec.maxBatch = 3
	b := embedbatch.New(rec, embedbatch.WithMaxBatch(100), embedbatch.WithLinger(0))
	ts := texts("m", 7)
	vs, err := b.Embed(context.Background(), model, ts)
	if err != nil {
		t.Fatal(err)
	}
	sameVectors(t, vs, want(t, ts))
	if got := rec.sizes(); !slices.Equal(got, []int{3, 3, 1}) {
		t.Fatalf("call sizes %v, want [3 3 1]", got)
	}
}

func TestErrorReachesEveryCallerOfTheBatch(t *testing.T) {
	rec := newRecorder()
	b := embedbatch.New(rec, embedbatch.WithLinger(0))
	gate, first := hold(t, rec, b)
	boom := errors.New("server on fire")
	a := embedAsync(context.Background(), b, texts("a", 2))
	c := embedAsync(context.Background(), b, texts("c", 3))
	time.Sleep(50 * time.Millisecond)
	rec.mu.Lock()
	rec.fail = boom
	rec.mu.Unlock()
	close(gate)
	if r := <-first; !errors.Is(r.err, boom) {
		t.Fatalf("got %v; want the embedder's error", r.err)
	}
	for _, ch := range []chan result{a, c} {
		if r := <-ch; !errors.Is(r.err, boom) || r.vs != nil {
			t.Fatalf("got %v, %d vectors; want the embedder's error", r.err, len(r.vs))
		}
	}
	if got := rec.sizes(); !slices.Equal(got, []int{1, 5}) {
		t.Fatalf("call sizes %v, want [1 5]: a and c should share the failing call", got)
	}
	// The lane recovers: the next call works.
	rec.mu.Lock()
	rec.fail = nil
	rec.mu.Unlock()
	vs, err := b.Embed(context.Background(), model, texts("after", 2))
	if err != nil {
		t.Fatal(err)
	}
	sameVectors(t, vs, want(t, texts("after", 2)))
}

func TestUnknownModelFailsWithTheEmbeddersError(t *testing.T) {
	b := embedbatch.New(hash.New(), embedbatch.WithLinger(0))
	_, err := b.Embed(context.Background(), "no-such-model", texts("u", 2))
	if !errors.Is(err, embedder.ErrUnknownModel) {
		t.Fatalf("got %v, want ErrUnknownModel", err)
	}
}

func TestTooFewVectorsIsAnError(t *testing.T) {
	rec := newRecorder()
	rec.short = true
	b := embedbatch.New(rec, embedbatch.WithLinger(0))
	if _, err := b.Embed(context.Background(), model, texts("s", 3)); err == nil {
		t.Fatal("a call answered with 2 vectors for 3 texts succeeded")
	}
}

func TestCancelledCallerDoesNotBreakTheOthers(t *testing.T) {
	rec := newRecorder()
	b := embedbatch.New(rec, embedbatch.WithLinger(0))
	gate, first := hold(t, rec, b)
	// a and c share the second call; a leaves while it runs.
	actx, cancelA := context.WithCancel(context.Background())
	a := embedAsync(actx, b, texts("a", 2))
	c := embedAsync(context.Background(), b, texts("c", 2))
	time.Sleep(30 * time.Millisecond)
	gate2 := make(chan struct{})
	rec.mu.Lock()
	rec.gate = gate2
	rec.mu.Unlock()
	close(gate)
	rec.waitCalls(t, 2)
	cancelA()
	select {
	case r := <-a:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled caller got %v", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled caller did not return while its call ran")
	}
	rec.mu.Lock()
	callCtx := rec.ctxs[1]
	rec.mu.Unlock()
	if callCtx.Err() != nil {
		t.Fatal("the shared call was cancelled although another caller waits for it")
	}
	close(gate2)
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	r := <-c
	if r.err != nil {
		t.Fatal(r.err)
	}
	sameVectors(t, r.vs, want(t, texts("c", 2)))
}

func TestCallIsCancelledWhenAllItsCallersLeave(t *testing.T) {
	rec := newRecorder()
	b := embedbatch.New(rec, embedbatch.WithLinger(0))
	rec.gate = make(chan struct{}) // never opened
	ctx, cancel := context.WithCancel(context.Background())
	a := embedAsync(ctx, b, texts("a", 2))
	rec.waitCalls(t, 1)
	cancel()
	if r := <-a; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("got %v", r.err)
	}
	rec.mu.Lock()
	callCtx := rec.ctxs[0]
	rec.mu.Unlock()
	select {
	case <-callCtx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the call went on with no caller left")
	}
}

func TestQueuedTextsOfACancelledCallerAreNotSent(t *testing.T) {
	rec := newRecorder()
	b := embedbatch.New(rec, embedbatch.WithLinger(0))
	gate, first := hold(t, rec, b)
	ctx, cancel := context.WithCancel(context.Background())
	a := embedAsync(ctx, b, texts("gone", 3))
	c := embedAsync(context.Background(), b, texts("stay", 2))
	time.Sleep(30 * time.Millisecond)
	cancel()
	if r := <-a; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("got %v", r.err)
	}
	close(gate)
	<-first
	if r := <-c; r.err != nil {
		t.Fatal(r.err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, call := range rec.calls {
		for _, s := range call {
			if s == texts("gone", 3)[0] {
				t.Fatalf("a cancelled caller's text was sent: %v", call)
			}
		}
	}
}

func TestPendingTextsAreBounded(t *testing.T) {
	rec := newRecorder()
	b := embedbatch.New(rec, embedbatch.WithMaxBatch(4), embedbatch.WithMaxPending(4), embedbatch.WithLinger(0))
	gate, first := hold(t, rec, b)
	a := embedAsync(context.Background(), b, texts("a", 3))
	time.Sleep(30 * time.Millisecond)
	// 3 queued + 2 > 4: this caller waits for room, and may give up.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.Embed(ctx, model, texts("c", 2)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want to wait for room until the deadline", err)
	}
	d := embedAsync(context.Background(), b, texts("d", 2))
	close(gate)
	for _, ch := range []chan result{first, a, d} {
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	}
	for _, n := range rec.sizes() {
		if n > 4 {
			t.Fatalf("call sizes %v exceed the batch", rec.sizes())
		}
	}
	// A caller larger than the bound still goes through on an empty queue.
	ts := texts("huge", 9)
	vs, err := b.Embed(context.Background(), model, ts)
	if err != nil {
		t.Fatal(err)
	}
	sameVectors(t, vs, want(t, ts))
}

func TestConcurrentCallersGetTheirOwnVectors(t *testing.T) {
	rec := newRecorder()
	b := embedbatch.New(rec, embedbatch.WithMaxBatch(16), embedbatch.WithLinger(time.Millisecond),
		embedbatch.WithMaxInFlight(2), embedbatch.WithMaxPending(40))
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 40 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range 15 {
				ts := texts(fmt.Sprintf("g%d-%d", g, i), 1+r.IntN(20))
				ctx, cancel := context.WithCancel(context.Background())
				if r.IntN(5) == 0 {
					d := time.Duration(r.IntN(300)) * time.Microsecond
					go func() { time.Sleep(d); cancel() }()
				}
				vs, err := b.Embed(ctx, model, ts)
				cancel()
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						errs <- err
					}
					continue
				}
				exp := want(t, ts)
				for j := range exp {
					if !slices.Equal(vs[j], exp[j]) {
						errs <- fmt.Errorf("caller g%d-%d: vector %d is not its own", g, i, j)
						break
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	merged := false
	for _, n := range rec.sizes() {
		if n > 16 {
			t.Fatalf("a call of %d texts exceeds the batch of 16", n)
		}
		if n == 16 {
			merged = true
		}
	}
	if !merged {
		t.Fatalf("no call was full under load: %v", rec.sizes())
	}
}

// blockBatches holds calls of more than one text until release is closed.
type blockBatches struct {
	embedder.Embedder
	release chan struct{}
	started chan struct{}
}

func (e blockBatches) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	if len(texts) > 1 {
		e.started <- struct{}{}
		<-e.release
	}
	return e.Embedder.Embed(ctx, model, texts)
}

func TestDirectBelowSkipsTheQueue(t *testing.T) {
	inner := blockBatches{Embedder: hash.New(), release: make(chan struct{}), started: make(chan struct{}, 1)}
	b := embedbatch.New(inner, embedbatch.WithLinger(0), embedbatch.WithDirectBelow(2))
	held := embedAsync(context.Background(), b, texts("doc", 3))
	<-inner.started
	// The only call slot is busy, yet a single text (a search query) is answered at once.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	vs, err := b.Embed(ctx, model, []string{"query"})
	if err != nil {
		t.Fatalf("the single text waited behind the batch: %v", err)
	}
	sameVectors(t, vs, want(t, []string{"query"}))
	close(inner.release)
	if r := <-held; r.err != nil {
		t.Fatal(r.err)
	}
}
