package openaitest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/docindex/docindex/plugins/llms/openai/openaitest"
)

// post sends body as the OpenAI SDKs do and returns the status and decoded answer.
func post(t *testing.T, s *openaitest.Server, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.BaseURL()+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.Key())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("answer is not JSON: %s", raw)
	}
	return resp.StatusCode, out
}

func errMessage(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

// TestPublishedExample sends the request of the API reference's basic example and checks the
// chat.completion object's shape.
func TestPublishedExample(t *testing.T) {
	s := openaitest.New(t)
	status, out := post(t, s, `{"model": "gpt-4o-mini", "messages": [{"role": "developer", "content": "You are a helpful assistant."}, {"role": "user", "content": "Hello!"}]}`)
	if status != 200 {
		t.Fatalf("status %d: %v", status, out)
	}
	if out["object"] != "chat.completion" || !strings.HasPrefix(out["id"].(string), "chatcmpl-") || out["model"] != "gpt-4o-mini" {
		t.Errorf("answer = %v", out)
	}
	choice := out["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	if choice["index"] != float64(0) || choice["finish_reason"] != "stop" || msg["role"] != "assistant" || msg["refusal"] != nil ||
		!strings.HasPrefix(msg["content"].(string), "You said: Hello!") {
		t.Errorf("choice = %v", choice)
	}
	usage := out["usage"].(map[string]any)
	if usage["prompt_tokens"].(float64)+usage["completion_tokens"].(float64) != usage["total_tokens"].(float64) {
		t.Errorf("usage = %v", usage)
	}
}

func TestValidation(t *testing.T) {
	s := openaitest.New(t)
	pic := func() string {
		var buf bytes.Buffer
		_ = png.Encode(&buf, image.NewGray(image.Rect(0, 0, 3, 2)))
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	}()
	for _, tc := range []struct {
		name, body string
		status     int
		msg        string
	}{
		{"unknown model", `{"model":"gpt-9","messages":[{"role":"user","content":"Hi"}]}`, 404, "The model `gpt-9` does not exist"},
		{"no messages", `{"model":"gpt-4o-mini","messages":[]}`, 400, "too short"},
		{"bad role", `{"model":"gpt-4o-mini","messages":[{"role":"robot","content":"Hi"}]}`, 400, "'robot' is not one of"},
		{"image for a text model", `{"model":"gpt-3.5-turbo","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + pic + `"}}]}]}`, 400, "only supported by certain models"},
		{"image in a system message", `{"model":"gpt-4o-mini","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"` + pic + `"}}]}]}`, 400, "only allowed for messages with role 'user'"},
		{"image type lies", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + strings.Replace(pic, "image/png", "image/jpeg", 1) + `"}}]}]}`, 400, "unsupported image"},
		{"json mode without the word", `{"model":"gpt-4o-mini","response_format":{"type":"json_object"},"messages":[{"role":"user","content":"Hi"}]}`, 400, "must contain the word 'json'"},
		{"strict without additionalProperties", `{"model":"gpt-4o-mini","response_format":{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}},"messages":[{"role":"user","content":"Hi"}]}`,
			400, "Invalid schema for response_format 'x': In context=(), 'additionalProperties' is required to be supplied and to be false."},
		{"strict with an optional property", `{"model":"gpt-4o-mini","response_format":{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":{"type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}},"required":["o"],"additionalProperties":false}}},"messages":[{"role":"user","content":"Hi"}]}`,
			400, "In context=('properties', 'o'), 'required' is required to be supplied and to be an array including every key in properties. Missing 'a'."},
		{"bad schema name", `{"model":"gpt-4o-mini","response_format":{"type":"json_schema","json_schema":{"name":"a b","schema":{"type":"object"}}},"messages":[{"role":"user","content":"Hi"}]}`, 400, "does not match pattern"},
		{"temperature", `{"model":"gpt-4o-mini","temperature":2.5,"messages":[{"role":"user","content":"Hi"}]}`, 400, "maximum of 2"},
		{"image", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[{"type":"text","text":"What?"},{"type":"image_url","image_url":{"url":"` + pic + `","detail":"low"}}]}]}`, 200, ""},
	} {
		status, out := post(t, s, tc.body)
		if status != tc.status || !strings.Contains(errMessage(out), tc.msg) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, status, errMessage(out), tc.status, tc.msg)
		}
	}
	last := s.Requests()[len(s.Requests())-1]
	if img := last.Messages[0].Images[0]; img.Width != 3 || img.Height != 2 || img.Detail != "low" || last.Messages[0].Text != "What?" {
		t.Errorf("decoded image message: %+v", last.Messages[0])
	}

	req, _ := http.NewRequest(http.MethodPost, s.BaseURL()+"/chat/completions", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer sk-other")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("wrong key: %d", resp.StatusCode)
	}
}

func TestMaxTokensCutTheAnswer(t *testing.T) {
	s := openaitest.New(t)
	status, out := post(t, s, `{"model":"gpt-4o-mini","max_completion_tokens":5,"messages":[{"role":"user","content":"Tell me a story."}]}`)
	choice := out["choices"].([]any)[0].(map[string]any)
	content := choice["message"].(map[string]any)["content"].(string)
	if status != 200 || choice["finish_reason"] != "length" || openaitest.Tokens(content) != 5 || out["usage"].(map[string]any)["completion_tokens"] != float64(5) {
		t.Errorf("%d %v", status, out)
	}
}

func TestInstance(t *testing.T) {
	doc, err := openaitest.Instance(json.RawMessage(`{"type":"object","properties":{
		"n":{"type":"integer","minimum":100},"x":{"type":"number","maximum":1},"d":{"type":"string","format":"date"},
		"e":{"enum":["a","b"]},"t":{"type":["null","boolean"]},"l":{"type":"array","items":{"$ref":"#/$defs/item"},"minItems":2}},
		"$defs":{"item":{"type":"object","properties":{"k":{"const":"v"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"d":"2024-05-17","e":"a","l":[{"k":"v"},{"k":"v"}],"n":100,"t":true,"x":1}`
	if string(doc) != want {
		t.Errorf("Instance = %s, want %s", doc, want)
	}
	if _, err := openaitest.Instance(json.RawMessage(`{"type":"object","properties":{"r":{"$ref":"#"}}}`)); err == nil {
		t.Error("a recursive schema did not fail")
	}
}
