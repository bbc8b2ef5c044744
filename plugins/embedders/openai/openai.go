package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/internal/retry"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Model configures one model the provider offers.
type Model struct {
	// ID is the catalog id (and, unless Name is set, the model name sent).
	ID string `json:"id"`
	// Name is the model name the server knows, when it differs from ID
	// (an Azure deployment's model, "nomic-embed-text:latest").
	Name string `json:"name,omitempty"`
	// Dimensions of the vectors. 0: known OpenAI models use their size,
	// others are asked once with a probe text.
	Dimensions int `json:"dimensions,omitempty"`
	// Shorten asks the server for Dimensions-long vectors (the "dimensions"
	// request field of text-embedding-3 models) instead of the model's
	// native size.
	Shorten bool `json:"shorten,omitempty"`
	// MaxInputTokens is the longest input the model takes; 0 = not stated.
	MaxInputTokens int `json:"maxInputTokens,omitempty"`
}

// known returns OpenAI's embedding models' native sizes and input limits.
func known(name string) (Model, bool) {
	switch name {
	case "text-embedding-3-small", "text-embedding-ada-002":
		return Model{Dimensions: 1536, MaxInputTokens: 8191}, true
	case "text-embedding-3-large":
		return Model{Dimensions: 3072, MaxInputTokens: 8191}, true
	}
	return Model{}, false
}

// Option configures New.
type Option func(*Provider)

// WithBaseURL sets the API's base URL, up to and including the version
// ("http://localhost:11434/v1"). Query parameters (Azure's api-version) are
// kept on every request.
func WithBaseURL(u string) Option { return func(p *Provider) { p.baseURL = strings.TrimRight(u, "/") } }

// WithAPIKey sets the API key, sent as a bearer token (as the api-key header
// to Azure OpenAI hosts).
func WithAPIKey(key string) Option { return func(p *Provider) { p.apiKey = key } }

// WithModels sets the offered models.
func WithModels(models ...Model) Option {
	return func(p *Provider) { p.models = append(p.models, models...) }
}

// WithMaxBatch sets how many texts go into one request (default 2048 for
// OpenAI and Azure, 32 for other servers, whose limits are often lower).
func WithMaxBatch(n int) Option { return func(p *Provider) { p.maxBatch = n } }

// WithMaxRequestBytes bounds the texts of one request (default 1 MB: about
// 250k tokens, under OpenAI's 300k tokens per request).
func WithMaxRequestBytes(n int) Option { return func(p *Provider) { p.maxBytes = n } }

// WithRetries sets how often a failed request is retried (default 5) and
// the first and the longest wait between attempts (default 500ms and 30s).
// A Retry-After from the server replaces the computed wait.
func WithRetries(n int, first, longest time.Duration) Option {
	return func(p *Provider) { p.backoff = retry.Backoff{Retries: n, First: first, Longest: longest} }
}

// WithTimeout bounds each HTTP request (default 60s).
func WithTimeout(d time.Duration) Option { return func(p *Provider) { p.timeout = d } }

// WithHeader adds a header to every request (OpenAI-Organization, ...).
func WithHeader(key, value string) Option {
	return func(p *Provider) { p.headers = append(p.headers, [2]string{key, value}) }
}

// Encodings of vectors in an answer (the request's encoding_format).
const (
	// EncodingBase64 asks for each vector as the base64 of its little-endian
	// float32s: a third of the bytes of decimal floats, and decoded without
	// parsing numbers, which saves the CPU a large batch otherwise costs.
	EncodingBase64 = "base64"
	// EncodingFloat asks for arrays of decimal floats, which every
	// OpenAI-compatible server can send.
	EncodingFloat = "float"
)

// WithEncoding sets the encoding asked of the server (default
// EncodingBase64). Either kind of answer is read whatever was asked, and a
// server that refuses base64 is asked for floats from then on, so the
// setting matters only to skip that first refused request.
func WithEncoding(e string) Option { return func(p *Provider) { p.encoding = e } }

// WithHTTPClient replaces the HTTP client.
func WithHTTPClient(c *http.Client) Option { return func(p *Provider) { p.client = c } }

// withConfigError makes every call fail with err: a plugin whose settings are
// wrong keeps running and says so, instead of dying in a restart loop.
func withConfigError(err error) Option { return func(p *Provider) { p.configErr = err } }

