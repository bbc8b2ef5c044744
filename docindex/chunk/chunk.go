package chunk

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Strategies accepted in Options.Strategy.
const (
	StrategyRecursive = "recursive"
	StrategyMarkdown  = "markdown"
	StrategySemantic  = "semantic"
)

const (
	// DefaultSize is the chunk size in tokens when Options.Size is 0.
	DefaultSize = 512
	// NoOverlap in Options.Overlap asks for chunks without overlap; 0 means the
	// default, one eighth of the size.
	NoOverlap = -1
	// DefaultPercentile is the semantic breakpoint threshold when
	// Options.Percentile is 0.
	DefaultPercentile = 95
)

// ErrInvalidOptions is wrapped by every error about bad Options, so callers can
// tell a configuration mistake (a client error) from a failure.
var ErrInvalidOptions = errors.New("chunk: invalid options")

// Section is the text of one page of a document, in document order. Page is
// 1-based, or 0 when the format has no pages.
type Section struct {
	Page int
	Text string
}

// Chunk is one piece of a document.
type Chunk struct {
	Text    string
	Ordinal int   // 0-based, in document order
	Pages   []int // pages the chunk spans, ascending; nil when the document has no pages
	Tokens  int   // cl100k_base tokens in Text
	// Metadata is never nil. The markdown strategy sets "headings" ([]string):
	// the path of headings above the chunk, outermost first (empty before the
	// first heading).
	Metadata map[string]any
}

// EmbedFunc embeds texts, returning one vector per text in the same order.
type EmbedFunc func(ctx context.Context, texts []string) ([][]float32, error)

// Options select and tune a strategy. The zero value is valid: recursive, 512
// tokens, 64 tokens of overlap.
type Options struct {
	Strategy string // "recursive" (default when empty), "markdown", "semantic"
	Size     int    // maximum tokens per chunk; 0 = DefaultSize
	Overlap  int    // tokens shared by neighbouring chunks; 0 = Size/8, NoOverlap = none
	Embed    EmbedFunc
	// Percentile (semantic only) of the neighbour distances above which a
	// chunk ends, in (0, 100]; 0 = DefaultPercentile.
	Percentile float64
}

// normalized returns o with defaults filled in, or an error wrapping
// ErrInvalidOptions.
func (o Options) normalized() (Options, error) {
	switch o.Strategy {
	case "":
		o.Strategy = StrategyRecursive
	case StrategyRecursive, StrategyMarkdown, StrategySemantic:
	default:
		return o, fmt.Errorf("%w: unknown strategy %q (want recursive, markdown or semantic)", ErrInvalidOptions, o.Strategy)
	}
	if o.Size < 0 {
		return o, fmt.Errorf("%w: size %d is negative", ErrInvalidOptions, o.Size)
	}
	if o.Size == 0 {
		o.Size = DefaultSize
	}
	switch {
	case o.Overlap == NoOverlap:
		o.Overlap = 0
	case o.Overlap < 0:
		return o, fmt.Errorf("%w: overlap %d is negative (use NoOverlap for none)", ErrInvalidOptions, o.Overlap)
	case o.Overlap == 0:
		o.Overlap = o.Size / 8
	case o.Overlap >= o.Size:
		return o, fmt.Errorf("%w: overlap %d must be smaller than size %d", ErrInvalidOptions, o.Overlap, o.Size)
	}
	if o.Percentile == 0 {
		o.Percentile = DefaultPercentile
	}
	if o.Percentile < 0 || o.Percentile > 100 {
		return o, fmt.Errorf("%w: percentile %g is outside (0, 100]", ErrInvalidOptions, o.Percentile)
	}
	if o.Strategy == StrategySemantic && o.Embed == nil {
		return o, fmt.Errorf("%w: the semantic strategy needs an Embed function", ErrInvalidOptions)
	}
	return o, nil
}

// Validate reports whether Split would accept o, so settings can be checked
// when they are stored rather than when the first file is indexed.
func (o Options) Validate() error {
	_, err := o.normalized()
	return err
}

// Split cuts the sections of one document into chunks according to opts.
// A document without text yields no chunks and no error.
func Split(ctx context.Context, sections []Section, opts Options) ([]Chunk, error) {
	d, pieces, strategy, err := split(ctx, sections, opts)
	if err != nil {
		return nil, err
	}
	return d.chunks(pieces, strategy), nil
}

// chunks dresses byte ranges of the joined text as Chunks.
func (d doc) chunks(pieces []piece, strategy string) []Chunk {
	chunks := make([]Chunk, 0, len(pieces))
	for _, p := range pieces {
		text := d.text[p.start:p.end]
		md := map[string]any{}
		if strategy == StrategyMarkdown {
			md["headings"] = p.headings
		}
		chunks = append(chunks, Chunk{
			Text:     text,
			Ordinal:  len(chunks),
			Pages:    d.pages(p.start, p.end),
			Tokens:   Tokens(text),
			Metadata: md,
		})
	}
	return chunks
}

// split returns the joined document, its chunks as byte ranges and the
// strategy used.
func split(ctx context.Context, sections []Section, opts Options) (doc, []piece, string, error) {
	o, err := opts.normalized()
	if err != nil {
		return doc{}, nil, "", err
	}
	d := join(sections)
	if strings.TrimSpace(d.text) == "" {
		return d, nil, o.Strategy, nil
	}
	var pieces []piece
	switch o.Strategy {
	case StrategyMarkdown:
		pieces = splitMarkdown(d.text, o)
	case StrategySemantic:
		pieces, err = splitSemantic(ctx, d.text, o)
	default:
		pieces = splitRecursive(d.text, 0, o.Size, o.Overlap)
	}
	if err != nil {
		return doc{}, nil, "", fmt.Errorf("chunk %s: %w", o.Strategy, err)
	}
	return d, pieces, o.Strategy, nil
}

// piece is a chunk before it is dressed: a byte range of the joined text.
type piece struct {
	start, end int
	headings   []string // markdown only; never nil there
}
