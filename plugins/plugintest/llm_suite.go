package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/llm"
)

// LLMOption adjusts RunLLMSuite.
type LLMOption func(*llmSuite)

type llmSuite struct {
	models  []string
	timeout time.Duration
}

// OnlyLLMModels restricts the per-model checks to these model ids (every id must be offered),
// for providers where every call costs money. By default every offered model is checked.
func OnlyLLMModels(ids ...string) LLMOption {
	return func(s *llmSuite) { s.models = append(s.models, ids...) }
}

// LLMCallTimeout bounds each call (default 60s).
func LLMCallTimeout(d time.Duration) LLMOption {
	return func(s *llmSuite) { s.timeout = d }
}

// suiteSchema is the structured-output schema the suite asks for: every property required, no
// others allowed, a nullable one, so that it is valid in OpenAI's strict mode as it is.
const suiteSchema = `{
  "type": "object",
  "properties": {
    "title": {"type": "string", "description": "the name of the building"},
    "year": {"type": "integer", "description": "the year it was completed"},
    "height_m": {"type": "number"},
    "open_to_public": {"type": "boolean"},
    "architect": {"type": ["string", "null"]},
    "materials": {"type": "array", "items": {"type": "string"}},
    "location": {
      "type": "object",
      "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
      "required": ["city", "country"],
      "additionalProperties": false
    }
  },
  "required": ["title", "year", "height_m", "open_to_public", "architect", "materials", "location"],
  "additionalProperties": false
}`

const suiteDocument = "The Eiffel Tower in Paris, France, was completed in 1889. It is 330 metres tall, " +
	"made of wrought iron, designed by the company of Gustave Eiffel, and open to visitors every day."