// Provider is the OpenAI-compatible embedding provider.
type Provider struct {
	baseURL   string
	apiKey    string
	models    []Model
	maxBatch  int
	maxBytes  int
	backoff   retry.Backoff
	timeout   time.Duration
	headers   [][2]string
	client    *http.Client
	configErr error
	envPrefix string
	encoding  string
	// floats is set once the server refused base64.
	floats atomic.Bool

	mu     sync.Mutex
	probed map[string]int // dimensions learnt by probing, by model id
}

var _ embedder.Embedder = (*Provider)(nil)

// New returns a provider.
func New(opts ...Option) *Provider {
	p := &Provider{
		baseURL:   DefaultBaseURL,
		maxBytes:  1 << 20,
		backoff:   retry.Backoff{Retries: 5, First: 500 * time.Millisecond, Longest: 30 * time.Second},
		timeout:   60 * time.Second,
		client:    &http.Client{},
		probed:    map[string]int{},
		envPrefix: DefaultEnvPrefix,
		encoding:  EncodingBase64,
	}
	for _, o := range opts {
		o(p)
	}
	if p.encoding != EncodingBase64 && p.encoding != EncodingFloat && p.configErr == nil {
		p.configErr = fmt.Errorf("openai embedder: encoding %q is neither %q nor %q: %w", p.encoding, EncodingBase64, EncodingFloat, plugins.ErrNotReady)
	}
	if p.maxBatch <= 0 {
		p.maxBatch = 32
		if p.isOpenAI() || p.isAzure() {
			p.maxBatch = 2048
		}
	}
	return p
}

