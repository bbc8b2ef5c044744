package plugintest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/embedder"
)

// EmbedderOption adjusts RunEmbedderSuite.
type EmbedderOption func(*embedderSuite)

type embedderSuite struct {
	models        []string
	deterministic bool
	maxTexts      int
	timeout       time.Duration
}

// OnlyModels restricts the per-model checks to these model ids (every id
// must be offered). By default every offered model is checked.
func OnlyModels(ids ...string) EmbedderOption {
	return func(s *embedderSuite) { s.models = append(s.models, ids...) }
}

// Deterministic also requires bit-identical vectors for the same text across
// calls, batches and goroutines. Local algorithms should pass it; remote
// services often do not (they are checked to a cosine of 0.999 instead).
func Deterministic() EmbedderOption {
	return func(s *embedderSuite) { s.deterministic = true }
}

// MaxTexts caps the largest batch the suite sends (default 64), for
// providers where every text costs money.
func MaxTexts(n int) EmbedderOption {
	return func(s *embedderSuite) { s.maxTexts = n }
}

// CallTimeout bounds each call (default 30s).
func CallTimeout(d time.Duration) EmbedderOption {
	return func(s *embedderSuite) { s.timeout = d }
}

// Sample texts: two that say nearly the same with the same words, one about
// something else entirely.
const (
	textCat     = "The cat sat on the mat and looked out of the window."
	textCat2    = "A cat was sitting on the mat, looking out of a window."
	textRevenue = "Quarterly revenue grew eight percent as the company cut costs."
)

// RunEmbedderSuite checks that e honours the embedder contract. Run it on the
// client StartEmbedder returns, so that the gRPC boundary is part of the test.
func RunEmbedderSuite(t *testing.T, e embedder.Embedder, opts ...EmbedderOption) {
	s := &embedderSuite{maxTexts: 64, timeout: 30 * time.Second}
	for _, o := range opts {
		o(s)
	}
	var models []embedder.Model
	t.Run("Models", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		var err error
		models, err = e.Models(ctx)
		if err != nil {
			t.Fatalf("Models: %v", err)
		}
		if len(models) == 0 {
			t.Fatal("Models returned no model")
		}
		seen := map[string]bool{}
		for _, m := range models {
			switch {
			case m.ID == "" || strings.TrimSpace(m.ID) != m.ID:
				t.Errorf("model id %q is empty or padded", m.ID)
			case seen[m.ID]:
				t.Errorf("model id %q listed twice", m.ID)
			}
			seen[m.ID] = true
			if m.Dimensions <= 0 {
				t.Errorf("model %q: %d dimensions", m.ID, m.Dimensions)
			}
			if m.MaxBatch < 0 || m.MaxInputTokens < 0 {
				t.Errorf("model %q: negative limits (max batch %d, max input tokens %d)", m.ID, m.MaxBatch, m.MaxInputTokens)
			}
		}
		for _, id := range s.models {
			if !seen[id] {
				t.Errorf("model %q is not offered", id)
			}
		}
	})
	if len(models) == 0 {
		return
	}
	for _, m := range models {
		if len(s.models) > 0 && !slices.Contains(s.models, m.ID) {
			continue
		}
		t.Run("Model="+m.ID, func(t *testing.T) { s.runModel(t, e, m) })
	}
	t.Run("UnknownModel", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		_, err := e.Embed(ctx, "docindex-conformance-no-such-model", []string{textCat})
		if !errors.Is(err, embedder.ErrUnknownModel) {
			t.Fatalf("Embed with an unknown model: got %v, want an error wrapping embedder.ErrUnknownModel", err)
		}
	})
}

func (s *embedderSuite) embed(t *testing.T, e embedder.Embedder, m embedder.Model, texts []string) [][]float32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	vecs, err := e.Embed(ctx, m.ID, texts)
	if err != nil {
		t.Fatalf("Embed(%d texts): %v", len(texts), err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("Embed(%d texts) returned %d vectors", len(texts), len(vecs))
	}
	for i, v := range vecs {
		if err := checkVector(v, m.Dimensions); err != nil {
			t.Fatalf("Embed: vector %d (text %.40q): %v", i, texts[i], err)
		}
	}
	return vecs
}

