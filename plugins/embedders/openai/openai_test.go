package openai_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
	"github.com/docindex/docindex/plugins/embedders/openai"
	"github.com/docindex/docindex/plugins/plugintest"
)

func fastRetries() openai.Option {
	return openai.WithRetries(3, 5*time.Millisecond, 20*time.Millisecond)
}

func TestConformance(t *testing.T) {
	f := newFake(t)
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}, openai.Model{ID: "nomic", Name: "nomic-embed-text:latest"}))
	e := plugintest.StartEmbedder(t, p)
	plugintest.RunEmbedderSuite(t, e, plugintest.Deterministic())
}

func TestModelsKnownAndProbed(t *testing.T) {
	f := newFake(t)
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}, openai.Model{ID: "nomic", Name: "nomic-embed-text:latest"}))
	models, err := p.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []embedder.Model{
		{ID: "text-embedding-3-small", Dimensions: 1536, MaxInputTokens: 8191, MaxBatch: 32},
		{ID: "nomic", Dimensions: 768, MaxBatch: 32},
	}
	if !slices.Equal(models, want) {
		t.Errorf("models = %+v, want %+v", models, want)
	}
	if n := f.count(); n != 1 {
		t.Errorf("%d requests: want one probe for the unknown model's dimensions", n)
	}
	if _, err := p.Models(context.Background()); err != nil || f.count() != 1 {
		t.Errorf("the probe is not repeated: %d requests, %v", f.count(), err)
	}
}

func TestBatchesKeepOrder(t *testing.T) {
	f := newFake(t)
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key), openai.WithMaxBatch(3),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = strings.Repeat("word ", i+1) + "end"
	}
	got, err := p.Embed(context.Background(), "text-embedding-3-small", texts)
	if err != nil {
		t.Fatal(err)
	}
	if b := f.batchSizes(); !slices.Equal(b, []int{3, 3, 3, 1}) {
		t.Errorf("requests carried %v texts, want [3 3 3 1]", b)
	}
	want, _ := hash.New(hash.WithDimensions(1536)).Embed(context.Background(), "hash-1536", texts)
	for i := range texts {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("text %d: wrong vector (order lost?)", i)
		}
	}
	f.mu.Lock()
	r := f.requests[0]
	h := f.headers[0]
	f.mu.Unlock()
	if r.Model != "text-embedding-3-small" || r.EncodingFormat != "base64" || r.Dimensions != 0 || h.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("request = %+v, headers %v", r, h)
	}
}

func TestRequestBytesLimitSplits(t *testing.T) {
	f := newFake(t)
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key), openai.WithMaxRequestBytes(100),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	texts := []string{strings.Repeat("a", 60), strings.Repeat("b", 60), strings.Repeat("c", 30), strings.Repeat("d", 500)}
	if _, err := p.Embed(context.Background(), "text-embedding-3-small", texts); err != nil {
		t.Fatal(err)
	}
	if b := f.batchSizes(); !slices.Equal(b, []int{1, 2, 1}) {
		t.Errorf("requests carried %v texts, want [1 2 1]", b)
	}
}

