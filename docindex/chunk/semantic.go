package chunk

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/neurosnap/sentences"
	"github.com/neurosnap/sentences/english"
)

// embedBatch is how many sentences go to one EmbedFunc call: large enough to
// amortise a remote call, small enough to stay under providers' input limits.
const embedBatch = 64

// sentenceTokenizer is built once: it decodes 400 KB of compiled-in training
// data, and the result is read-only, so goroutines may share it.
var sentenceTokenizer = sync.OnceValues(func() (*sentences.DefaultSentenceTokenizer, error) {
	return english.NewSentenceTokenizer(nil)
})

// blankLines separates paragraphs. Punkt does not treat a paragraph break as a
// sentence end, and a heading or list item without a full stop would otherwise
// be glued to the next sentence.
var blankLines = regexp.MustCompile(`\n[ \t\r]*\n`)

// splitSemantic groups sentences into chunks, ending a chunk where the
// embedding distance between neighbouring sentences jumps.
func splitSemantic(ctx context.Context, text string, o Options) ([]piece, error) {
	units, err := sentenceUnits(text)
	if err != nil {
		return nil, err
	}
	if len(units) == 0 {
		return nil, nil
	}
	var breaks []bool // breaks[i]: a chunk ends after units[i]
	if len(units) > 1 {
		vecs, err := embedUnits(ctx, text, units, o.Embed)
		if err != nil {
			return nil, err
		}
		breaks = breakpoints(vecs, o.Percentile)
	}
	var out []piece
	first := 0
	for i := range units {
		if i == len(units)-1 || breaks[i] {
			out = append(out, pack(text, units[first:i+1], o.Size)...)
			first = i + 1
		}
	}
	return out, nil
}

// unit is one sentence: a byte range of the text, trimmed of white space.
type unit struct{ start, end int }

func sentenceUnits(text string) ([]unit, error) {
	tok, err := sentenceTokenizer()
	if err != nil {
		return nil, fmt.Errorf("load the sentence tokenizer: %w", err)
	}
	var units []unit
	add := func(start, end int) {
		s := text[start:end]
		trimmed := strings.TrimLeft(s, " \t\r\n")
		start += len(s) - len(trimmed)
		end = start + len(strings.TrimRight(trimmed, " \t\r\n"))
		if end > start {
			units = append(units, unit{start, end})
		}
	}
	from := 0
	for _, gap := range append(blankLines.FindAllStringIndex(text, -1), []int{len(text), len(text)}) {
		para := text[from:gap[0]]
		for _, s := range tok.Tokenize(para) {
			add(from+s.Start, from+s.End)
		}
		from = gap[1]
	}
	return units, nil
}

func embedUnits(ctx context.Context, text string, units []unit, embed EmbedFunc) ([][]float32, error) {
	vecs := make([][]float32, 0, len(units))
	for i := 0; i < len(units); i += embedBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := units[i:min(i+embedBatch, len(units))]
		texts := make([]string, len(batch))
		for j, u := range batch {
			texts[j] = text[u.start:u.end]
		}
		got, err := embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("embed sentences %d-%d of %d: %w", i+1, i+len(batch), len(units), err)
		}
		if len(got) != len(batch) {
			return nil, fmt.Errorf("embed sentences: got %d vectors for %d texts", len(got), len(batch))
		}
		vecs = append(vecs, got...)
	}
	return vecs, nil
}

// breakpoints marks the neighbour pairs whose cosine distance is above the
// given percentile of all neighbour distances. A document that never changes
// subject still gets its few largest jumps as boundaries; that is the method
// (Kamradt's, as in LangChain's SemanticChunker), and Size bounds the rest.
func breakpoints(vecs [][]float32, percentile float64) []bool {
	dist := make([]float64, len(vecs)-1)
	for i := range dist {
		dist[i] = 1 - cosine(vecs[i], vecs[i+1])
	}
	threshold := percentileOf(dist, percentile)
	breaks := make([]bool, len(vecs))
	for i, d := range dist {
		breaks[i] = d > threshold
	}
	return breaks
}

// cosine similarity; 0 when either vector is zero or the lengths differ, so a
// sentence the embedder could not represent counts as unrelated.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// percentileOf interpolates linearly between the closest ranks (NumPy's
// default), so with few sentences only the largest jumps exceed it.
func percentileOf(values []float64, p float64) float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	rank := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (rank-float64(lo))*(s[hi]-s[lo])
}

// pack turns one group of sentences into chunks of at most size tokens:
// whole sentences while they fit, and a sentence longer than size alone is
// split like the recursive strategy, without overlap.
func pack(text string, group []unit, size int) []piece {
	var out []piece
	start, end := -1, -1
	flush := func() {
		if start >= 0 {
			out = append(out, piece{start: start, end: end})
			start = -1
		}
	}
	for _, u := range group {
		if start >= 0 && Tokens(text[start:u.end]) <= size {
			end = u.end
			continue
		}
		flush()
		if Tokens(text[u.start:u.end]) > size {
			out = append(out, splitRecursive(text[u.start:u.end], u.start, size, 0)...)
			continue
		}
		start, end = u.start, u.end
	}
	flush()
	return out
}
