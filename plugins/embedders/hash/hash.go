package hash

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/embedder"
)

// DefaultDimensions is the dimension count of the default model, "hash-256".
const DefaultDimensions = 256

// Feature weights. Whole words carry the meaning; bigrams reward shared
// phrases; trigrams let "index", "indexes" and "indexing" meet. Chosen on a
// retrieval test over Node.js's API docs (3000 paragraphs, queries of four
// scattered words or a five-word phrase, a quarter of the words inflected):
// trigrams carried most of the gain (MRR 0.16 without, 0.67 with at 256
// dimensions), bigrams a little.
const (
	wordWeight    = 1.0
	bigramWeight  = 0.5
	trigramWeight = 1.5
)

// maxTextBytes bounds the work per text; longer texts are embedded by their
// beginning. Chunkers keep texts far shorter.
const maxTextBytes = 1 << 20

// Option configures New.
type Option func(*config)

type config struct {
	dims []int
}

// WithDimensions offers a model of n dimensions, named "hash-<n>". Given
// several times, several models are offered. Without it, "hash-256".
func WithDimensions(n int) Option {
	return func(c *config) { c.dims = append(c.dims, n) }
}

// Embedder is the hash embedding provider.
type Embedder struct {
	models map[string]int
	list   []embedder.Model
}

var _ embedder.Embedder = (*Embedder)(nil)

// New returns the hash provider.
func New(opts ...Option) embedder.Embedder {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if len(c.dims) == 0 {
		c.dims = []int{DefaultDimensions}
	}
	e := &Embedder{models: map[string]int{}}
	for _, d := range c.dims {
		if d < 1 || d > 16000 {
			panic(fmt.Sprintf("hash embedder: %d dimensions is outside 1..16000", d))
		}
		id := ModelID(d)
		if _, dup := e.models[id]; dup {
			continue
		}
		e.models[id] = d
		e.list = append(e.list, embedder.Model{ID: id, Dimensions: d})
	}
	return e
}

// ModelID is the id of the hash model of dims dimensions.
func ModelID(dims int) string { return fmt.Sprintf("hash-%d", dims) }

// Models lists the configured models.
func (e *Embedder) Models(context.Context) ([]embedder.Model, error) {
	return append([]embedder.Model(nil), e.list...), nil
}

// Embed hashes each text into a unit vector (all zeros for a text without a
// single word).
func (e *Embedder) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	dims, ok := e.models[model]
	if !ok {
		return nil, fmt.Errorf("hash: %q: %w", model, embedder.ErrUnknownModel)
	}
	out := make([][]float32, len(texts))
	flat := make([]float32, dims*len(texts))
	sc := &scratch{}
	for i, t := range texts {
		if i%64 == 63 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		v := flat[i*dims : (i+1)*dims : (i+1)*dims]
		vectorize(t, v, sc)
		out[i] = v
	}
	return out, nil
}

// scratch is the working memory of one Embed call, reused from text to text
// so that a batch allocates it once.
type scratch struct {
	tf  counts
	sum []float64
}

// vectorize writes the embedding of text into v.
func vectorize(text string, v []float32, sc *scratch) {
	if len(text) > maxTextBytes {
		text = text[:maxTextBytes]
	}
	// Term frequencies per feature hash; sublinear scaling (1+ln tf) keeps a
	// word repeated fifty times from drowning the rest.
	tf := &sc.tf
	tf.reset(len(text))
	add := tf.add
	var prev string
	var buf [64]byte
	for word := range words(text) {
		if isStopWord(word) {
			prev = ""
			continue
		}
		add(hashString(seedWord, word), wordWeight)
		if prev != "" {
			add(hashPair(prev, word), bigramWeight)
		}
		prev = word
		// Trigrams of "<word>", so prefixes and suffixes count too.
		padded := append(append(append(buf[:0], '<'), word...), '>')
		if utf8.RuneCount(padded) >= 3 {
			for j := 0; j < len(padded); {
				_, s1 := utf8.DecodeRune(padded[j:])
				k := j + s1
				if k >= len(padded) {
					break
				}
				_, s2 := utf8.DecodeRune(padded[k:])
				l := k + s2
				if l >= len(padded) {
					break
				}
				_, s3 := utf8.DecodeRune(padded[l:])
				add(hashBytes(seedTrigram, padded[j:l+s3]), trigramWeight)
				j += s1
			}
		}
	}
	// Sum in float64: colliding features then give the same float32 whatever
	// the order they are visited in.
	if cap(sc.sum) < len(v) {
		sc.sum = make([]float64, len(v))
	}
	sum := sc.sum[:len(v)]
	clear(sum)
	dims := uint64(len(v))
	for h, w := range tf.all() {
		x := 1 + math.Log(w)
		if w < 1 {
			x = w // weights below one count once
		}
		// The top bit picks a sign: collisions then cancel on average
		// instead of piling up.
		if h>>63 == 1 {
			x = -x
		}
		sum[(h&^(1<<63))%dims] += x
	}
	for i, x := range sum {
		v[i] = float32(x)
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= inv
	}
}