func (p *Provider) host() string {
	u, err := url.Parse(p.baseURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func (p *Provider) isOpenAI() bool { return p.host() == "api.openai.com" }

func (p *Provider) isAzure() bool {
	h := p.host()
	return strings.HasSuffix(h, ".openai.azure.com") || strings.HasSuffix(h, ".cognitiveservices.azure.com")
}

// Models lists the configured models, learning unknown dimensions with one
// probe request per model.
func (p *Provider) Models(ctx context.Context) ([]embedder.Model, error) {
	if p.configErr != nil {
		return nil, p.configErr
	}
	if len(p.models) == 0 {
		return nil, fmt.Errorf("openai embedder: no models configured (with the plugin binary: set %sAPI_KEY for OpenAI, or %sBASE_URL and %sMODELS for another server): %w", p.envPrefix, p.envPrefix, p.envPrefix, plugins.ErrNotReady)
	}
	out := make([]embedder.Model, 0, len(p.models))
	for _, m := range p.models {
		dims, err := p.dimensions(ctx, m)
		if err != nil {
			return nil, err
		}
		maxTokens := m.MaxInputTokens
		if maxTokens == 0 {
			k, _ := known(m.remote())
			maxTokens = k.MaxInputTokens
		}
		out = append(out, embedder.Model{ID: m.ID, Dimensions: dims, MaxInputTokens: maxTokens, MaxBatch: p.maxBatch})
	}
	return out, nil
}

func (m Model) remote() string {
	if m.Name != "" {
		return m.Name
	}
	return m.ID
}

func (p *Provider) dimensions(ctx context.Context, m Model) (int, error) {
	if m.Dimensions > 0 {
		return m.Dimensions, nil
	}
	if k, ok := known(m.remote()); ok {
		return k.Dimensions, nil
	}
	p.mu.Lock()
	d, ok := p.probed[m.ID]
	p.mu.Unlock()
	if ok {
		return d, nil
	}
	vecs, err := p.request(ctx, m, []string{"dimension probe"}, 0)
	if err != nil {
		return 0, fmt.Errorf("openai embedder: model %q has no configured dimensions and probing them failed: %w", m.ID, err)
	}
	d = len(vecs[0])
	if d == 0 {
		return 0, fmt.Errorf("openai embedder: model %q: the server returned an empty vector", m.ID)
	}
	p.mu.Lock()
	p.probed[m.ID] = d
	p.mu.Unlock()
	return d, nil
}

func (p *Provider) model(id string) (Model, bool) {
	for _, m := range p.models {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// Embed embeds texts with the model, in as many requests as its limits need.
func (p *Provider) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	if p.configErr != nil {
		return nil, p.configErr
	}
	m, ok := p.model(model)
	if !ok {
		return nil, fmt.Errorf("openai embedder: %q: %w", model, embedder.ErrUnknownModel)
	}
	dims, err := p.dimensions(ctx, m)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); {
		end, size := start, 0
		for end < len(texts) && end-start < p.maxBatch && (end == start || size+len(texts[end]) <= p.maxBytes) {
			size += len(texts[end])
			end++
		}
		vecs, err := p.split(ctx, m, texts[start:end], dims)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
		start = end
	}
	return out, nil
}

// split sends texts in one request, and in two halves if the server finds
// the request too large.
func (p *Provider) split(ctx context.Context, m Model, texts []string, dims int) ([][]float32, error) {
	vecs, err := p.request(ctx, m, texts, dims)
	var tl *tooLarge
	if !errors.As(err, &tl) || len(texts) == 1 {
		return vecs, err
	}
	half := len(texts) / 2
	a, err := p.split(ctx, m, texts[:half], dims)
	if err != nil {
		return nil, err
	}
	b, err := p.split(ctx, m, texts[half:], dims)
	if err != nil {
		return nil, err
	}
	return append(a, b...), nil
}

type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type embeddingResponse struct {
	Data []struct {
		Index     int    `json:"index"`
		Embedding vector `json:"embedding"`
	} `json:"data"`
}

// vector is an embedding in either encoding: a JSON array of numbers, or a
// string with the base64 of little-endian float32s.
type vector []float32

func (v *vector) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		return json.Unmarshal(b, (*[]float32)(v))
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("embedding is a string but not base64: %w", err)
	}
	if len(raw)%4 != 0 {
		return fmt.Errorf("base64 embedding has %d bytes, not a whole number of float32s", len(raw))
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	*v = out
	return nil
}

// refusedBase64 marks a 400 that names the encoding: the request is sent
// again asking for floats.
type refusedBase64 struct{ err error }

func (e *refusedBase64) Error() string { return e.err.Error() }
func (e *refusedBase64) Unwrap() error { return e.err }

// apiError is OpenAI's error body; other servers send variations, so the
// raw body is the fallback.
type apiError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// tooLarge marks a 413 answer: the request is split and sent again.
type tooLarge struct{ err error }

func (e *tooLarge) Error() string { return e.err.Error() }
func (e *tooLarge) Unwrap() error { return e.err }

// request sends one embeddings request, retrying what is worth retrying.
// dims, when non-zero, is checked against every vector.
func (p *Provider) request(ctx context.Context, m Model, texts []string, dims int) ([][]float32, error) {
	endpoint, err := p.endpoint()
	if err != nil {
		return nil, err
	}
	encoding := p.encoding
	if p.floats.Load() {
		encoding = EncodingFloat
	}
	vecs, err := p.send(ctx, endpoint, m, texts, dims, encoding)
	var refused *refusedBase64
	if encoding == EncodingBase64 && errors.As(err, &refused) {
		// Servers that predate base64 (older vLLM, some llama.cpp builds)
		// answer 400; others ignore the field and send floats, which reads
		// as well.
		p.floats.Store(true)
		return p.send(ctx, endpoint, m, texts, dims, EncodingFloat)
	}
	return vecs, err
}

func (p *Provider) send(ctx context.Context, endpoint string, m Model, texts []string, dims int, encoding string) ([][]float32, error) {
	body := embeddingRequest{Model: m.remote(), Input: texts, EncodingFormat: encoding}
	if m.Shorten && m.Dimensions > 0 {
		body.Dimensions = m.Dimensions
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("openai embedder: encode request: %w", err)
	}
	return retry.Do(ctx, p.backoff, func() ([][]float32, time.Duration, error) {
		return p.once(ctx, endpoint, m, payload, len(texts), dims)
	})
}

func (p *Provider) endpoint() (string, error) {
	u, err := url.Parse(p.baseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("openai embedder: base URL %q is not an absolute URL: %w", p.baseURL, plugins.ErrNotReady)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/embeddings"
	return u.String(), nil
}

// once sends the request one time. retryAfter < 0 means "do not retry";
// 0 means "retry after the computed backoff"; > 0 is the server's wish.
func (p *Provider) once(ctx context.Context, endpoint string, m Model, payload []byte, n, dims int) (_ [][]float32, retryAfter time.Duration, _ error) {
	rctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, -1, fmt.Errorf("openai embedder: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.apiKey != "" {
		if p.isAzure() {
			req.Header.Set("api-key", p.apiKey)
		} else {
			req.Header.Set("Authorization", "Bearer "+p.apiKey)
		}
	}
	for _, h := range p.headers {
		req.Header.Set(h[0], h[1])
	}
	resp, err := p.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, -1, fmt.Errorf("openai embedder: POST %s: %w", endpoint, ctx.Err())
		}
		// Connection refused, reset, timed out: the server may come back.
		return nil, 0, fmt.Errorf("openai embedder: POST %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("openai embedder: POST %s: reading the answer: %w", endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		err := p.statusError(endpoint, m, resp, raw)
		if (resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity) && namesEncoding(raw) {
			return nil, -1, &refusedBase64{err} // not retried as is: request asks for floats
		}
		return nil, retryAfterOf(resp), err
	}
	var er embeddingResponse
	if err := json.Unmarshal(raw, &er); err != nil {
		return nil, -1, fmt.Errorf("openai embedder: POST %s: the answer is not an embeddings response: %w (%s)", endpoint, err, snippet(raw))
	}
	if len(er.Data) != n {
		return nil, -1, fmt.Errorf("openai embedder: model %q: %d embeddings for %d inputs", m.ID, len(er.Data), n)
	}
	vecs := make([][]float32, n)
	for _, d := range er.Data {
		// Order by index: the API does not promise the input order.
		if d.Index < 0 || d.Index >= n || vecs[d.Index] != nil {
			return nil, -1, fmt.Errorf("openai embedder: model %q: embedding index %d out of range or repeated", m.ID, d.Index)
		}
		if dims > 0 && len(d.Embedding) != dims {
			return nil, -1, fmt.Errorf("openai embedder: model %q returned %d dimensions, configured for %d (set its dimensions to what the server returns)", m.ID, len(d.Embedding), dims)
		}
		vecs[d.Index] = []float32(d.Embedding)
	}
	return vecs, 0, nil
}

// namesEncoding tells whether an error body is about the encoding asked
// for ("base64 encoding is not currently supported", "encoding_format must
// be float").
func namesEncoding(raw []byte) bool {
	b := bytes.ToLower(raw)
	return bytes.Contains(b, []byte("base64")) || bytes.Contains(b, []byte("encoding_format"))
}

// retryAfterOf reads when a 429 or 5xx may be retried; -1 for answers that
// will not change on retry.
func retryAfterOf(resp *http.Response) time.Duration {
	if !retry.Retryable(resp.StatusCode) {
		return -1
	}
	return retry.After(resp.Header, time.Now())
}

func (p *Provider) statusError(endpoint string, m Model, resp *http.Response, raw []byte) error {
	var ae apiError
	msg := snippet(raw)
	code := ""
	if json.Unmarshal(raw, &ae) == nil && ae.Error.Message != "" {
		msg = ae.Error.Message
		if ae.Error.Code != nil {
			code = fmt.Sprint(ae.Error.Code)
		}
	}
	detail := msg
	if code != "" {
		detail += " (" + code + ")"
	}
	base := fmt.Sprintf("openai embedder: model %q: POST %s: %s: %s", m.ID, endpoint, resp.Status, detail)
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%s; check the API key: %w", base, plugins.ErrUnauthenticated)
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s: %w", base, plugins.ErrPermissionDenied)
	case resp.StatusCode == http.StatusTooManyRequests:
		return fmt.Errorf("%s: %w", base, plugins.ErrRateLimited)
	case resp.StatusCode == http.StatusRequestEntityTooLarge:
		return &tooLarge{fmt.Errorf("%s: %w", base, plugins.ErrInvalidArgument)}
	case resp.StatusCode == http.StatusNotFound && (code == "model_not_found" || code == "DeploymentNotFound" || strings.Contains(strings.ToLower(msg), "model")):
		return fmt.Errorf("%s: %w", base, embedder.ErrUnknownModel)
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s; check the base URL (it usually ends in /v1): %w", base, plugins.ErrNotReady)
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity:
		return fmt.Errorf("%s: %w", base, plugins.ErrInvalidArgument)
	default:
		return errors.New(base)
	}
}

// snippet is the start of a body for an error message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

// Version is the provider's version: first-party providers ship with the SDK.
func (p *Provider) Version() string { return plugins.SDKVersion }