func TestTooLargeIsSplit(t *testing.T) {
	f := newFake(t)
	f.maxBatch = 4
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key), openai.WithMaxBatch(16),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = "text " + strings.Repeat("x", i)
	}
	got, err := p.Embed(context.Background(), "text-embedding-3-small", texts)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := hash.New(hash.WithDimensions(1536)).Embed(context.Background(), "hash-1536", texts)
	for i := range texts {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("text %d: wrong vector after splitting", i)
		}
	}
	if b := f.batchSizes(); !slices.Equal(b, []int{10, 5, 2, 3, 5, 2, 3}) {
		t.Errorf("requests carried %v texts", b)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	f := newFake(t)
	// Backoff alone would retry after 5-20ms; Retry-After says one second.
	f.push(reply{status: 429, headers: map[string]string{"Retry-After": "1"}, body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`})
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key), fastRetries(),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	start := time.Now()
	if _, err := p.Embed(context.Background(), "text-embedding-3-small", []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second || d > 5*time.Second {
		t.Errorf("retried after %v, want about 1s", d)
	}
	if f.count() != 2 {
		t.Errorf("%d requests, want 2", f.count())
	}

	// Retry-After-Ms, where sent, is the more precise.
	f.push(reply{status: 503, headers: map[string]string{"Retry-After": "30", "Retry-After-Ms": "150"}, body: `{}`})
	start = time.Now()
	if _, err := p.Embed(context.Background(), "text-embedding-3-small", []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 5*time.Second {
		t.Errorf("retried after %v, want about 150ms", d)
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	f := newFake(t)
	f.push(openAIError(500, "server_error", "", "The server had an error while processing your request."),
		reply{status: 502, body: "<html>Bad Gateway</html>"},
		openAIError(503, "server_error", "", "The engine is currently overloaded."))
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key), fastRetries(),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	if _, err := p.Embed(context.Background(), "text-embedding-3-small", []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if f.count() != 4 {
		t.Errorf("%d requests, want 4", f.count())
	}
}

func TestGivingUpSaysWhy(t *testing.T) {
	f := newFake(t)
	for range 4 {
		f.push(openAIError(503, "server_error", "", "The engine is currently overloaded."))
	}
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key), fastRetries(),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	_, err := p.Embed(context.Background(), "text-embedding-3-small", []string{"x"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"503", "The engine is currently overloaded.", "gave up after 4 attempts", `"text-embedding-3-small"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if f.count() != 4 {
		t.Errorf("%d requests, want 4", f.count())
	}

	for range 4 {
		f.push(reply{status: 429, body: `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`})
	}
	_, err = p.Embed(context.Background(), "text-embedding-3-small", []string{"x"})
	if !errors.Is(err, plugins.ErrRateLimited) || !strings.Contains(err.Error(), "rate_limit_exceeded") {
		t.Errorf("persistent 429: %v", err)
	}
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	f := newFake(t)
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey("sk-wrong"), fastRetries(),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	_, err := p.Embed(context.Background(), "text-embedding-3-small", []string{"x"})
	if !errors.Is(err, plugins.ErrUnauthenticated) || !strings.Contains(err.Error(), "Incorrect API key provided.") || f.count() != 1 {
		t.Errorf("bad key: %v after %d requests", err, f.count())
	}

	p = openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key), fastRetries(),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	_, err = p.Embed(context.Background(), "text-embedding-3-small", []string{"fine", ""})
	if !errors.Is(err, plugins.ErrInvalidArgument) || !strings.Contains(err.Error(), "'$.input' is invalid") || f.count() != 2 {
		t.Errorf("empty input: %v after %d requests", err, f.count())
	}

	p = openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key), fastRetries(),
		openai.WithModels(openai.Model{ID: "text-embedding-9", Dimensions: 10}))
	_, err = p.Embed(context.Background(), "text-embedding-9", []string{"x"})
	if !errors.Is(err, embedder.ErrUnknownModel) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("model the server does not know: %v", err)
	}
	_, err = p.Embed(context.Background(), "never-configured", []string{"x"})
	if !errors.Is(err, embedder.ErrUnknownModel) {
		t.Errorf("model not configured: %v", err)
	}

	p = openai.New(openai.WithBaseURL(f.URL), openai.WithAPIKey(f.key), // no /v1
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	f.push(openAIError(404, "invalid_request_error", "", "Invalid URL (POST /embeddings)"))
	_, err = p.Embed(context.Background(), "text-embedding-3-small", []string{"x"})
	if !errors.Is(err, plugins.ErrNotReady) || !strings.Contains(err.Error(), "base URL") {
		t.Errorf("wrong base URL: %v", err)
	}
}

func TestDimensionsAreChecked(t *testing.T) {
	f := newFake(t)
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key),
		openai.WithModels(openai.Model{ID: "nomic", Name: "nomic-embed-text:latest", Dimensions: 1024}))
	_, err := p.Embed(context.Background(), "nomic", []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "returned 768 dimensions, configured for 1024") {
		t.Errorf("wrong dimensions: %v", err)
	}
}

func TestShortenedVectors(t *testing.T) {
	f := newFake(t)
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key),
		openai.WithModels(openai.Model{ID: "small-256", Name: "text-embedding-3-small", Dimensions: 256, Shorten: true}))
	vecs, err := p.Embed(context.Background(), "small-256", []string{"x"})
	if err != nil || len(vecs[0]) != 256 {
		t.Fatalf("shortened: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.requests[0]; r.Dimensions != 256 || r.Model != "text-embedding-3-small" {
		t.Errorf("request = %+v", r)
	}
}

func TestNetworkErrorsAreRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more: connection refused
	p := openai.New(openai.WithBaseURL("http://"+addr+"/v1"), openai.WithAPIKey("k"), fastRetries(),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	_, err = p.Embed(context.Background(), "text-embedding-3-small", []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "gave up after 4 attempts") {
		t.Errorf("unreachable server: %v", err)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	f := newFake(t)
	f.push(reply{status: 429, headers: map[string]string{"Retry-After": "30"}, body: `{}`})
	p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err := p.Embed(ctx, "text-embedding-3-small", []string{"x"})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("cancelled while waiting 30s: %v after %v", err, time.Since(start))
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	f.push(reply{status: 429, headers: map[string]string{"Retry-After": "30"}, body: `{}`})
	start = time.Now()
	if _, err = p.Embed(ctx, "text-embedding-3-small", []string{"x"}); err == nil || !strings.Contains(err.Error(), "deadline") || time.Since(start) > 500*time.Millisecond {
		t.Errorf("a retry past the deadline should fail at once: %v after %v", err, time.Since(start))
	}
}

func TestAzureStyle(t *testing.T) {
	f := newFake(t)
	// Any host name leads to the fake: the client dials it for every address.
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, f.Listener.Addr().String())
	}}}
	p := openai.New(openai.WithHTTPClient(client), openai.WithAPIKey(f.key),
		openai.WithBaseURL("http://myres.openai.azure.com/openai/deployments/small?api-version=2024-02-01"),
		openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
	if _, err := p.Embed(context.Background(), "text-embedding-3-small", []string{"x"}); err != nil {
		t.Fatal(err)
	}
	models, _ := p.Models(context.Background())
	if models[0].MaxBatch != 2048 {
		t.Errorf("Azure batch limit = %d, want 2048", models[0].MaxBatch)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.headers[0]; h.Get("api-key") != f.key || h.Get("Authorization") != "" || f.queries[0] != "api-version=2024-02-01" {
		t.Errorf("headers %v, query %q", h, f.queries[0])
	}
}

func TestNotConfigured(t *testing.T) {
	_, err := openai.New().Models(context.Background())
	if !errors.Is(err, plugins.ErrNotReady) || !strings.Contains(err.Error(), "DOCINDEX_OPENAI_API_KEY") {
		t.Errorf("unconfigured: %v", err)
	}
}

// Vectors come as base64 unless the server cannot send it: one that refuses
// it is asked once and then for floats only; one that ignores it sends
// floats, which read as well. Either way the vectors are the server's, bit
// for bit.
func TestEncodings(t *testing.T) {
	texts := []string{"first text", "second text", "third"}
	want, _ := hash.New(hash.WithDimensions(1536)).Embed(context.Background(), "hash-1536", texts)
	for _, tc := range []struct {
		floats  string          // the server's kind
		opts    []openai.Option // the provider's
		formats []string        // encoding_format of each request over two calls
	}{
		{"", nil, []string{"base64", "base64"}},
		{"refuse", nil, []string{"base64", "float", "float"}},
		{"ignore", nil, []string{"base64", "base64"}},
		{"", []openai.Option{openai.WithEncoding(openai.EncodingFloat)}, []string{"float", "float"}},
	} {
		f := newFake(t)
		f.floats = tc.floats
		p := openai.New(append([]openai.Option{openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key),
			openai.WithModels(openai.Model{ID: "text-embedding-3-small"})}, tc.opts...)...)
		for range 2 {
			got, err := p.Embed(context.Background(), "text-embedding-3-small", texts)
			if err != nil {
				t.Fatalf("server %q: %v", tc.floats, err)
			}
			for i := range texts {
				if !slices.Equal(got[i], want[i]) {
					t.Errorf("server %q, options %d: text %d: wrong vector", tc.floats, len(tc.opts), i)
				}
			}
		}
		f.mu.Lock()
		var formats []string
		for _, r := range f.requests {
			formats = append(formats, r.EncodingFormat)
		}
		f.mu.Unlock()
		if !slices.Equal(formats, tc.formats) {
			t.Errorf("server %q, options %d: requests asked for %v, want %v", tc.floats, len(tc.opts), formats, tc.formats)
		}
	}
}

// A base64 vector that is not one says so, and is not retried.
func TestBadBase64Vector(t *testing.T) {
	for body, want := range map[string]string{
		`{"object":"list","data":[{"object":"embedding","index":0,"embedding":"not base64!"}]}`: "not base64",
		`{"object":"list","data":[{"object":"embedding","index":0,"embedding":"AAAAAAA="}]}`:    "not a whole number of float32s",
	} {
		f := newFake(t)
		f.push(reply{status: 200, body: body})
		p := openai.New(openai.WithBaseURL(f.base()), openai.WithAPIKey(f.key), fastRetries(),
			openai.WithModels(openai.Model{ID: "text-embedding-3-small"}))
		_, err := p.Embed(context.Background(), "text-embedding-3-small", []string{"x"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("answer %s: err = %v, want one that says %q", body, err, want)
		}
		if n := f.count(); n != 1 {
			t.Errorf("answer %s: %d requests, want 1", body, n)
		}
	}
}

func TestUnknownEncodingIsAConfigError(t *testing.T) {
	p := openai.New(openai.WithEncoding("base85"), openai.WithBaseURL("http://127.0.0.1:1/v1"),
		openai.WithModels(openai.Model{ID: "m", Dimensions: 4}))
	if _, err := p.Embed(context.Background(), "m", []string{"x"}); !errors.Is(err, plugins.ErrNotReady) || !strings.Contains(err.Error(), "base85") {
		t.Errorf("err = %v", err)
	}
}
