package pluginhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/pluginhost"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/embedder"
)

// TestFirstPartyEmbedders runs the three first-party embedder binaries the
// way the server does, configured through the environment: hash as is,
// openai against a local server in OpenAI's shapes, glove first without its
// vectors file (reported, left out of the catalog) and then with it.
func TestFirstPartyEmbedders(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer sk-local" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, s := range req.Input {
			data = append(data, item{Index: i, Embedding: []float32{float32(len(s)), 1, 0, 0, 0, 0, 0, 1}})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	defer api.Close()

	dir := pluginDir(t, "docindex-embedder-hash", "docindex-embedder-glove", "docindex-embedder-openai")
	gloveFile := filepath.Join(t.TempDir(), "glove-100d.bin")
	rec := newRecorder(t)
	h := startHost(t, rec, pluginhost.WithDir(dir), pluginhost.WithModelRetry(100*time.Millisecond), pluginhost.WithEnv(
		"DOCINDEX_GLOVE_FILE="+gloveFile,
		"DOCINDEX_OPENAI_BASE_URL="+api.URL+"/v1",
		"DOCINDEX_OPENAI_API_KEY=sk-local",
		`DOCINDEX_OPENAI_MODELS=[{"id":"local-8","name":"tiny","dimensions":8}]`,
	))
	ctx := context.Background()

	ids := func() []string {
		models, err := h.Models(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range models {
			out = append(out, m.Provider+"/"+m.ID)
		}
		return out
	}
	if got, want := ids(), []string{"hash/hash-256", "hash/hash-1024", "openai/local-8"}; !slices.Equal(got, want) {
		t.Errorf("catalog without the GloVe file = %v, want %v", got, want)
	}
	gp := pluginInfo(t, h, "glove")
	if gp.Status != pluginhost.StatusRunning || !strings.Contains(gp.Error, "make glove") || !strings.Contains(gp.Error, gloveFile) {
		t.Errorf("glove without its file: %+v", gp)
	}
	if _, err := h.Embed(ctx, "glove-100d", []string{"x"}); !errors.Is(err, pluginhost.ErrUnknownModel) {
		t.Errorf("glove-100d without the file: %v", err)
	}
	vecs, err := h.Embed(ctx, "local-8", []string{"abc", "hello"})
	if err != nil || len(vecs) != 2 || vecs[1][0] != 5 {
		t.Errorf("openai plugin: %v %v", vecs, err)
	}

	// Preparing the file is noticed without a restart.
	src := realGloveFile(t)
	data, err := os.ReadFile(src)
	must(t, err)
	must(t, os.WriteFile(gloveFile, data, 0o644))
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(ids(), "glove/glove-100d") {
		if time.Now().After(deadline) {
			t.Fatalf("glove-100d did not appear after the file was prepared: %v, %+v", ids(), pluginInfo(t, h, "glove"))
		}
		time.Sleep(250 * time.Millisecond)
	}
	vecs, err = h.Embed(ctx, "glove-100d", []string{"The doctor checked the sick man", "A physician examined the patient", "The orchestra performed a symphony"})
	if err != nil {
		t.Fatal(err)
	}
	if near, far := dot(vecs[0], vecs[1]), dot(vecs[0], vecs[2]); near <= far {
		t.Errorf("glove through the plugin: paraphrase %.3f <= unrelated %.3f", near, far)
	}
	if gp := pluginInfo(t, h, "glove"); gp.Error != "" || !slices.Equal(gp.Models, []embedder.Model{{ID: "glove-100d", Provider: "glove", Dimensions: 100}}) {
		t.Errorf("glove with its file: %+v", gp)
	}
	if op := pluginInfo(t, h, "openai"); op.Kind != plugins.KindEmbedder || op.Status != pluginhost.StatusRunning {
		t.Errorf("openai: %+v", op)
	}
}

// realGloveFile is the converted GloVe file: $DOCINDEX_GLOVE_FILE or the
// repository's .data/glove/glove-100d.bin (scripts/glove.sh writes it).
func realGloveFile(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DOCINDEX_GLOVE_FILE"); p != "" {
		return p
	}
	_, here, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(here), "..", "..", ".data", "glove", "glove-100d.bin")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the GloVe vectors are missing (%v): run scripts/glove.sh (make glove) to fetch and convert them", err)
	}
	return p
}

func dot(a, b []float32) (d float64) {
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}