// RunLLMSuite checks that l honours the LLM contract: its catalog, plain and multi-turn chats,
// structured output that satisfies the requested JSON Schema, MaxTokens, images for vision
// models (and their refusal by the others), the errors of unknown models and malformed
// requests, cancellation and concurrent calls. Run it on the client StartLLM returns, so that
// the gRPC boundary is part of the test. Answers are not judged for their wording: any model
// passes that keeps the contract.
func RunLLMSuite(t *testing.T, l llm.LLM, opts ...LLMOption) {
	s := &llmSuite{timeout: 60 * time.Second}
	for _, o := range opts {
		o(s)
	}
	var models []llm.Model
	t.Run("Models", func(t *testing.T) {
		ctx, cancel := s.ctx()
		defer cancel()
		var err error
		models, err = l.Models(ctx)
		if err != nil {
			t.Fatalf("Models: %v", err)
		}
		if len(models) == 0 {
			t.Fatal("Models returned no model")
		}
		seen := map[string]bool{}
		for _, m := range models {
			switch {
			case m.ID == "" || strings.TrimSpace(m.ID) != m.ID:
				t.Errorf("model id %q is empty or padded", m.ID)
			case seen[m.ID]:
				t.Errorf("model id %q listed twice", m.ID)
			}
			seen[m.ID] = true
			if m.ContextTokens < 0 {
				t.Errorf("model %q: negative context window %d", m.ID, m.ContextTokens)
			}
		}
		for _, id := range s.models {
			if !seen[id] {
				t.Errorf("model %q is not offered", id)
			}
		}
	})
	if len(models) == 0 {
		return
	}
	for _, m := range models {
		if len(s.models) > 0 && !slices.Contains(s.models, m.ID) {
			continue
		}
		t.Run("Model="+m.ID, func(t *testing.T) { s.runModel(t, l, m) })
	}
	first := models[0]
	if len(s.models) > 0 {
		first = llm.Model{ID: s.models[0]}
	}
	t.Run("UnknownModel", func(t *testing.T) {
		ctx, cancel := s.ctx()
		defer cancel()
		_, err := l.Complete(ctx, llm.Request{Model: "docindex-conformance-no-such-model", Messages: []llm.Message{{Role: "user", Content: "Hello"}}})
		if !errors.Is(err, llm.ErrUnknownModel) {
			t.Fatalf("Complete with an unknown model: got %v, want an error wrapping llm.ErrUnknownModel", err)
		}
	})
	t.Run("MalformedRequests", func(t *testing.T) {
		img := suitePNG(t)
		for name, req := range map[string]llm.Request{
			"no messages":          {Model: first.ID},
			"unknown role":         {Model: first.ID, Messages: []llm.Message{{Role: "wizard", Content: "Hello"}}},
			"empty message":        {Model: first.ID, Messages: []llm.Message{{Role: "user"}}},
			"image in system":      {Model: first.ID, Messages: []llm.Message{{Role: "system", Content: "Look", Images: []llm.Image{img}}, {Role: "user", Content: "Hello"}}},
			"schema not an object": {Model: first.ID, Messages: []llm.Message{{Role: "user", Content: "Hello"}}, Schema: json.RawMessage(`[1,2]`)},
		} {
			ctx, cancel := s.ctx()
			_, err := l.Complete(ctx, req)
			cancel()
			if !errors.Is(err, plugins.ErrInvalidArgument) {
				t.Errorf("%s: got %v, want an error wrapping plugins.ErrInvalidArgument", name, err)
			}
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := l.Complete(ctx, llm.Request{Model: first.ID, Messages: []llm.Message{{Role: "user", Content: "Hello"}}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Complete with a cancelled context: %v; want an error wrapping context.Canceled", err)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for g := range 6 {
			wg.Add(1)
			go func() { // providers must be safe for concurrent use
				defer wg.Done()
				ctx, cancel := s.ctx()
				defer cancel()
				resp, err := l.Complete(ctx, llm.Request{Model: first.ID, Messages: []llm.Message{
					{Role: "user", Content: fmt.Sprintf("Say the number %d and nothing else.", g)},
				}})
				switch {
				case err != nil:
					errs <- err
				case strings.TrimSpace(resp.Content) == "":
					errs <- errors.New("concurrent call returned an empty answer")
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func (s *llmSuite) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

// complete runs req and checks what holds for every answer.
func (s *llmSuite) complete(t *testing.T, l llm.LLM, req llm.Request) *llm.Response {
	t.Helper()
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := l.Complete(ctx, req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp == nil {
		t.Fatal("Complete returned no response and no error")
	}
	if resp.FinishReason == "" {
		t.Error("empty finish reason (want \"stop\", \"length\", ...)")
	}
	if resp.InputTokens < 0 || resp.OutputTokens < 0 {
		t.Errorf("negative token counts: %d in, %d out", resp.InputTokens, resp.OutputTokens)
	}
	return resp
}

func (s *llmSuite) runModel(t *testing.T, l llm.LLM, m llm.Model) {
	t.Run("Text", func(t *testing.T) {
		resp := s.complete(t, l, llm.Request{Model: m.ID, Messages: []llm.Message{
			{Role: "system", Content: "You answer in one short sentence."},
			{Role: "user", Content: "What is the capital of France?"},
		}})
		if strings.TrimSpace(resp.Content) == "" {
			t.Error("empty answer")
		}
		if resp.FinishReason != "stop" {
			t.Errorf("finish reason %q for a short answer, want \"stop\"", resp.FinishReason)
		}
	})
	t.Run("MultiTurn", func(t *testing.T) {
		temp := 0.0
		resp := s.complete(t, l, llm.Request{Model: m.ID, Temperature: &temp, Messages: []llm.Message{
			{Role: "system", Content: "You are terse."},
			{Role: "user", Content: "Remember the word 'heron'."},
			{Role: "assistant", Content: "Remembered."},
			{Role: "user", Content: "Which word did I ask you to remember?"},
		}})
		if strings.TrimSpace(resp.Content) == "" {
			t.Error("empty answer")
		}
	})
	t.Run("StructuredOutput", func(t *testing.T) {
		resp := s.complete(t, l, llm.Request{Model: m.ID, SchemaName: "building", Schema: json.RawMessage(suiteSchema), Messages: []llm.Message{
			{Role: "system", Content: "Extract the facts of the document into the requested structure."},
			{Role: "user", Content: suiteDocument},
		}})
		if resp.FinishReason != "stop" {
			t.Errorf("finish reason %q, want \"stop\"", resp.FinishReason)
		}
		if err := validateJSON(suiteSchema, resp.Content); err != nil {
			t.Errorf("the answer does not satisfy the requested schema: %v\nanswer: %s", err, resp.Content)
		}
	})
	t.Run("MaxTokens", func(t *testing.T) {
		resp := s.complete(t, l, llm.Request{Model: m.ID, MaxTokens: 16, Messages: []llm.Message{
			{Role: "user", Content: "Count from 1 to 300 in words, separated by commas."},
		}})
		if resp.FinishReason != "length" {
			t.Errorf("finish reason %q for an answer far beyond MaxTokens 16, want \"length\"", resp.FinishReason)
		}
		if resp.OutputTokens > 16 {
			t.Errorf("%d output tokens, MaxTokens was 16", resp.OutputTokens)
		}
	})
	t.Run("Unicode", func(t *testing.T) {
		resp := s.complete(t, l, llm.Request{Model: m.ID, Messages: []llm.Message{
			{Role: "user", Content: "Translate to English: «Ünïcödé façade naïve café», 日本語のテキスト 🙂"},
		}})
		if strings.TrimSpace(resp.Content) == "" {
			t.Error("empty answer")
		}
		// Extracted text is not always valid UTF-8: it must either be answered or be refused
		// as invalid input, never break the call.
		ctx, cancel := s.ctx()
		defer cancel()
		_, err := l.Complete(ctx, llm.Request{Model: m.ID, Messages: []llm.Message{{Role: "user", Content: "Summarise: broken \xff\xfe bytes in a sentence"}}})
		if err != nil && !errors.Is(err, plugins.ErrInvalidArgument) {
			t.Errorf("invalid UTF-8: %v; want an answer or an error wrapping plugins.ErrInvalidArgument", err)
		}
	})
	if !m.Vision {
		t.Run("ImagesRefused", func(t *testing.T) {
			ctx, cancel := s.ctx()
			defer cancel()
			_, err := l.Complete(ctx, llm.Request{Model: m.ID, Messages: []llm.Message{
				{Role: "user", Content: "Describe the image.", Images: []llm.Image{suitePNG(t)}},
			}})
			if !errors.Is(err, plugins.ErrInvalidArgument) {
				t.Errorf("images for a model without vision: %v; want an error wrapping plugins.ErrInvalidArgument (images must not be dropped silently)", err)
			}
		})
		return
	}
	t.Run("Vision", func(t *testing.T) {
		for _, img := range []llm.Image{suitePNG(t), suiteJPEG(t), {Data: suitePNG(t).Data}} {
			resp := s.complete(t, l, llm.Request{Model: m.ID, Messages: []llm.Message{
				{Role: "user", Content: "What is the main colour of this image? Answer with one word.", Images: []llm.Image{img}},
			}})
			if strings.TrimSpace(resp.Content) == "" {
				t.Errorf("empty answer for an image of type %q", img.ContentType)
			}
		}
		resp := s.complete(t, l, llm.Request{Model: m.ID, Messages: []llm.Message{
			{Role: "user", Images: []llm.Image{suitePNG(t), suiteJPEG(t)}},
			{Role: "user", Content: "How many images did I send? Answer with a digit."},
		}})
		if strings.TrimSpace(resp.Content) == "" {
			t.Error("empty answer for two images without text")
		}
	})
	t.Run("VisionStructured", func(t *testing.T) {
		schema := `{"type":"object","properties":{"colour":{"type":"string"},"shapes":{"type":"integer"}},"required":["colour","shapes"],"additionalProperties":false}`
		resp := s.complete(t, l, llm.Request{Model: m.ID, SchemaName: "picture", Schema: json.RawMessage(schema), Messages: []llm.Message{
			{Role: "user", Content: "Describe the picture.", Images: []llm.Image{suitePNG(t)}},
		}})
		if err := validateJSON(schema, resp.Content); err != nil {
			t.Errorf("the answer does not satisfy the requested schema: %v\nanswer: %s", err, resp.Content)
		}
	})
}

// validateJSON checks doc against the JSON Schema schema.
func validateJSON(schema, doc string) error {
	sch, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("suite.json", sch); err != nil {
		return err
	}
	compiled, err := c.Compile("suite.json")
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return compiled.Validate(v)
}

// suiteImage is a red square with a blue bar: something any vision model can describe.
func suiteImage() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			c := color.RGBA{R: 220, G: 30, B: 30, A: 255}
			if y >= 40 && y < 48 {
				c = color.RGBA{R: 20, G: 40, B: 200, A: 255}
			}
			img.Set(x, y, c)
		}
	}
	return img
}

func suitePNG(t *testing.T) llm.Image {
	var buf bytes.Buffer
	if err := png.Encode(&buf, suiteImage()); err != nil {
		t.Fatal(err)
	}
	return llm.Image{ContentType: "image/png", Data: buf.Bytes()}
}

func suiteJPEG(t *testing.T) llm.Image {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, suiteImage(), nil); err != nil {
		t.Fatal(err)
	}
	return llm.Image{ContentType: "image/jpeg", Data: buf.Bytes()}
}
