package chunk

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

var words = strings.Fields(`the a of river mountain quickly seven library ancient window
	silver argue build control delicate engine frozen garden harbor island jungle kettle
	lantern marble number orange puzzle quiet rocket saddle timber umbrella velvet wander
	yellow zebra anchor blanket candle dragon eleven feather granite hollow invent`)

// prose returns n pseudo-random words with sentences and, when paras > 0, that
// many paragraphs.
func prose(seed uint64, n, paras int) string {
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			switch {
			case paras > 0 && i%(n/paras) == 0:
				b.WriteString(".\n\n")
			case r.IntN(12) == 0:
				b.WriteString(". ")
			default:
				b.WriteString(" ")
			}
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	b.WriteString(".")
	return b.String()
}

// splitChecked splits as Split does and checks what every strategy promises: ordinals
// in order, Tokens right and within size, non-nil metadata, and texts that
// are the document's own text, in order, together covering all of it. It
// returns the chunks and their byte ranges in the joined text.
func splitChecked(t *testing.T, sections []Section, opts Options, size int) ([]Chunk, [][2]int) {
	t.Helper()
	// The internal split gives the ranges the chunks were cut from; Split is
	// split followed by chunks.
	d, pieces, strategy, err := split(context.Background(), sections, opts)
	if err != nil {
		t.Fatalf("split(%+v): %v", opts, err)
	}
	chunks := d.chunks(pieces, strategy)
	if len(chunks) == 0 || len(pieces) != len(chunks) {
		t.Fatalf("%d chunks, %d ranges", len(chunks), len(pieces))
	}
	src := d.text
	ranges := make([][2]int, len(chunks))
	covered := make([]bool, len(src))
	for i, c := range chunks {
		p := pieces[i]
		ranges[i] = [2]int{p.start, p.end}
		if c.Text != src[p.start:p.end] {
			t.Fatalf("chunk %d: text %q, range holds %q", i, c.Text, src[p.start:p.end])
		}
		if i > 0 && p.start <= pieces[i-1].start {
			t.Errorf("chunk %d starts at %d, not after chunk %d (%d)", i, p.start, i-1, pieces[i-1].start)
		}
		if c.Ordinal != i {
			t.Errorf("chunk %d: ordinal %d", i, c.Ordinal)
		}
		if got := Tokens(c.Text); c.Tokens != got {
			t.Errorf("chunk %d: Tokens %d, text has %d", i, c.Tokens, got)
		}
		if c.Tokens > size {
			t.Errorf("chunk %d: %d tokens, above the size %d: %q", i, c.Tokens, size, c.Text)
		}
		if strings.TrimSpace(c.Text) != c.Text || c.Text == "" {
			t.Errorf("chunk %d: untrimmed or empty text %q", i, c.Text)
		}
		if c.Metadata == nil {
			t.Errorf("chunk %d: nil metadata", i)
		}
		for k := p.start; k < p.end; k++ {
			covered[k] = true
		}
	}
	for k, ch := range []byte(src) {
		if !covered[k] && !strings.ContainsRune(" \t\r\n", rune(ch)) {
			t.Fatalf("byte %d (%q) of the source is in no chunk: ...%q...", k, ch, src[max(0, k-20):min(len(src), k+20)])
		}
	}
	return chunks, ranges
}

func TestTokens(t *testing.T) {
	for s, want := range map[string]int{"": 0, "hello world": 2, "tiktoken is great!": 6} {
		if got := Tokens(s); got != want {
			t.Errorf("Tokens(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestOptionsRejected(t *testing.T) {
	embed := func(context.Context, []string) ([][]float32, error) { return nil, nil }
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Size: -1}, "size -1 is negative"},
		{Options{Overlap: -5}, "overlap -5 is negative"},
		{Options{Size: 100, Overlap: 100}, "overlap 100 must be smaller than size 100"},
		{Options{Size: 100, Overlap: 250}, "overlap 250 must be smaller than size 100"},
		{Options{Overlap: 600}, "overlap 600 must be smaller than size 512"},
		{Options{Strategy: "sentences"}, `unknown strategy "sentences"`},
		{Options{Strategy: StrategySemantic}, "needs an Embed function"},
		{Options{Strategy: StrategySemantic, Embed: embed, Percentile: 101}, "percentile 101"},
	} {
		err := tc.opts.Validate()
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one wrapping ErrInvalidOptions saying %q", tc.opts, err, tc.want)
		}
		if _, err := Split(context.Background(), []Section{{Text: "some text"}}, tc.opts); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("Split with %+v: error %v, want ErrInvalidOptions", tc.opts, err)
		}
	}
	for _, ok := range []Options{{}, {Size: 10}, {Size: 10, Overlap: 9}, {Size: 1}, {Overlap: NoOverlap}, {Strategy: StrategyMarkdown}, {Strategy: StrategySemantic, Embed: embed}} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v rejected: %v", ok, err)
		}
	}
}

