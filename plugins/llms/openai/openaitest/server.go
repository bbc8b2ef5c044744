package openaitest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif" // image types OpenAI accepts and the standard library decodes
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is an HTTP server that answers POST /v1/chat/completions in the shapes OpenAI
// publishes: the request body (messages with string or content-part content, image_url parts
// with data: URLs, response_format text, json_object or json_schema with strict schemas,
// max_tokens and max_completion_tokens, temperature), the chat.completion object with its
// choices, refusal and usage, and the error object with its status codes. It validates
// requests as OpenAI does where the tests can tell (unknown models, images for models without
// vision, schemas strict mode rejects, the word "json" for JSON mode) and answers with
// something that fits them: a document that satisfies the schema, or text that says what it
// was sent.
type Server struct {
	*httptest.Server
	key    string
	models map[string]bool // name -> vision
	answer func(*Request) Answer

	mu       sync.Mutex
	script   []Reply
	requests []*Request
	seq      int
}

// Option configures New.
type Option func(*Server)

// WithKey sets the API key the server accepts (default "sk-test"), as a bearer token or an
// api-key header.
func WithKey(key string) Option { return func(s *Server) { s.key = key } }

// WithModel adds a model the server knows. Without any, it knows "gpt-4o-mini" (vision) and
// "gpt-3.5-turbo" (text only).
func WithModel(name string, vision bool) Option {
	return func(s *Server) {
		if s.models == nil {
			s.models = map[string]bool{}
		}
		s.models[name] = vision
	}
}

// WithAnswer sets how the server answers a valid request (default DefaultAnswer). The server
// cuts the content to the request's token limit and counts the usage itself.
func WithAnswer(f func(*Request) Answer) Option { return func(s *Server) { s.answer = f } }

// New starts a server on loopback; it stops when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	s := &Server{key: "sk-test", answer: DefaultAnswer}
	for _, o := range opts {
		o(s)
	}
	if s.models == nil {
		s.models = map[string]bool{"gpt-4o-mini": true, "gpt-3.5-turbo": false}
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the server's API base, ending in /v1 as OpenAI's does.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Key is the API key the server accepts.
func (s *Server) Key() string { return s.key }

// Reply is a scripted HTTP answer.
type Reply struct {
	Status int
	Header map[string]string
	Body   string
}

// ErrorReply is an error in OpenAI's shape: {"error": {"message", "type", "param", "code"}}.
func ErrorReply(status int, typ, code, msg string) Reply {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	body, _ := json.Marshal(map[string]any{"error": e})
	return Reply{Status: status, Body: string(body)}
}

// Push queues replies that the next requests get instead of the normal answer, in order.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	s.script = append(s.script, r...)
	s.mu.Unlock()
}

// Requests returns every request received so far, valid or not, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Request is a chat-completions request as the server decoded it.
type Request struct {
	Header http.Header
	Body   []byte // as received

	Model               string
	Messages            []Message
	ResponseFormat      *ResponseFormat
	MaxTokens           *int
	MaxCompletionTokens *int
	Temperature         *float64
}

// Message is one message of a request.
type Message struct {
	Role string
	// Parts says that the content came as an array of content parts.
	Parts bool
	// Text is the text of the message (its text parts, joined by newlines).
	Text   string
	Images []Image
}

// Image is an image_url part, decoded from its data: URL.
type Image struct {
	MediaType     string // from the data: URL
	Data          []byte
	Detail        string
	Width, Height int // 0 for types the server does not decode (webp)
}

// ResponseFormat is the request's response_format.
type ResponseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict"`
	} `json:"json_schema,omitempty"`
}

// Answer is what the model says.
type Answer struct {
	Content string
	// Refusal, when set, is sent instead of content (structured outputs' refusals).
	Refusal string
	// FinishReason defaults to "stop", or "length" when the server cut the content.
	FinishReason string
}

// wire shapes of the request

