package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/httpapi"
	"github.com/docindex/docindex/plugins/embedder"
)

const testModel = "test-8"

type tinyEmbedder struct{}

func (tinyEmbedder) Models(context.Context) ([]embedder.Model, error) {
	return []embedder.Model{{ID: testModel, Provider: "test", Dimensions: 8}}, nil
}

func (tinyEmbedder) Embed(_ context.Context, _ string, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 8)
		for j := range len(t) {
			v[int(t[j])%8]++
		}
		out[i] = v
	}
	return out, nil
}

func testEmbedders() docindex.Option { return docindex.WithEmbedders(tinyEmbedder{}) }

// contractCheck validates every exchange of a test server against openapi.yaml.
func contractCheck(t *testing.T) func(*http.Request, int, http.Header, []byte) error {
	t.Helper()
	c, err := httpapi.NewContract()
	if err != nil {
		t.Fatalf("load contract: %v", err)
	}
	return c.Check
}