func TestEmptyDocument(t *testing.T) {
	for _, s := range []string{StrategyRecursive, StrategyMarkdown} {
		chunks, err := Split(context.Background(), []Section{{Page: 1, Text: " \n\n "}, {Page: 2}}, Options{Strategy: s})
		if err != nil || len(chunks) != 0 {
			t.Errorf("%s: %d chunks, error %v; want none", s, len(chunks), err)
		}
	}
}

func TestRecursiveDefaults(t *testing.T) {
	chunks, ranges := splitChecked(t, []Section{{Text: prose(1, 3000, 0)}}, Options{}, DefaultSize)
	if len(chunks) < 5 {
		t.Fatalf("%d chunks for about 3500 tokens at size 512", len(chunks))
	}
	for i, c := range chunks[:len(chunks)-1] {
		// Word pieces are merged up to the size, so all but the last chunk
		// come close to it.
		if c.Tokens < DefaultSize*3/4 {
			t.Errorf("chunk %d: only %d tokens", i, c.Tokens)
		}
		// The default overlap is 64 tokens: neighbours share text.
		shared := ranges[i][1] - ranges[i+1][0]
		if shared <= 0 {
			t.Errorf("chunks %d and %d share nothing", i, i+1)
			continue
		}
		if n := Tokens(chunks[i+1].Text[:shared]); n > DefaultSize/8+2 || n < DefaultSize/16 {
			t.Errorf("chunks %d and %d share %d tokens, want about %d", i, i+1, n, DefaultSize/8)
		}
	}
}

func TestRecursiveOverlap(t *testing.T) {
	sections := []Section{{Text: prose(2, 800, 4)}}
	withOverlap, ranges := splitChecked(t, sections, Options{Size: 60, Overlap: 15}, 60)
	overlapping := 0
	for i := 1; i < len(ranges); i++ {
		if shared := ranges[i-1][1] - ranges[i][0]; shared > 0 {
			overlapping++
			if n := Tokens(withOverlap[i].Text[:shared]); n > 17 {
				t.Errorf("chunks %d and %d share %d tokens, overlap is 15", i-1, i, n)
			}
		}
	}
	// Paragraph boundaries start fresh; inside a paragraph neighbours overlap.
	if overlapping < len(ranges)/2 {
		t.Errorf("only %d of %d neighbours overlap", overlapping, len(ranges)-1)
	}

	none, ranges := splitChecked(t, sections, Options{Size: 60, Overlap: NoOverlap}, 60)
	for i := 1; i < len(ranges); i++ {
		if ranges[i][0] < ranges[i-1][1] {
			t.Errorf("NoOverlap: chunks %d and %d overlap", i-1, i)
		}
	}
	if len(none) >= len(withOverlap) {
		t.Errorf("%d chunks without overlap, %d with: overlap should cost chunks", len(none), len(withOverlap))
	}
}

// TestSizeIsABound runs awkward text (no spaces, CJK, emoji, code, long
// lines) through small sizes: no chunk may exceed the size.
func TestSizeIsABound(t *testing.T) {
	awkward := strings.Join([]string{
		strings.Repeat("abcdefghij", 200),
		strings.Repeat("日本語のテキストを分割する。", 40),
		strings.Repeat("🙂🚀 ", 100),
		"func main() {\n\tfmt.Println(\"x\")\n}\n" + strings.Repeat("x := []int{1, 2, 3}\n", 50),
		prose(3, 500, 3),
		strings.Repeat("https://example.com/a/very/long/path?with=query&and=more ", 30),
	}, "\n\n")
	sections := []Section{{Text: awkward}}
	for _, size := range []int{8, 13, 32, 100} {
		for _, s := range []string{StrategyRecursive, StrategyMarkdown} {
			splitChecked(t, sections, Options{Strategy: s, Size: size, Overlap: size / 4}, size)
		}
	}
}

