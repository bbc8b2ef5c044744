package glove_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/docindex/docindex/plugins/embedders/glove"
	"github.com/docindex/docindex/plugins/plugintest"
)

// realFile finds the converted GloVe file: $DOCINDEX_GLOVE_FILE, else the
// repository's .data/glove/glove-100d.bin, which scripts/glove.sh writes.
func realFile(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(glove.FileEnv); p != "" {
		return p
	}
	_, here, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(here), "..", "..", "..", ".data", "glove", glove.FileName)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the GloVe vectors are missing (%v): run scripts/glove.sh (make glove) to fetch and convert them", err)
	}
	return p
}

func TestRealVectorsConformance(t *testing.T) {
	e := plugintest.StartEmbedder(t, glove.New(glove.WithFile(realFile(t))))
	plugintest.RunEmbedderSuite(t, e, plugintest.Deterministic())
}

// TestParaphraseOutranksUnrelated: with no word in common, a paraphrase
// must be closer to the query than an unrelated passage.
func TestParaphraseOutranksUnrelated(t *testing.T) {
	e := glove.New(glove.WithFile(realFile(t)))
	cases := [][3]string{ // query, paraphrase without shared words, unrelated
		{"How do I reset my password?", "Steps to recover a forgotten login credential", "The recipe calls for two cups of flour and sugar"},
		{"The car would not start this morning", "My vehicle's engine failed to ignite today", "Stock markets rallied after the earnings report"},
		{"A physician examined the patient", "The doctor checked the sick man", "The orchestra performed a symphony"},
		{"Cheap flights to Paris", "Inexpensive airfare to France", "Quantum computing algorithms"},
		{"The kids are playing football outside", "Children kick a ball in the yard", "Tax returns are due in April"},
		{"Annual revenue increased significantly", "Yearly sales grew a lot", "The river flooded the village"},
	}
	for _, c := range cases {
		v, err := e.Embed(context.Background(), "glove-100d", c[:])
		if err != nil {
			t.Fatal(err)
		}
		near, far := dot(v[0], v[1]), dot(v[0], v[2])
		if near < far+0.2 {
			t.Errorf("%q: paraphrase %.3f, unrelated %.3f; want a clear margin", c[0], near, far)
		}
	}
}

func dot(a, b []float32) (d float64) {
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}
