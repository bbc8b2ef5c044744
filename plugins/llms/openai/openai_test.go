package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/llm"
	"github.com/docindex/docindex/plugins/llms/openai"
	"github.com/docindex/docindex/plugins/llms/openai/openaitest"
	"github.com/docindex/docindex/plugins/plugintest"
)

func fastRetries() openai.Option {
	return openai.WithRetries(3, 5*time.Millisecond, 20*time.Millisecond)
}

// provider returns a provider for f with its two models: "mini" (gpt-4o-mini, vision) and
// gpt-3.5-turbo.
func provider(f *openaitest.Server, opts ...openai.Option) *openai.Provider {
	base := []openai.Option{openai.WithBaseURL(f.BaseURL()), openai.WithAPIKey(f.Key()), fastRetries(),
		openai.WithModels(openai.Model{ID: "mini", Name: "gpt-4o-mini", Vision: true, ContextTokens: 128000}, openai.Model{ID: "gpt-3.5-turbo"})}
	return openai.New(append(base, opts...)...)
}

func user(text string, images ...llm.Image) []llm.Message {
	return []llm.Message{{Role: "user", Content: text, Images: images}}
}

func pngImage(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, h/2, color.RGBA{R: 200, A: 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// body decodes a request body received by the server into generic JSON.
func body(t *testing.T, r *openaitest.Request) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	return m
}

func TestConformance(t *testing.T) {
	f := openaitest.New(t)
	plugintest.RunLLMSuite(t, plugintest.StartLLM(t, provider(f)))
}

func TestRequestShapes(t *testing.T) {
	f := openaitest.New(t)
	p := provider(f)
	pic := pngImage(t, 600, 40)
	temp := 0.2
	resp, err := p.Complete(context.Background(), llm.Request{Model: "mini", MaxTokens: 200, Temperature: &temp, Messages: []llm.Message{
		{Role: "system", Content: "Describe images."},
		{Role: "user", Content: "What is this?", Images: []llm.Image{{ContentType: "image/png", Data: pic}, {Data: pic}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Model != "gpt-4o-mini" || r.Header.Get("Authorization") != "Bearer sk-test" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("model %q, headers %v", r.Model, r.Header)
	}
	if r.MaxTokens == nil || *r.MaxTokens != 200 || r.MaxCompletionTokens != nil || r.Temperature == nil || *r.Temperature != 0.2 {
		t.Errorf("limits: max_tokens %v, max_completion_tokens %v, temperature %v", r.MaxTokens, r.MaxCompletionTokens, r.Temperature)
	}
	if r.ResponseFormat != nil {
		t.Errorf("response_format sent without a schema: %+v", r.ResponseFormat)
	}
	sys, usr := r.Messages[0], r.Messages[1]
	if sys.Role != "system" || sys.Parts || sys.Text != "Describe images." {
		t.Errorf("a message without images goes as a plain string: %+v", sys)
	}
	if usr.Role != "user" || !usr.Parts || usr.Text != "What is this?" || len(usr.Images) != 2 {
		t.Fatalf("user message: %+v", usr)
	}
	for i, img := range usr.Images {
		if img.MediaType != "image/png" || !bytes.Equal(img.Data, pic) || img.Width != 600 || img.Height != 40 || img.Detail != "" {
			t.Errorf("image %d arrived as %s %dx%d detail %q (%d bytes)", i, img.MediaType, img.Width, img.Height, img.Detail, len(img.Data))
		}
	}
	// The exact JSON of the content parts: the text part first, then image_url parts.
	parts := body(t, r)["messages"].([]any)[1].(map[string]any)["content"].([]any)
	if p0 := parts[0].(map[string]any); p0["type"] != "text" || p0["text"] != "What is this?" {
		t.Errorf("first part = %v", p0)
	}
	if p1 := parts[1].(map[string]any); p1["type"] != "image_url" || !strings.HasPrefix(p1["image_url"].(map[string]any)["url"].(string), "data:image/png;base64,iVBOR") {
		t.Errorf("second part = %.120v", p1)
	}
	// 600x40 at auto detail: two 512-pixel tiles.
	wantIn := 4 + 2 + 4 + 3 + 2*(85+2*170)
	if resp.InputTokens != wantIn || resp.OutputTokens != openaitest.Tokens(resp.Content) || resp.FinishReason != "stop" {
		t.Errorf("usage %d in (want %d), %d out; finish %q", resp.InputTokens, wantIn, resp.OutputTokens, resp.FinishReason)
	}
	if !strings.Contains(resp.Content, "You sent 2 image(s): image/png 600x40, image/png 600x40") {
		t.Errorf("answer = %q", resp.Content)
	}
}

const building = `{
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "year": {"type": "integer"},
    "architect": {"type": "string"},
    "style": {"enum": ["gothic", "modern"]},
    "floors": {"type": "array", "items": {"type": "object", "properties": {"level": {"type": "integer"}, "use": {"type": "string"}}, "required": ["level"]}},
    "owner": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
  },
  "required": ["name", "year"]
}`

func validate(t *testing.T, schema, doc string) error {
	t.Helper()
	s, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("s.json", s); err != nil {
		t.Fatal(err)
	}
	compiled, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		return err
	}
	return compiled.Validate(v)
}

// TestSchemaMadeStrict sends a schema with optional properties: the server (which applies
// OpenAI's strict rules) must accept it, and the nulls the model gives for optional
// properties must not reach the caller, whose schema does not allow them.
func TestSchemaMadeStrict(t *testing.T) {
	answer := `{"name":"Tower","year":1889,"architect":null,"style":null,"floors":[{"level":1,"use":null}],"owner":null}`
	f := openaitest.New(t, openaitest.WithAnswer(func(*openaitest.Request) openaitest.Answer { return openaitest.Answer{Content: answer} }))
	p := provider(f)
	resp, err := p.Complete(context.Background(), llm.Request{Model: "gpt-3.5-turbo", Schema: json.RawMessage(building), SchemaName: "a building!", Messages: user("Extract.")})
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, building, resp.Content); err != nil {
		t.Errorf("answer %s does not satisfy the caller's schema: %v", resp.Content, err)
	}
	var got map[string]any
	_ = json.Unmarshal([]byte(resp.Content), &got)
	if len(got) != 3 || got["name"] != "Tower" || got["year"] != float64(1889) {
		t.Errorf("answer = %s", resp.Content)
	}
	if fl := got["floors"].([]any)[0].(map[string]any); len(fl) != 1 {
		t.Errorf("nested optional null kept: %v", fl)
	}

	rf := body(t, f.Requests()[0])["response_format"].(map[string]any)
	js := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["name"] != "a_building_" || js["strict"] != true {
		t.Errorf("response_format = %v", rf)
	}
	sent := js["schema"].(map[string]any)
	if sent["additionalProperties"] != false || len(sent["required"].([]any)) != 6 {
		t.Errorf("sent schema = %v", sent)
	}
	props := sent["properties"].(map[string]any)
	if typ := props["architect"].(map[string]any)["type"]; typ == nil || len(typ.([]any)) != 2 {
		t.Errorf("optional architect sent as %v", props["architect"])
	}
	if enum := props["style"].(map[string]any)["enum"].([]any); len(enum) != 3 || enum[2] != nil {
		t.Errorf("optional enum sent as %v", enum)
	}
	if owner := props["owner"].(map[string]any)["anyOf"].([]any); len(owner) != 2 && len(owner) != 3 {
		t.Errorf("optional anyOf sent as %v", owner)
	}

	// The default answer of the server is generated from the (strict) schema it got.
	f2 := openaitest.New(t)
	resp, err = provider(f2).Complete(context.Background(), llm.Request{Model: "gpt-3.5-turbo", Schema: json.RawMessage(building), Messages: user("Extract.")})
	if err != nil || validate(t, building, resp.Content) != nil {
		t.Errorf("generated answer %s: %v", resp.Content, err)
	}
	if js := body(t, f2.Requests()[0])["response_format"].(map[string]any)["json_schema"].(map[string]any); js["name"] != "response" {
		t.Errorf("default schema name = %v", js["name"])
	}
}

func TestSchemaThatCannotBeStrict(t *testing.T) {
	schema := `{"type":"object","properties":{"tags":{"type":"object","additionalProperties":{"type":"string"}}},"required":["tags"]}`
	f := openaitest.New(t, openaitest.WithAnswer(func(*openaitest.Request) openaitest.Answer {
		return openaitest.Answer{Content: `{"tags":{"a":"b"}}`}
	}))
	resp, err := provider(f).Complete(context.Background(), llm.Request{Model: "mini", Schema: json.RawMessage(schema), Messages: user("Tag it.")})
	if err != nil || resp.Content != `{"tags":{"a":"b"}}` {
		t.Fatalf("%+v %v", resp, err)
	}
	js := body(t, f.Requests()[0])["response_format"].(map[string]any)["json_schema"].(map[string]any)
	sent, _ := json.Marshal(js["schema"])
	if js["strict"] != false || !strings.Contains(string(sent), `"additionalProperties":{"type":"string"}`) {
		t.Errorf("sent %v", js)
	}
}

func TestOtherStructuredOutputModes(t *testing.T) {
	schema := `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`
	f := openaitest.New(t, openaitest.WithAnswer(func(*openaitest.Request) openaitest.Answer {
		return openaitest.Answer{Content: "Sure! Here it is:\n```json\n{\"n\": 7}\n```\nAnything else?"}
	}))
	for _, mode := range []openai.StructuredOutput{openai.SchemaJSONObject, openai.SchemaPrompt} {
		resp, err := provider(f, openai.WithStructuredOutput(mode)).Complete(context.Background(), llm.Request{Model: "mini", Schema: json.RawMessage(schema), Messages: user("Count.")})
		if err != nil || resp.Content != `{"n": 7}` {
			t.Errorf("%s: %+v %v", mode, resp, err)
			continue
		}
		reqs := f.Requests()
		r := reqs[len(reqs)-1]
		if m := r.Messages[0]; m.Role != "system" || !strings.Contains(m.Text, `"n":{"type":"integer"}`) {
			t.Errorf("%s: the schema is not in the instructions: %+v", mode, r.Messages)
		}
		switch {
		case mode == openai.SchemaJSONObject && (r.ResponseFormat == nil || r.ResponseFormat.Type != "json_object"):
			t.Errorf("json_object mode sent %+v", r.ResponseFormat)
		case mode == openai.SchemaPrompt && r.ResponseFormat != nil:
			t.Errorf("prompt mode sent %+v", r.ResponseFormat)
		}
	}

	f = openaitest.New(t, openaitest.WithAnswer(func(*openaitest.Request) openaitest.Answer { return openaitest.Answer{Content: "I'd rather not."} }))
	_, err := provider(f, openai.WithStructuredOutput(openai.SchemaPrompt)).Complete(context.Background(), llm.Request{Model: "mini", Schema: json.RawMessage(schema), Messages: user("Count.")})
	if err == nil || !strings.Contains(err.Error(), "asked for JSON") || !strings.Contains(err.Error(), "I'd rather not.") {
		t.Errorf("prose instead of JSON: %v", err)
	}
}

func TestRefusalAndLength(t *testing.T) {
	f := openaitest.New(t, openaitest.WithAnswer(func(r *openaitest.Request) openaitest.Answer {
		if strings.Contains(r.Messages[0].Text, "weapon") {
			return openaitest.Answer{Refusal: "I'm sorry, I cannot help with that request."}
		}
		return openaitest.Answer{Content: `{"n": 1, "text": "a long answer that goes on and on and on"}`}
	}))
	p := provider(f)
	_, err := p.Complete(context.Background(), llm.Request{Model: "mini", Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`), Messages: user("Build a weapon.")})
	if !errors.Is(err, plugins.ErrInvalidArgument) || !strings.Contains(err.Error(), "refused: I'm sorry") {
		t.Errorf("refusal: %v", err)
	}
	// A cut answer is returned as it is, even under a schema: the caller sees "length".
	resp, err := p.Complete(context.Background(), llm.Request{Model: "mini", MaxTokens: 3, Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`), Messages: user("Count.")})
	if err != nil || resp.FinishReason != "length" || resp.OutputTokens != 3 || resp.Content != `{"n": 1, "text":` {
		t.Errorf("cut answer: %+v %v", resp, err)
	}
}

func TestImagesNeedAVisionModel(t *testing.T) {
	f := openaitest.New(t)
	p := provider(f)
	_, err := p.Complete(context.Background(), llm.Request{Model: "gpt-3.5-turbo", Messages: user("Look", llm.Image{ContentType: "image/png", Data: pngImage(t, 4, 4)})})
	if !errors.Is(err, plugins.ErrInvalidArgument) || !strings.Contains(err.Error(), "VISION_MODELS") {
		t.Errorf("image for a text model: %v", err)
	}
	_, err = p.Complete(context.Background(), llm.Request{Model: "mini", Messages: user("Look", llm.Image{Data: []byte("not an image at all")})})
	if !errors.Is(err, plugins.ErrInvalidArgument) || !strings.Contains(err.Error(), "not a recognisable image") {
		t.Errorf("unrecognisable image: %v", err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("%d requests sent for requests that cannot succeed", n)
	}
	// A model the configuration calls vision but the server does not: the server's refusal.
	p = openai.New(openai.WithBaseURL(f.BaseURL()), openai.WithAPIKey(f.Key()), openai.WithModels(openai.Model{ID: "gpt-3.5-turbo", Vision: true}))
	_, err = p.Complete(context.Background(), llm.Request{Model: "gpt-3.5-turbo", Messages: user("Look", llm.Image{Data: pngImage(t, 4, 4)})})
	if !errors.Is(err, plugins.ErrInvalidArgument) || !strings.Contains(err.Error(), "image_url is only supported by certain models") || !strings.Contains(err.Error(), "400") {
		t.Errorf("server refusing images: %v", err)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	f := openaitest.New(t)
	r := openaitest.ErrorReply(429, "requests", "rate_limit_exceeded", "Rate limit reached for gpt-4o-mini.")
	r.Header = map[string]string{"Retry-After": "1"}
	f.Push(r)
	p := provider(f)
	start := time.Now()
	if _, err := p.Complete(context.Background(), llm.Request{Model: "mini", Messages: user("Hi")}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second || d > 5*time.Second {
		t.Errorf("retried after %v, want about 1s", d)
	}
	if n := len(f.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	// Retry-After-Ms, where sent, is the more precise.
	f.Push(openaitest.Reply{Status: 503, Header: map[string]string{"Retry-After": "30", "Retry-After-Ms": "150"}, Body: `{}`})
	start = time.Now()
	if _, err := p.Complete(context.Background(), llm.Request{Model: "mini", Messages: user("Hi")}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 5*time.Second {
		t.Errorf("retried after %v, want about 150ms", d)
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	f := openaitest.New(t)
	f.Push(openaitest.ErrorReply(500, "server_error", "", "The server had an error while processing your request."),
		openaitest.Reply{Status: 502, Body: "<html>Bad Gateway</html>"},
		openaitest.ErrorReply(503, "server_error", "", "The engine is currently overloaded."))
	if _, err := provider(f).Complete(context.Background(), llm.Request{Model: "mini", Messages: user("Hi")}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Requests()); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}

func TestGivingUpSaysWhy(t *testing.T) {
	f := openaitest.New(t)
	for range 4 {
		f.Push(openaitest.ErrorReply(503, "server_error", "", "The engine is currently overloaded."))
	}
	p := provider(f)
	_, err := p.Complete(context.Background(), llm.Request{Model: "mini", Messages: user("Hi")})
	for _, want := range []string{"503", "The engine is currently overloaded.", "gave up after 4 attempts", `"mini"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	for range 4 {
		f.Push(openaitest.ErrorReply(429, "requests", "rate_limit_exceeded", "Rate limit reached for requests"))
	}
	_, err = p.Complete(context.Background(), llm.Request{Model: "mini", Messages: user("Hi")})
	if !errors.Is(err, plugins.ErrRateLimited) || !strings.Contains(err.Error(), "rate_limit_exceeded") {
		t.Errorf("persistent 429: %v", err)
	}
	// An exhausted quota is not waited for.
	before := len(f.Requests())
	f.Push(openaitest.ErrorReply(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details."))
	_, err = p.Complete(context.Background(), llm.Request{Model: "mini", Messages: user("Hi")})
	if !errors.Is(err, plugins.ErrRateLimited) || !strings.Contains(err.Error(), "exceeded your current quota") || len(f.Requests()) != before+1 {
		t.Errorf("insufficient quota: %v after %d requests", err, len(f.Requests())-before)
	}
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	f := openaitest.New(t)
	p := openai.New(openai.WithBaseURL(f.BaseURL()), openai.WithAPIKey("sk-wrong"), fastRetries(), openai.WithModels(openai.Model{ID: "gpt-3.5-turbo"}))
	_, err := p.Complete(context.Background(), llm.Request{Model: "gpt-3.5-turbo", Messages: user("Hi")})
	if !errors.Is(err, plugins.ErrUnauthenticated) || !strings.Contains(err.Error(), "Incorrect API key provided") || len(f.Requests()) != 1 {
		t.Errorf("bad key: %v after %d requests", err, len(f.Requests()))
	}

	p = openai.New(openai.WithBaseURL(f.BaseURL()), openai.WithAPIKey(f.Key()), fastRetries(), openai.WithModels(openai.Model{ID: "gpt-9"}))
	_, err = p.Complete(context.Background(), llm.Request{Model: "gpt-9", Messages: user("Hi")})
	if !errors.Is(err, llm.ErrUnknownModel) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("model the server does not know: %v", err)
	}
	_, err = p.Complete(context.Background(), llm.Request{Model: "never-configured", Messages: user("Hi")})
	if !errors.Is(err, llm.ErrUnknownModel) {
		t.Errorf("model not configured: %v", err)
	}

	p = provider(f)
	temp := 3.5
	n := len(f.Requests())
	_, err = p.Complete(context.Background(), llm.Request{Model: "mini", Temperature: &temp, Messages: user("Hi")})
	if !errors.Is(err, plugins.ErrInvalidArgument) || !strings.Contains(err.Error(), "maximum of 2") || len(f.Requests()) != n+1 {
		t.Errorf("temperature the server refuses: %v", err)
	}

	p = openai.New(openai.WithBaseURL(f.URL), openai.WithAPIKey(f.Key()), openai.WithModels(openai.Model{ID: "gpt-3.5-turbo"})) // no /v1
	_, err = p.Complete(context.Background(), llm.Request{Model: "gpt-3.5-turbo", Messages: user("Hi")})
	if !errors.Is(err, plugins.ErrNotReady) || !strings.Contains(err.Error(), "base URL") {
		t.Errorf("wrong base URL: %v", err)
	}

	f.Push(openaitest.Reply{Status: 200, Body: `{"object":"chat.completion","choices":[]}`})
	_, err = provider(f).Complete(context.Background(), llm.Request{Model: "mini", Messages: user("Hi")})
	if err == nil || !strings.Contains(err.Error(), "no choices") {
		t.Errorf("empty choices: %v", err)
	}
}

func TestNetworkErrorsAreRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more: connection refused
	p := openai.New(openai.WithBaseURL("http://"+addr+"/v1"), openai.WithAPIKey("k"), fastRetries(), openai.WithModels(openai.Model{ID: "m"}))
	_, err = p.Complete(context.Background(), llm.Request{Model: "m", Messages: user("Hi")})
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "gave up after 4 attempts") {
		t.Errorf("unreachable server: %v", err)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	f := openaitest.New(t)
	f.Push(openaitest.Reply{Status: 429, Header: map[string]string{"Retry-After": "30"}, Body: `{}`})
	p := provider(f)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err := p.Complete(ctx, llm.Request{Model: "mini", Messages: user("Hi")})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("cancelled while waiting 30s: %v after %v", err, time.Since(start))
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	f.Push(openaitest.Reply{Status: 429, Header: map[string]string{"Retry-After": "30"}, Body: `{}`})
	start = time.Now()
	if _, err = p.Complete(ctx, llm.Request{Model: "mini", Messages: user("Hi")}); err == nil || !strings.Contains(err.Error(), "deadline") || time.Since(start) > 500*time.Millisecond {
		t.Errorf("a retry past the deadline should fail at once: %v after %v", err, time.Since(start))
	}
}

// redirect returns an HTTP client that dials f whatever the host name, to test what the
// provider does for OpenAI's and Azure's hosts.
func redirect(f *openaitest.Server) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, f.Listener.Addr().String())
	}}}
}

func TestOpenAIAndAzureHosts(t *testing.T) {
	f := openaitest.New(t)
	p := openai.New(openai.WithHTTPClient(redirect(f)), openai.WithAPIKey(f.Key()), openai.WithBaseURL("http://api.openai.com/v1"),
		openai.WithModels(openai.Model{ID: "gpt-4o-mini"}))
	if _, err := p.Complete(context.Background(), llm.Request{Model: "gpt-4o-mini", MaxTokens: 50, Messages: user("Hi")}); err != nil {
		t.Fatal(err)
	}
	r := f.Requests()[0]
	if r.MaxCompletionTokens == nil || *r.MaxCompletionTokens != 50 || r.MaxTokens != nil {
		t.Errorf("OpenAI: max_tokens %v, max_completion_tokens %v", r.MaxTokens, r.MaxCompletionTokens)
	}

	// Azure's deployment URLs end in /chat/completions; the test server only serves OpenAI's
	// path, so the deployment's base stands in with /v1.
	p = openai.New(openai.WithHTTPClient(redirect(f)), openai.WithAPIKey(f.Key()),
		openai.WithBaseURL("http://myres.openai.azure.com/v1?api-version=2024-10-21"),
		openai.WithModels(openai.Model{ID: "gpt-4o-mini"}), openai.WithHeader("X-Trace", "abc"))
	if _, err := p.Complete(context.Background(), llm.Request{Model: "gpt-4o-mini", MaxTokens: 50, Messages: user("Hi")}); err != nil {
		t.Fatal(err)
	}
	r = f.Requests()[1]
	if r.Header.Get("api-key") != f.Key() || r.Header.Get("Authorization") != "" || r.Header.Get("X-Trace") != "abc" || r.MaxCompletionTokens == nil {
		t.Errorf("Azure: headers %v", r.Header)
	}

	// An explicit choice wins.
	p = provider(f, openai.WithMaxTokensParam("max_completion_tokens"), openai.WithImageDetail("low"))
	if _, err := p.Complete(context.Background(), llm.Request{Model: "mini", MaxTokens: 9, Messages: user("Look", llm.Image{Data: pngImage(t, 2, 2)})}); err != nil {
		t.Fatal(err)
	}
	r = f.Requests()[2]
	if r.MaxCompletionTokens == nil || *r.MaxCompletionTokens != 9 || r.Messages[0].Images[0].Detail != "low" {
		t.Errorf("explicit options: %+v", r)
	}
}

func TestNotConfigured(t *testing.T) {
	_, err := openai.New().Models(context.Background())
	if !errors.Is(err, plugins.ErrNotReady) || !strings.Contains(err.Error(), "DOCINDEX_LLM_OPENAI_API_KEY") {
		t.Errorf("unconfigured: %v", err)
	}
	f := openaitest.New(t)
	models, err := provider(f).Models(context.Background())
	if err != nil || len(models) != 2 || models[0] != (llm.Model{ID: "mini", Vision: true, ContextTokens: 128000}) || models[1] != (llm.Model{ID: "gpt-3.5-turbo"}) {
		t.Errorf("models = %+v, %v", models, err)
	}
	if len(f.Requests()) != 0 {
		t.Error("Models made a request")
	}
}