// counts sums weights per 64-bit feature hash: an open-addressing table,
// several times faster than a Go map for this add-heavy use. Its size, and
// so the order all visits slots in, depends only on the text: the float
// sums, and the vector, are then the same whatever else is in the batch.
type counts struct {
	keys []uint64 // 0 marks a free slot; a hash of 0 is stored as 1
	vals []float64
	n    int
	// Backing arrays kept between texts.
	kbuf []uint64
	vbuf []float64
}

// reset empties c, sized for a text of textLen bytes.
func (c *counts) reset(textLen int) {
	size := 256
	for size < textLen && size < 1<<16 {
		size <<= 1
	}
	if cap(c.kbuf) < size {
		c.kbuf, c.vbuf = make([]uint64, size), make([]float64, size)
	}
	c.keys, c.vals = c.kbuf[:size], c.vbuf[:size]
	clear(c.keys)
	c.n = 0
}

func (c *counts) add(h uint64, w float64) {
	if h == 0 {
		h = 1
	}
	if 2*(c.n+1) > len(c.keys) {
		c.grow()
	}
	mask := uint64(len(c.keys) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch c.keys[i] {
		case h:
			c.vals[i] += w
			return
		case 0:
			c.keys[i], c.vals[i] = h, w
			c.n++
			return
		}
	}
}

func (c *counts) grow() {
	keys, vals := c.keys, c.vals
	c.keys, c.vals = make([]uint64, 2*len(keys)), make([]float64, 2*len(vals))
	c.kbuf, c.vbuf = c.keys, c.vals
	c.n = 0
	for i, k := range keys {
		if k != 0 {
			c.add(k, vals[i])
		}
	}
}

// all yields the features in slot order: the order does not matter, since
// each feature lands in its own bucket by its hash alone.
func (c *counts) all() func(yield func(uint64, float64) bool) {
	return func(yield func(uint64, float64) bool) {
		for i, k := range c.keys {
			if k != 0 && !yield(k, c.vals[i]) {
				return
			}
		}
	}
}

// words yields the lower-cased words of text: runs of letters and digits.
func words(text string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		start := -1
		for i, r := range text {
			in := unicode.IsLetter(r) || unicode.IsDigit(r)
			switch {
			case in && start < 0:
				start = i
			case !in && start >= 0:
				if !yield(lowerWord(text[start:i])) {
					return
				}
				start = -1
			}
		}
		if start >= 0 {
			yield(lowerWord(text[start:]))
		}
	}
}

// lowerWord lower-cases w and caps it at 48 bytes, so that a pathological
// token (a base64 blob) stays cheap.
func lowerWord(w string) string {
	if len(w) > 48 {
		cut := 48
		for cut > 0 && !utf8.RuneStart(w[cut]) {
			cut--
		}
		w = w[:cut]
	}
	return strings.ToLower(w)
}

// FNV-1a, 64 bit, with a seed per feature family so that the word "ing" and
// the trigram "ing" land in different places.
const (
	fnvOffset   = 14695981039346656037
	fnvPrime    = 1099511628211
	seedWord    = 'w'
	seedBigram  = 'b'
	seedTrigram = 't'
)

func hashString(seed byte, s string) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(seed)) * fnvPrime
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return mix(h)
}

func hashBytes(seed byte, b []byte) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(seed)) * fnvPrime
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return mix(h)
}

func hashPair(a, b string) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(seedBigram)) * fnvPrime
	for i := 0; i < len(a); i++ {
		h = (h ^ uint64(a[i])) * fnvPrime
	}
	h = (h ^ ' ') * fnvPrime
	for i := 0; i < len(b); i++ {
		h = (h ^ uint64(b[i])) * fnvPrime
	}
	return mix(h)
}

// mix spreads FNV's weak low bits (murmur3's finaliser), since the bucket is
// taken modulo a small number.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// isStopWord reports frequent English function words: they match everywhere
// and so only add noise to a vector this small.
func isStopWord(w string) bool {
	switch w {
	case "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
		"as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
		"by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for",
		"from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself",
		"him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just",
		"me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once",
		"only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she",
		"should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
		"themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
		"under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which",
		"while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself",
		"yourselves":
		return true
	}
	return false
}

// Version is the provider's version: first-party providers ship with the SDK.
func (e *Embedder) Version() string { return plugins.SDKVersion }
