package openai_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docindex/docindex/plugins/embedders/hash"
)

// fakeOpenAI is an HTTP server that follows OpenAI's published
// POST /v1/embeddings shapes: the request body, the list of embedding
// objects with their index, the error object, the status codes.
type fakeOpenAI struct {
	*httptest.Server
	key      string
	models   map[string]int // model name -> native dimensions
	maxBatch int            // > 0: larger requests get 413
	// floats is how a server without base64 behaves: "" has it (OpenAI),
	// "refuse" answers 400 as vLLM did before it had it, "ignore" sends
	// floats whatever was asked.
	floats string

	mu       sync.Mutex
	script   []reply // answered first, in order
	requests []fakeRequest
	headers  []http.Header
	queries  []string
}

type reply struct {
	status  int
	headers map[string]string
	body    string
}

type fakeRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     int             `json:"dimensions"`
	inputs         []string
}

func newFake(t *testing.T) *fakeOpenAI {
	f := &fakeOpenAI{key: "sk-test", models: map[string]int{
		"text-embedding-3-small":  1536,
		"nomic-embed-text:latest": 768,
	}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOpenAI) base() string { return f.URL + "/v1" }

func (f *fakeOpenAI) push(r ...reply) {
	f.mu.Lock()
	f.script = append(f.script, r...)
	f.mu.Unlock()
}

func (f *fakeOpenAI) batchSizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, r := range f.requests {
		out = append(out, len(r.inputs))
	}
	return out
}

func (f *fakeOpenAI) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func openAIError(status int, typ, code, msg string) reply {
	c := "null"
	if code != "" {
		c = fmt.Sprintf("%q", code)
	}
	return reply{status: status, body: fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":%s}}`, msg, typ, c)}
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	var req fakeRequest
	decodeErr := json.NewDecoder(r.Body).Decode(&req)
	if decodeErr == nil {
		// "input" is a string or an array of strings.
		var one string
		if json.Unmarshal(req.Input, &one) == nil {
			req.inputs = []string{one}
		} else {
			decodeErr = json.Unmarshal(req.Input, &req.inputs)
		}
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.headers = append(f.headers, r.Header.Clone())
	f.queries = append(f.queries, r.URL.RawQuery)
	var scripted *reply
	if len(f.script) > 0 {
		scripted = &f.script[0]
		f.script = f.script[1:]
	}
	f.mu.Unlock()

	send := func(rp reply) {
		w.Header().Set("Content-Type", "application/json")
		for k, v := range rp.headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rp.status)
		_, _ = w.Write([]byte(rp.body))
	}
	switch {
	case scripted != nil:
		send(*scripted)
		return
	case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/embeddings"):
		send(openAIError(404, "invalid_request_error", "", "Invalid URL ("+r.Method+" "+r.URL.Path+")"))
		return
	case r.Header.Get("Authorization") != "Bearer "+f.key && r.Header.Get("api-key") != f.key:
		send(openAIError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."))
		return
	case decodeErr != nil || r.Header.Get("Content-Type") != "application/json":
		send(openAIError(400, "invalid_request_error", "", "We could not parse the JSON body of your request."))
		return
	}
	native, ok := f.models[req.Model]
	if !ok {
		send(openAIError(404, "invalid_request_error", "model_not_found", fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model)))
		return
	}
	switch {
	case req.EncodingFormat == "base64" && f.floats == "refuse":
		send(openAIError(400, "BadRequestError", "", "base64 encoding is not currently supported"))
		return
	case req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64":
		send(openAIError(400, "invalid_request_error", "", fmt.Sprintf("%q is not one of ['float', 'base64'] - 'encoding_format'", req.EncodingFormat)))
		return
	}
	if f.maxBatch > 0 && len(req.inputs) > f.maxBatch {
		send(reply{status: 413, body: `{"error":"Payload Too Large"}`})
		return
	}
	if slices.Contains(req.inputs, "") {
		send(openAIError(400, "invalid_request_error", "", "'$.input' is invalid. Please check the API reference."))
		return
	}
	dims := native
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	// Deterministic vectors with meaning enough for the conformance suite.
	vecs, err := hash.New(hash.WithDimensions(dims)).Embed(context.Background(), hash.ModelID(dims), req.inputs)
	if err != nil {
		send(openAIError(500, "server_error", "", err.Error()))
		return
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	resp := struct {
		Object string         `json:"object"`
		Data   []item         `json:"data"`
		Model  string         `json:"model"`
		Usage  map[string]int `json:"usage"`
	}{Object: "list", Model: req.Model, Usage: map[string]int{"prompt_tokens": len(req.inputs), "total_tokens": len(req.inputs)}}
	// Reverse order: clients must place embeddings by index.
	for i := len(vecs) - 1; i >= 0; i-- {
		var v any = vecs[i]
		if req.EncodingFormat == "base64" && f.floats == "" {
			v = base64Vector(vecs[i])
		}
		resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: v})
	}
	body, _ := json.Marshal(resp)
	send(reply{status: 200, body: string(body)})
}

// base64Vector is OpenAI's base64 encoding of a vector: its float32s,
// little-endian.
func base64Vector(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}