type wireRequest struct {
	Model               *string         `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	ResponseFormat      *ResponseFormat `json:"response_format"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	Stream              bool            `json:"stream"`
	N                   *int            `json:"n"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

// failure is a 4xx answer in OpenAI's shape.
type failure struct {
	status         int
	typ, code, msg string
	param          string
}

func invalid(param, msg string) *failure {
	return &failure{status: http.StatusBadRequest, typ: "invalid_request_error", param: param, msg: msg}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var body bytes.Buffer
	_, _ = body.ReadFrom(r.Body)
	req := &Request{Header: r.Header.Clone(), Body: body.Bytes()}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.seq++
	seq := s.seq
	var scripted *Reply
	if len(s.script) > 0 {
		scripted = &s.script[0]
		s.script = s.script[1:]
	}
	s.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", fmt.Sprintf("req_%d", seq))
	if scripted != nil {
		for k, v := range scripted.Header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(scripted.Status)
		_, _ = w.Write([]byte(scripted.Body))
		return
	}
	resp, f := s.handle(r, req)
	if f != nil {
		e := map[string]any{"message": f.msg, "type": f.typ, "param": nil, "code": nil}
		if f.param != "" {
			e["param"] = f.param
		}
		if f.code != "" {
			e["code"] = f.code
		}
		w.WriteHeader(f.status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
		return
	}
	resp["id"] = fmt.Sprintf("chatcmpl-docindex%06d", seq)
	_ = json.NewEncoder(w).Encode(resp)
}

var schemaNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func (s *Server) handle(r *http.Request, req *Request) (map[string]any, *failure) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		return nil, &failure{status: http.StatusNotFound, typ: "invalid_request_error", msg: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)}
	}
	if r.Header.Get("Authorization") != "Bearer "+s.key && r.Header.Get("api-key") != s.key {
		return nil, &failure{status: http.StatusUnauthorized, typ: "invalid_request_error", code: "invalid_api_key",
			msg: "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."}
	}
	var wr wireRequest
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(req.Body, &wr) != nil {
		return nil, invalid("", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)")
	}
	if wr.Model == nil || *wr.Model == "" {
		return nil, invalid("", "you must provide a model parameter")
	}
	req.Model, req.ResponseFormat = *wr.Model, wr.ResponseFormat
	req.MaxTokens, req.MaxCompletionTokens, req.Temperature = wr.MaxTokens, wr.MaxCompletionTokens, wr.Temperature
	vision, known := s.models[req.Model]
	if !known {
		return nil, &failure{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found",
			msg: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model)}
	}
	if wr.Stream {
		return nil, invalid("stream", "This test server does not stream; send stream false.")
	}
	if wr.N != nil && *wr.N != 1 {
		return nil, invalid("n", "This test server answers one choice only.")
	}
	if len(wr.Messages) == 0 {
		return nil, invalid("messages", "[] is too short - 'messages'")
	}
	for i, wm := range wr.Messages {
		m, f := decodeMessage(i, wm, vision)
		if f != nil {
			return nil, f
		}
		req.Messages = append(req.Messages, m)
	}
	if t := wr.Temperature; t != nil && (*t < 0 || *t > 2) {
		return nil, invalid("temperature", fmt.Sprintf("%v is greater than the maximum of 2 - 'temperature'", *t))
	}
	for name, v := range map[string]*int{"max_tokens": wr.MaxTokens, "max_completion_tokens": wr.MaxCompletionTokens} {
		if v != nil && *v < 1 {
			return nil, invalid(name, fmt.Sprintf("Invalid '%s': integer below minimum value. Expected a value >= 1, but got %d instead.", name, *v))
		}
	}
	if f := checkFormat(req); f != nil {
		return nil, f
	}

	a := s.answer(req)
	limit := 0
	if wr.MaxCompletionTokens != nil {
		limit = *wr.MaxCompletionTokens
	} else if wr.MaxTokens != nil {
		limit = *wr.MaxTokens
	}
	content, finish := a.Content, a.FinishReason
	if limit > 0 && Tokens(content) > limit {
		content, finish = cut(content, limit), "length"
	}
	if finish == "" {
		finish = "stop"
	}
	message := map[string]any{"role": "assistant", "content": content, "refusal": nil, "annotations": []any{}}
	completion := Tokens(content)
	if a.Refusal != "" {
		message["content"], message["refusal"] = nil, a.Refusal
		completion = Tokens(a.Refusal)
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += 4 + Tokens(m.Text)
		for _, img := range m.Images {
			prompt += imageTokens(img)
		}
	}
	return map[string]any{
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   req.Model,
		"choices": []any{map[string]any{"index": 0, "message": message, "logprobs": nil, "finish_reason": finish}},
		"usage": map[string]any{
			"prompt_tokens":     prompt,
			"completion_tokens": completion,
			"total_tokens":      prompt + completion,
			"prompt_tokens_details": map[string]int{
				"cached_tokens": 0, "audio_tokens": 0,
			},
			"completion_tokens_details": map[string]int{
				"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0,
			},
		},
		"service_tier":       "default",
		"system_fingerprint": "fp_docindex",
	}, nil
}

func decodeMessage(i int, wm wireMessage, vision bool) (Message, *failure) {
	m := Message{Role: wm.Role}
	param := fmt.Sprintf("messages.[%d]", i)
	switch wm.Role {
	case "system", "developer", "user", "assistant", "tool":
	default:
		return m, invalid(param+".role", fmt.Sprintf("'%s' is not one of ['system', 'assistant', 'user', 'tool', 'function', 'developer'] - '%s.role'", wm.Role, param))
	}
	var text string
	if json.Unmarshal(wm.Content, &text) == nil {
		m.Text = text
		return m, nil
	}
	var parts []wirePart
	if err := json.Unmarshal(wm.Content, &parts); err != nil {
		return m, invalid(param+".content", fmt.Sprintf("Invalid type for '%s.content': expected one of a string or array of objects.", param))
	}
	m.Parts = true
	var texts []string
	for j, p := range parts {
		pp := fmt.Sprintf("%s.content.[%d]", param, j)
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "image_url":
			if wm.Role != "user" {
				return m, invalid(pp+".type", fmt.Sprintf("Invalid '%s': Image URLs are only allowed for messages with role 'user', but this message with role '%s' contains an image URL.", pp, wm.Role))
			}
			if !vision {
				return m, invalid(pp+".type", "Invalid content type. image_url is only supported by certain models.")
			}
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return m, invalid(pp+".image_url", fmt.Sprintf("Missing required parameter: '%s.image_url.url'.", pp))
			}
			img, f := decodeImage(pp, p.ImageURL.URL, p.ImageURL.Detail)
			if f != nil {
				return m, f
			}
			m.Images = append(m.Images, img)
		default:
			return m, invalid(pp+".type", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.", p.Type))
		}
	}
	m.Text = strings.Join(texts, "\n")
	return m, nil
}

func decodeImage(param, url, detail string) (Image, *failure) {
	switch detail {
	case "", "auto", "low", "high":
	default:
		return Image{}, invalid(param+".image_url.detail", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'auto', 'low', and 'high'.", detail))
	}
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return Image{}, invalid(param+".image_url.url", "This test server only accepts images as data: URLs.")
	}
	mediaType, b64, ok := strings.Cut(rest, ";base64,")
	bad := &failure{status: http.StatusBadRequest, typ: "invalid_request_error", code: "invalid_image_format", param: param + ".image_url.url",
		msg: "You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp']."}
	if !ok || !slices.Contains([]string{"image/png", "image/jpeg", "image/gif", "image/webp"}, mediaType) {
		return Image{}, bad
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return Image{}, &failure{status: http.StatusBadRequest, typ: "invalid_request_error", code: "invalid_image_url", param: param + ".image_url.url",
			msg: "Invalid image URL: the base64 data could not be decoded."}
	}
	img := Image{MediaType: mediaType, Data: data, Detail: detail}
	if mediaType != "image/webp" {
		cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || "image/"+format != mediaType {
			return Image{}, &failure{status: http.StatusBadRequest, typ: "invalid_request_error", code: "invalid_image_format", param: param + ".image_url.url",
				msg: "You uploaded an unsupported image. Please make sure your image is valid."}
		}
		img.Width, img.Height = cfg.Width, cfg.Height
	}
	return img, nil
}

// checkFormat validates response_format.
func checkFormat(req *Request) *failure {
	rf := req.ResponseFormat
	if rf == nil {
		return nil
	}
	switch rf.Type {
	case "text":
	case "json_object":
		mentioned := false
		for _, m := range req.Messages {
			if strings.Contains(strings.ToLower(m.Text), "json") {
				mentioned = true
			}
		}
		if !mentioned {
			return invalid("messages", "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.")
		}
	case "json_schema":
		js := rf.JSONSchema
		if js == nil {
			return invalid("response_format.json_schema", "Missing required parameter: 'response_format.json_schema'.")
		}
		if !schemaNameRE.MatchString(js.Name) {
			return invalid("response_format.json_schema.name", fmt.Sprintf("Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$' of at most 64 characters, got '%s'.", js.Name))
		}
		var schema map[string]any
		if json.Unmarshal(js.Schema, &schema) != nil {
			return invalid("response_format.json_schema.schema", "Invalid type for 'response_format.json_schema.schema': expected an object.")
		}
		if js.Strict != nil && *js.Strict {
			if msg := strictProblem(schema, nil); msg != "" {
				return invalid("response_format", fmt.Sprintf("Invalid schema for response_format '%s': %s", js.Name, msg))
			}
		}
	default:
		return invalid("response_format.type", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'json_object', 'json_schema', and 'text'.", rf.Type))
	}
	return nil
}

// strictProblem checks the rules of strict structured outputs and says what breaks them, in
// OpenAI's words; "" when none does.
func strictProblem(s map[string]any, path []string) string {
	where := "In context=()"
	if len(path) > 0 {
		where = "In context=('" + strings.Join(path, "', '") + "')"
	}
	if len(path) == 0 && !hasType(s, "object") {
		return "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"" + fmt.Sprint(s["type"]) + "\"'."
	}
	for _, k := range []string{"patternProperties", "unevaluatedProperties", "propertyNames", "minProperties", "maxProperties", "if", "then", "else", "not", "oneOf"} {
		if _, ok := s[k]; ok {
			return fmt.Sprintf("%s, '%s' is not permitted.", where, k)
		}
	}
	if hasType(s, "object") {
		if s["additionalProperties"] != false {
			return where + ", 'additionalProperties' is required to be supplied and to be false."
		}
		props, _ := s["properties"].(map[string]any)
		required, _ := s["required"].([]any)
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if !slices.Contains(required, any(name)) {
				return fmt.Sprintf("%s, 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'.", where, name)
			}
		}
		for _, name := range names {
			sub, ok := props[name].(map[string]any)
			if !ok {
				return fmt.Sprintf("%s, schema for '%s' must be an object.", where, name)
			}
			if msg := strictProblem(sub, append(slices.Clone(path), "properties", name)); msg != "" {
				return msg
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		if msg := strictProblem(items, append(slices.Clone(path), "items")); msg != "" {
			return msg
		}
	}
	if list, ok := s["anyOf"].([]any); ok {
		for i, v := range list {
			sub, _ := v.(map[string]any)
			if msg := strictProblem(sub, append(slices.Clone(path), "anyOf", fmt.Sprint(i))); msg != "" {
				return msg
			}
		}
	}
	for _, key := range []string{"$defs", "definitions"} {
		if defs, ok := s[key].(map[string]any); ok {
			for name, v := range defs {
				sub, _ := v.(map[string]any)
				if msg := strictProblem(sub, append(slices.Clone(path), key, name)); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

func hasType(s map[string]any, want string) bool {
	switch t := s["type"].(type) {
	case string:
		return t == want
	case []any:
		return slices.Contains(t, any(want))
	}
	return false
}

// Tokens is the server's token count of a text: its words. Usage and token limits use it.
func Tokens(s string) int { return len(strings.Fields(s)) }

// cut keeps the first n words of s.
func cut(s string, n int) string {
	return strings.Join(strings.Fields(s)[:n], " ")
}

// imageTokens follows OpenAI's published cost of an image: 85 tokens at low detail, and 170
// more per 512-pixel tile otherwise.
func imageTokens(img Image) int {
	if img.Detail == "low" {
		return 85
	}
	tiles := max(1, (img.Width+511)/512) * max(1, (img.Height+511)/512)
	return 85 + 170*tiles
}
