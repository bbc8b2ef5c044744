package hash_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
	"github.com/docindex/docindex/plugins/plugintest"
)

func TestConformance(t *testing.T) {
	e := plugintest.StartEmbedder(t, hash.New(hash.WithDimensions(256), hash.WithDimensions(1024)))
	plugintest.RunEmbedderSuite(t, e, plugintest.Deterministic())
}

func TestDefaultModel(t *testing.T) {
	models, err := hash.New().Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 1 || models[0].ID != "hash-256" || models[0].Dimensions != 256 {
		t.Fatalf("default models = %+v, want only hash-256 with 256 dimensions", models)
	}
}

// TestStable pins the vectors: stored vectors are compared with query vectors
// computed by later versions, so any change here must come with a new model
// id, never by updating the expected digest.
func TestStable(t *testing.T) {
	e := hash.New(hash.WithDimensions(256), hash.WithDimensions(1024))
	texts := []string{
		"The quick brown fox jumps over the lazy dog.",
		"Indexing documents for retrieval-augmented generation (RAG), 2026 édition.",
	}
	want := map[string]string{
		"hash-256":  "163ec73a4a7e84ca",
		"hash-1024": "5d65bfff8fbf64c6",
	}
	for model := range want {
		vecs, err := e.Embed(context.Background(), model, texts)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		for _, v := range vecs {
			for _, x := range v {
				_ = binary.Write(h, binary.LittleEndian, math.Float32bits(x))
			}
		}
		got := hex.EncodeToString(h.Sum(nil))[:16]
		if got != want[model] {
			t.Errorf("%s: vectors changed (digest %s, want %s): a changed algorithm needs a new model id", model, got, want[model])
		}
	}
}

func TestUnitLengthAndEmpty(t *testing.T) {
	vecs, err := hash.New().Embed(context.Background(), "hash-256", []string{"some words here", "", " ,.;!? "})
	if err != nil {
		t.Fatal(err)
	}
	var norm float64
	for _, x := range vecs[0] {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("norm^2 = %v, want 1", norm)
	}
	for i := 1; i < 3; i++ {
		for _, x := range vecs[i] {
			if x != 0 {
				t.Fatalf("text %d without words gave a non-zero vector", i)
			}
		}
	}
}

func cos(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

func TestSharedStemsAndWords(t *testing.T) {
	vecs, err := hash.New().Embed(context.Background(), "hash-256", []string{
		"indexing documents",
		"index a document",
		"grilled vegetables recipe",
		"The database stores vectors in a table",
		"vectors are stored in database tables",
	})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cos(vecs[0], vecs[1]), cos(vecs[0], vecs[2]); a <= b+0.2 {
		t.Errorf("inflected forms: cosine %.3f, unrelated %.3f; want a clear margin", a, b)
	}
	if a, b := cos(vecs[3], vecs[4]), cos(vecs[3], vecs[2]); a <= b+0.2 {
		t.Errorf("paraphrase with shared words: cosine %.3f, unrelated %.3f; want a clear margin", a, b)
	}
}

func TestCaseAndStopWordsIgnored(t *testing.T) {
	vecs, err := hash.New().Embed(context.Background(), "hash-256", []string{"The Vector Store", "vector store"})
	if err != nil {
		t.Fatal(err)
	}
	if c := cos(vecs[0], vecs[1]); c < 0.9999 {
		t.Errorf("cosine %.5f: case and stop words should not change the vector", c)
	}
}

func TestUnknownModel(t *testing.T) {
	_, err := hash.New().Embed(context.Background(), "hash-300", []string{"x"})
	if !errors.Is(err, embedder.ErrUnknownModel) {
		t.Fatalf("got %v, want ErrUnknownModel", err)
	}
}

func TestHugeText(t *testing.T) {
	text := strings.Repeat("lorem ipsum dolor sit amet ", 200000) // 5.4 MB
	vecs, err := hash.New().Embed(context.Background(), "hash-256", []string{text, strings.Repeat("x", 1<<20)})
	if err != nil || len(vecs) != 2 {
		t.Fatalf("huge text: %v", err)
	}
}

func BenchmarkEmbed64(b *testing.B) {
	e := hash.New()
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = strings.Repeat("Retrieval augmented generation indexes documents into chunks. ", 8)
	}
	for b.Loop() {
		if _, err := e.Embed(context.Background(), "hash-256", texts); err != nil {
			b.Fatal(err)
		}
	}
}
