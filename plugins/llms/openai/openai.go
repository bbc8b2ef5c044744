package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/internal/retry"
	"github.com/docindex/docindex/plugins/llm"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Model configures one model the provider offers.
type Model struct {
	// ID is the catalog id (and, unless Name is set, the model name sent).
	ID string `json:"id"`
	// Name is the model name the server knows, when it differs from ID ("llava:13b", an Azure
	// deployment's model).
	Name string `json:"name,omitempty"`
	// Vision says that the model accepts images.
	Vision bool `json:"vision,omitempty"`
	// ContextTokens is the model's context window; 0 = not stated.
	ContextTokens int `json:"contextTokens,omitempty"`
}

func (m Model) remote() string {
	if m.Name != "" {
		return m.Name
	}
	return m.ID
}

// StructuredOutput is how a request's Schema reaches the server.
type StructuredOutput string

const (
	// SchemaJSON sends the schema as response_format {"type":"json_schema"} with strict
	// adherence where the schema allows it (OpenAI, Azure, vLLM, Ollama, llama.cpp, LM Studio).
	SchemaJSON StructuredOutput = "json_schema"
	// SchemaJSONObject asks for {"type":"json_object"} and puts the schema into the
	// instructions, for servers that know JSON mode but not schemas.
	SchemaJSONObject StructuredOutput = "json_object"
	// SchemaPrompt only puts the schema into the instructions, for servers that know neither.
	SchemaPrompt StructuredOutput = "prompt"
)

// Option configures New.
type Option func(*Provider)

// WithBaseURL sets the API's base URL, up to and including the version
// ("http://localhost:11434/v1"). Query parameters (Azure's api-version) are kept on every
// request.
func WithBaseURL(u string) Option { return func(p *Provider) { p.baseURL = strings.TrimRight(u, "/") } }

// WithAPIKey sets the API key, sent as a bearer token (as the api-key header to Azure OpenAI
// hosts).
func WithAPIKey(key string) Option { return func(p *Provider) { p.apiKey = key } }

// WithModels sets the offered models.
func WithModels(models ...Model) Option {
	return func(p *Provider) { p.models = append(p.models, models...) }
}

// WithStructuredOutput sets how schemas are sent (default SchemaJSON).
func WithStructuredOutput(mode StructuredOutput) Option {
	return func(p *Provider) { p.structured = mode }
}

// WithMaxTokensParam names the request field that carries Request.MaxTokens: OpenAI's current
// "max_completion_tokens" (the default for OpenAI and Azure, and the only one its reasoning
// models accept) or the older "max_tokens" (the default for other servers, which all know it).
func WithMaxTokensParam(name string) Option { return func(p *Provider) { p.maxTokensParam = name } }

// WithImageDetail sets the detail of images ("low", "high" or "auto"; default: not sent, which
// OpenAI reads as auto). Low costs a fixed 85 tokens an image.
func WithImageDetail(detail string) Option { return func(p *Provider) { p.imageDetail = detail } }

// WithRetries sets how often a failed request is retried (default 5) and the first and the
// longest wait between attempts (default 1s and 60s). A Retry-After from the server replaces
// the computed wait.
func WithRetries(n int, first, longest time.Duration) Option {
	return func(p *Provider) { p.backoff = retry.Backoff{Retries: n, First: first, Longest: longest} }
}

// WithTimeout bounds each HTTP request (default 120s: long answers and images take time).
func WithTimeout(d time.Duration) Option { return func(p *Provider) { p.timeout = d } }

// WithHeader adds a header to every request (OpenAI-Organization, ...).
func WithHeader(key, value string) Option {
	return func(p *Provider) { p.headers = append(p.headers, [2]string{key, value}) }
}

// WithHTTPClient replaces the HTTP client.
func WithHTTPClient(c *http.Client) Option { return func(p *Provider) { p.client = c } }

// withConfigError makes every call fail with err: a plugin whose settings are wrong keeps
// running and says so, instead of dying in a restart loop.
func withConfigError(err error) Option { return func(p *Provider) { p.configErr = err } }

// Provider is the language-model provider for OpenAI-compatible chat-completions servers.
type Provider struct {
	baseURL        string
	apiKey         string
	models         []Model
	structured     StructuredOutput
	maxTokensParam string
	imageDetail    string
	backoff        retry.Backoff
	timeout        time.Duration
	headers        [][2]string
	client         *http.Client
	configErr      error
	envPrefix      string
}

var _ llm.LLM = (*Provider)(nil)

