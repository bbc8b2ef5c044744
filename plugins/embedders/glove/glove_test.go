package glove

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/embedder"
)

func writeFile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	words := []string{"the", "a", "cat", "kitten", "dog", "stock", "market"}
	vecs := [][]float32{{1, 1, 0, 0}, {1, 0.9, 0, 0}, {0, 0, 1, 0.1}, {0, 0.1, 0.9, 0.2}, {0, 0, 0.8, 0.4}, {0, 0, -0.1, -1}, {0.1, 0, 0, -0.9}}
	if err := Write(f, 4, words, vecs); err != nil {
		t.Fatal(err)
	}
}

func TestAbsentFileSaysWhatToDo(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	e := New(WithFile(path))
	e.retry = 10 * time.Millisecond
	_, err := e.Models(context.Background())
	if !errors.Is(err, plugins.ErrNotReady) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "make glove") {
		t.Fatalf("absent file: %v", err)
	}
	if _, err := e.Embed(context.Background(), "glove-100d", []string{"x"}); !errors.Is(err, plugins.ErrNotReady) {
		t.Errorf("embed without the file: %v", err)
	}
	if _, err := e.Embed(context.Background(), "other", []string{"x"}); !errors.Is(err, embedder.ErrUnknownModel) {
		t.Errorf("other model without the file: %v", err)
	}

	// Once prepared, the file is picked up without a restart.
	writeFile(t, path)
	time.Sleep(20 * time.Millisecond)
	models, err := e.Models(context.Background())
	if err != nil || len(models) != 1 || models[0] != (embedder.Model{ID: "glove-4d", Dimensions: 4}) {
		t.Fatalf("after preparing the file: %+v, %v", models, err)
	}
}

func TestPooling(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path)
	e := New(WithFile(path))
	vecs, err := e.Embed(context.Background(), "glove-4d", []string{"The cat", "a KITTEN!", "stock market", "zzz qqq", "the"})
	if err != nil {
		t.Fatal(err)
	}
	cos := func(a, b []float32) (d float32) {
		for i := range a {
			d += a[i] * b[i]
		}
		return d
	}
	if cos(vecs[0], vecs[1]) <= cos(vecs[0], vecs[2]) {
		t.Errorf("cat/kitten %.3f <= cat/stock %.3f", cos(vecs[0], vecs[1]), cos(vecs[0], vecs[2]))
	}
	for i, v := range vecs {
		if n := cos(v, v); n < 0.999 || n > 1.001 {
			t.Errorf("text %d: norm^2 %v, want 1 (unknown words get a hashed vector)", i, n)
		}
	}
	// "the" weighs less than "cat".
	if a, b := cos(vecs[0], mustEmbed(t, e, "cat")), cos(vecs[0], mustEmbed(t, e, "the")); a <= b {
		t.Errorf("frequent word not damped: cos(the cat, cat) = %.3f, cos(the cat, the) = %.3f", a, b)
	}
	// Unknown words tell texts apart.
	if c := cos(mustEmbed(t, e, "cat 12"), mustEmbed(t, e, "cat 34")); c > 0.99 {
		t.Errorf("texts that differ by unknown words: cosine %.3f", c)
	}
	if _, err := e.Embed(context.Background(), "glove-100d", []string{"x"}); !errors.Is(err, embedder.ErrUnknownModel) {
		t.Errorf("wrong model: %v", err)
	}
}

func mustEmbed(t *testing.T, e *Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), "glove-4d", []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func TestDefaultFile(t *testing.T) {
	t.Setenv(FileEnv, "/some/where.bin")
	if got := DefaultFile(); got != "/some/where.bin" {
		t.Errorf("with %s: %s", FileEnv, got)
	}
	t.Setenv(FileEnv, "")
	exe, _ := os.Executable()
	if got := DefaultFile(); got != filepath.Join(filepath.Dir(exe), FileName) {
		t.Errorf("default: %s", got)
	}
}
