package chunk

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

var topics = [][]string{
	{"cat", "kitten", "whiskers", "purr", "feline", "paw", "litter", "meow"},
	{"wave", "tide", "coral", "reef", "salt", "current", "harbor", "sailor"},
	{"bank", "loan", "interest", "credit", "budget", "invoice", "ledger", "tax"},
}

var fillers = strings.Fields("the a of with and every old new small large quiet bright our their near")

// topicSentences writes n sentences about topic k.
func topicSentences(r *rand.Rand, k, n int) []string {
	out := make([]string, n)
	for i := range out {
		var w []string
		for j := 0; j < 4+r.IntN(6); j++ {
			if j%2 == 0 {
				w = append(w, topics[k][r.IntN(len(topics[k]))])
			} else {
				w = append(w, fillers[r.IntN(len(fillers))])
			}
		}
		s := strings.Join(w, " ") + "."
		out[i] = strings.ToUpper(s[:1]) + s[1:]
	}
	return out
}

// topicEmbedder is a deterministic stand-in for a model: one dimension per
// topic counting its words, plus hashed dimensions for other words with a
// small weight, so sentences of one topic are close and of two far apart.
type topicEmbedder struct {
	mu    sync.Mutex
	calls []int // texts per call
	texts []string
}

func (e *topicEmbedder) embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls = append(e.calls, len(texts))
	e.texts = append(e.texts, texts...)
	e.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, len(topics)+16)
		for _, w := range strings.Fields(strings.ToLower(strings.Trim(text, "."))) {
			w = strings.Trim(w, ".,")
			topic := -1
			for k, words := range topics {
				if slices.Contains(words, w) {
					topic = k
				}
			}
			if topic >= 0 {
				v[topic]++
				continue
			}
			h := fnv.New32a()
			h.Write([]byte(w))
			v[len(topics)+int(h.Sum32()%16)] += 0.2
		}
		out[i] = v
	}
	return out, nil
}

// topicOf returns the topics whose words appear in s.
func topicOf(s string) []int {
	var out []int
	for k, words := range topics {
		for _, w := range strings.Fields(strings.ToLower(s)) {
			if slices.Contains(words, strings.Trim(w, ".,")) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

func TestSemanticBreaksWhereTheTopicChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var sections []Section
	for k := range topics {
		// Each topic on its own page, in two paragraphs.
		s := topicSentences(r, k, 12)
		sections = append(sections, Section{Page: k + 1, Text: strings.Join(s[:6], " ") + "\n\n" + strings.Join(s[6:], " ")})
	}
	e := &topicEmbedder{}
	chunks, _ := splitChecked(t, sections, Options{Strategy: StrategySemantic, Size: 1000, Embed: e.embed}, 1000)
	if len(chunks) != 3 {
		for _, c := range chunks {
			t.Logf("%d %v %q", c.Ordinal, topicOf(c.Text), c.Text)
		}
		t.Fatalf("%d chunks, want one per topic (3)", len(chunks))
	}
	for k, c := range chunks {
		if got := topicOf(c.Text); !slices.Equal(got, []int{k}) {
			t.Errorf("chunk %d mixes topics %v: %q", k, got, c.Text)
		}
		if !slices.Equal(c.Pages, []int{k + 1}) {
			t.Errorf("chunk %d: pages %v, want [%d]", k, c.Pages, k+1)
		}
	}
	// Every sentence was embedded once, trimmed.
	if len(e.texts) != 36 {
		t.Errorf("%d sentences embedded, want 36", len(e.texts))
	}
	for _, s := range e.texts {
		if s != strings.TrimSpace(s) || !strings.HasSuffix(s, ".") {
			t.Errorf("embedded %q: not one trimmed sentence", s)
		}
	}
}

func TestSemanticSizeBoundAndBatches(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	var text []string
	for k := range topics {
		text = append(text, strings.Join(topicSentences(r, k, 50), " "))
	}
	// A sentence longer than the size is cut like the recursive strategy.
	long := strings.Repeat("cat kitten whiskers purr ", 30) + "meow."
	text[0] = text[0] + " " + long
	e := &topicEmbedder{}
	chunks, _ := splitChecked(t, []Section{{Text: strings.Join(text, " ")}}, Options{Strategy: StrategySemantic, Size: 40, Embed: e.embed}, 40)
	if len(chunks) < 15 {
		t.Errorf("%d chunks: 150 sentences of about 8 tokens need more at size 40", len(chunks))
	}
	inLong := 0
	for _, c := range chunks {
		if len(topicOf(c.Text)) != 1 {
			t.Errorf("chunk %d mixes topics: %q", c.Ordinal, c.Text)
		}
		if strings.Contains(long, c.Text) {
			inLong++
		}
	}
	if inLong < 3 {
		t.Errorf("the sentence of %d tokens is in %d chunks, want at least 3", Tokens(long), inLong)
	}
	total := 0
	for _, n := range e.calls {
		if n > embedBatch {
			t.Errorf("a call embedded %d texts, batch is %d", n, embedBatch)
		}
		total += n
	}
	// 151 sentences as written; Punkt may read a few full stops as
	// abbreviations and join sentences.
	if total < 140 || total > 151 || len(e.calls) != (total+embedBatch-1)/embedBatch {
		t.Errorf("%d calls embedding %d texts, want full batches of %d for about 151 sentences", len(e.calls), total, embedBatch)
	}
}

func TestSemanticEmbedFailures(t *testing.T) {
	sections := []Section{{Text: "One sentence here. Another one there. A third for luck."}}
	boom := errors.New("model unavailable")
	_, err := Split(context.Background(), sections, Options{Strategy: StrategySemantic, Embed: func(context.Context, []string) ([][]float32, error) {
		return nil, boom
	}})
	if !errors.Is(err, boom) {
		t.Errorf("embed error not passed on: %v", err)
	}
	_, err = Split(context.Background(), sections, Options{Strategy: StrategySemantic, Embed: func(_ context.Context, texts []string) ([][]float32, error) {
		return make([][]float32, len(texts)-1), nil
	}})
	if err == nil || !strings.Contains(err.Error(), "got 2 vectors for 3 texts") {
		t.Errorf("short answer from the embedder: error %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := &topicEmbedder{}
	if _, err = Split(ctx, sections, Options{Strategy: StrategySemantic, Embed: e.embed}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error %v", err)
	}
	// One sentence needs no embedding at all.
	chunks, err := Split(context.Background(), []Section{{Text: "Just one."}}, Options{Strategy: StrategySemantic, Embed: e.embed})
	if err != nil || len(chunks) != 1 || len(e.calls) != 0 {
		t.Errorf("one sentence: %d chunks, error %v, %d embed calls", len(chunks), err, len(e.calls))
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3}
	for p, want := range map[float64]float64{10: 1.4, 50: 3, 95: 4.8, 100: 5} {
		if got := percentileOf(v, p); fmt.Sprintf("%.4f", got) != fmt.Sprintf("%.4f", want) {
			t.Errorf("percentile %g = %g, want %g", p, got, want)
		}
	}
}