// New returns a provider.
func New(opts ...Option) *Provider {
	p := &Provider{
		baseURL:    DefaultBaseURL,
		structured: SchemaJSON,
		backoff:    retry.Backoff{Retries: 5, First: time.Second, Longest: 60 * time.Second},
		timeout:    120 * time.Second,
		client:     &http.Client{},
		envPrefix:  DefaultEnvPrefix,
	}
	for _, o := range opts {
		o(p)
	}
	if p.maxTokensParam == "" {
		p.maxTokensParam = "max_tokens"
		if p.isOpenAI() || p.isAzure() {
			p.maxTokensParam = "max_completion_tokens"
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

// Version is the provider's version: first-party providers ship with the SDK.
func (p *Provider) Version() string { return plugins.SDKVersion }

// Models lists the configured models. It makes no request: the chat-completions API does not
// say which models accept images, so the configuration does.
func (p *Provider) Models(context.Context) ([]llm.Model, error) {
	if p.configErr != nil {
		return nil, p.configErr
	}
	if len(p.models) == 0 {
		return nil, fmt.Errorf("openai llm: no models configured (with the plugin binary: set %sAPI_KEY for OpenAI, or %sBASE_URL and %sMODELS for another server): %w",
			p.envPrefix, p.envPrefix, p.envPrefix, plugins.ErrNotReady)
	}
	out := make([]llm.Model, len(p.models))
	for i, m := range p.models {
		out[i] = llm.Model{ID: m.ID, Vision: m.Vision, ContextTokens: m.ContextTokens}
	}
	return out, nil
}

func (p *Provider) model(id string) (Model, bool) {
	for _, m := range p.models {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// Complete asks the model for one completion through POST {base}/chat/completions.
//
// Images go as image_url content parts holding data: URLs. A Schema goes as
// response_format json_schema; OpenAI's strict mode needs every object to list all its
// properties as required and to forbid others, so optional properties are sent as required
// and nullable, and the nulls the model fills in for them are removed from the answer, which
// thus satisfies the schema as given. A schema that cannot be made strict (free-form objects,
// keywords strict mode lacks) is sent with strict false.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if p.configErr != nil {
		return nil, p.configErr
	}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("openai llm: %w", err)
	}
	m, ok := p.model(req.Model)
	if !ok {
		return nil, fmt.Errorf("openai llm: %q: %w", req.Model, llm.ErrUnknownModel)
	}
	if req.HasImages() && !m.Vision {
		return nil, fmt.Errorf("openai llm: model %q does not accept images (declare vision models in %sVISION_MODELS): %w", m.ID, p.envPrefix, plugins.ErrInvalidArgument)
	}
	body, plan, err := p.body(m, req)
	if err != nil {
		return nil, err
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("openai llm: encode request: %w", err)
	}
	endpoint, err := p.endpoint()
	if err != nil {
		return nil, err
	}
	cr, err := p.send(ctx, endpoint, m, payload)
	if err != nil {
		return nil, err
	}
	return p.answer(m, cr, plan)
}

func (p *Provider) endpoint() (string, error) {
	u, err := url.Parse(p.baseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("openai llm: base URL %q is not an absolute URL: %w", p.baseURL, plugins.ErrNotReady)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions"
	return u.String(), nil
}

// The request body, in OpenAI's published shapes.

type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a string, or an array of content parts when the message has images.
	Content any `json:"content"`
}

type contentPart struct {
	Type     string    `json:"type"` // "text" or "image_url"
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type responseFormat struct {
	Type       string      `json:"type"` // "json_schema" or "json_object"
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// plan is what answer needs to know of how the request was built.
type plan struct {
	schema  json.RawMessage // the caller's schema; nil without one
	relaxed bool            // optional properties were sent as required and nullable
}

func (p *Provider) body(m Model, req llm.Request) (*chatRequest, plan, error) {
	body := &chatRequest{Model: m.remote(), Temperature: req.Temperature}
	if req.MaxTokens > 0 {
		if p.maxTokensParam == "max_tokens" {
			body.MaxTokens = req.MaxTokens
		} else {
			body.MaxCompletionTokens = req.MaxTokens
		}
	}
	var pl plan
	if len(req.Schema) > 0 {
		pl.schema = req.Schema
		switch p.structured {
		case SchemaJSONObject, SchemaPrompt:
			body.Messages = append(body.Messages, chatMessage{Role: "system", Content: schemaInstruction(req.Schema)})
			if p.structured == SchemaJSONObject {
				body.ResponseFormat = &responseFormat{Type: "json_object"}
			}
		default:
			js := &jsonSchema{Name: schemaName(req.SchemaName), Schema: req.Schema}
			if strict, relaxed, ok := strictSchema(req.Schema); ok {
				js.Schema, js.Strict, pl.relaxed = strict, true, relaxed
			}
			body.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: js}
		}
	}
	for i, msg := range req.Messages {
		if len(msg.Images) == 0 {
			body.Messages = append(body.Messages, chatMessage{Role: msg.Role, Content: msg.Content})
			continue
		}
		parts := make([]contentPart, 0, len(msg.Images)+1)
		if msg.Content != "" {
			parts = append(parts, contentPart{Type: "text", Text: msg.Content})
		}
		for j, img := range msg.Images {
			ct := img.ContentType
			if ct == "" {
				ct = http.DetectContentType(img.Data)
				if !strings.HasPrefix(ct, "image/") {
					return nil, pl, fmt.Errorf("openai llm: message %d, image %d: no content type given and the data is not a recognisable image (%s): %w", i, j, ct, plugins.ErrInvalidArgument)
				}
			}
			parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{
				URL:    "data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(img.Data),
				Detail: p.imageDetail,
			}})
		}
		body.Messages = append(body.Messages, chatMessage{Role: msg.Role, Content: parts})
	}
	return body, pl, nil
}

// schemaInstruction tells a model without schema support what to answer.
func schemaInstruction(schema json.RawMessage) string {
	return "Answer with one JSON object, and nothing else, that satisfies this JSON Schema:\n" + string(schema)
}

// schemaName makes name acceptable as json_schema.name: a-z, A-Z, 0-9, '_' and '-', at most
// 64 characters.
func schemaName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() == 64 {
			break
		}
	}
	if strings.Trim(b.String(), "_") == "" {
		return "response"
	}
	return b.String()
}