func TestPages(t *testing.T) {
	var sections []Section
	for p := 1; p <= 5; p++ {
		// Short pages (about 35 tokens) share chunks; page 3 (about 250)
		// needs several.
		n := 8
		if p == 3 {
			n = 60
		}
		var words []string
		for w := 0; w < n; w++ {
			words = append(words, fmt.Sprintf("p%dw%d", p, w))
		}
		sections = append(sections, Section{Page: p, Text: "\n" + strings.Join(words, " ") + "\n\n"})
	}
	// An empty page is skipped, not reported.
	sections = slices.Insert(sections, 2, Section{Page: 9, Text: "  \n"})
	for _, s := range []string{StrategyRecursive, StrategyMarkdown} {
		chunks, _ := splitChecked(t, sections, Options{Strategy: s, Size: 100, Overlap: 20}, 100)
		spanning := 0
		for _, c := range chunks {
			var want []int
			for p := 1; p <= 5; p++ {
				if strings.Contains(c.Text, fmt.Sprintf("p%dw", p)) {
					want = append(want, p)
				}
			}
			if !slices.Equal(c.Pages, want) {
				t.Errorf("%s chunk %d: pages %v, want %v: %q", s, c.Ordinal, c.Pages, want, c.Text)
			}
			if len(want) > 1 {
				spanning++
			}
		}
		if spanning < 2 {
			t.Errorf("%s: %d chunks span pages, want at least 2", s, spanning)
		}
	}

	unpaged, err := Split(context.Background(), []Section{{Text: prose(4, 300, 2)}}, Options{Size: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range unpaged {
		if c.Pages != nil {
			t.Errorf("unpaged chunk %d: pages %v", c.Ordinal, c.Pages)
		}
	}
}

// TestPagesOfRepetitiveText: identical rows on every page must not confuse
// page tracking (a search for the chunk text would find the wrong row).
func TestPagesOfRepetitiveText(t *testing.T) {
	var sections []Section
	for p := 1; p <= 6; p++ {
		sections = append(sections, Section{Page: p, Text: strings.Repeat("| total | 100 | 200 |\n", 15)})
	}
	for _, overlap := range []int{NoOverlap, 10} {
		chunks, _ := splitChecked(t, sections, Options{Size: 40, Overlap: overlap}, 40)
		seen := map[int]bool{}
		last := 0
		for _, c := range chunks {
			if len(c.Pages) == 0 || c.Pages[0] < last {
				t.Fatalf("overlap %d: chunk %d has pages %v after page %d", overlap, c.Ordinal, c.Pages, last)
			}
			last = c.Pages[len(c.Pages)-1]
			for _, p := range c.Pages {
				seen[p] = true
			}
		}
		if len(seen) != 6 || !slices.Equal(chunks[0].Pages, []int{1}) || last != 6 {
			t.Errorf("overlap %d: pages seen %v, first chunk %v, last page %d", overlap, seen, chunks[0].Pages, last)
		}
	}
}

// TestConcurrentSplit: workers chunk in parallel and share the tokenizers.
func TestConcurrentSplit(t *testing.T) {
	e := &topicEmbedder{}
	r := rand.New(rand.NewPCG(3, 3))
	semanticText := strings.Join(topicSentences(r, 0, 20), " ") + " " + strings.Join(topicSentences(r, 1, 20), " ")
	jobs := []struct {
		sections []Section
		opts     Options
	}{
		{[]Section{{Text: prose(11, 1500, 5)}}, Options{Size: 100}},
		{[]Section{{Text: guide}}, Options{Strategy: StrategyMarkdown, Size: 30}},
		{[]Section{{Text: semanticText}}, Options{Strategy: StrategySemantic, Size: 60, Embed: e.embed}},
	}
	want := make([][]Chunk, len(jobs))
	for i, j := range jobs {
		var err error
		if want[i], err = Split(context.Background(), j.sections, j.opts); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		for i, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := Split(context.Background(), j.sections, j.opts)
				if err != nil || len(got) != len(want[i]) {
					t.Errorf("job %d: %d chunks (%v), want %d", i, len(got), err, len(want[i]))
					return
				}
				for k := range got {
					if got[k].Text != want[i][k].Text {
						t.Errorf("job %d chunk %d differs", i, k)
					}
				}
			}()
		}
	}
	wg.Wait()
}