func checkVector(v []float32, dims int) error {
	if len(v) != dims {
		return fmt.Errorf("%d dimensions, the model has %d", len(v), dims)
	}
	var norm float64
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("value %d is %v", i, x)
		}
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return errors.New("all zeros")
	}
	return nil
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func (s *embedderSuite) same(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if s.deterministic {
		if !slices.Equal(a, b) {
			t.Errorf("%s: vectors differ (deterministic embedder)", what)
		}
		return
	}
	if c := cosine(a, b); c < 0.999 {
		t.Errorf("%s: cosine %.5f, want >= 0.999", what, c)
	}
}

func (s *embedderSuite) runModel(t *testing.T, e embedder.Embedder, m embedder.Model) {
	t.Run("Shape", func(t *testing.T) {
		s.embed(t, e, m, []string{textCat, textCat2, textRevenue})
	})
	t.Run("EmptyBatch", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		vecs, err := e.Embed(ctx, m.ID, nil)
		if err != nil || len(vecs) != 0 {
			t.Fatalf("Embed with no texts: %d vectors, error %v; want none and no error", len(vecs), err)
		}
	})
	t.Run("OrderAndBatchIndependence", func(t *testing.T) {
		ab := s.embed(t, e, m, []string{textCat, textRevenue})
		ba := s.embed(t, e, m, []string{textRevenue, textCat})
		alone := s.embed(t, e, m, []string{textCat})
		s.same(t, "text 0 of [a b] vs text 1 of [b a]", ab[0], ba[1])
		s.same(t, "text 1 of [a b] vs text 0 of [b a]", ab[1], ba[0])
		s.same(t, "text alone vs text in a batch", alone[0], ab[0])
	})
	t.Run("Similarity", func(t *testing.T) {
		v := s.embed(t, e, m, []string{textCat, textCat2, textRevenue})
		near, far := cosine(v[0], v[1]), cosine(v[0], v[2])
		if near <= far {
			t.Errorf("cosine of two sentences about a cat %.3f <= cosine with one about revenue %.3f", near, far)
		}
	})
	t.Run("FullBatch", func(t *testing.T) {
		n := s.maxTexts
		if m.MaxBatch > 0 && m.MaxBatch < n {
			n = m.MaxBatch
		}
		texts := make([]string, n)
		for i := range texts {
			texts[i] = fmt.Sprintf("Sentence number %d of the batch: %s", i, []string{textCat, textCat2, textRevenue}[i%3])
		}
		vecs := s.embed(t, e, m, texts)
		if n > 1 && slices.Equal(vecs[0], vecs[n-1]) {
			t.Errorf("different texts 0 and %d gave identical vectors", n-1)
		}
	})
	t.Run("Unicode", func(t *testing.T) {
		s.embed(t, e, m, []string{"Ünïcödé façade naïve café", "日本語のテキストを埋め込む", "emoji 🙂 and text"})
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		// Extracted text is not always valid UTF-8: it must either embed or
		// be refused as invalid input, never break the call.
		vecs, err := e.Embed(ctx, m.ID, []string{"broken \xff\xfe bytes in a sentence"})
		if err != nil && !errors.Is(err, plugins.ErrInvalidArgument) {
			t.Errorf("invalid UTF-8: %v; want a vector or an error wrapping plugins.ErrInvalidArgument", err)
		}
		if err == nil {
			if len(vecs) != 1 {
				t.Fatalf("invalid UTF-8: %d vectors for 1 text", len(vecs))
			}
			if err := checkVector(vecs[0], m.Dimensions); err != nil {
				t.Errorf("invalid UTF-8: %v", err)
			}
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		want := s.embed(t, e, m, []string{textCat, textRevenue})
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 4 {
					ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
					got, err := e.Embed(ctx, m.ID, []string{textCat, textRevenue})
					cancel()
					if err != nil {
						errs <- err
						return
					}
					if len(got) != 2 || cosine(got[0], want[0]) < 0.999 || cosine(got[1], want[1]) < 0.999 {
						errs <- errors.New("concurrent call returned different vectors")
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
