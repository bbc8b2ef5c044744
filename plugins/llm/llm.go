package llm

import (
	"context"
	"encoding/json"
)

// Image is a picture sent to a vision-capable model.
type Image struct {
	ContentType string // image/png, image/jpeg, ...
	Data        []byte
}

// Message is one turn of a chat.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
	Images  []Image // for vision models, with Role "user"
}

// Request asks a model for one completion.
type Request struct {
	Model    string
	Messages []Message
	// Schema, when set, is a JSON Schema the answer must satisfy (structured output); the
	// answer's Content is then a JSON document. SchemaName names it for providers that want one.
	Schema      json.RawMessage
	SchemaName  string
	MaxTokens   int      // 0: the provider's default
	Temperature *float64 // nil: the provider's default
}

// Response is a completion.
type Response struct {
	Content      string
	FinishReason string // "stop", "length", ...
	InputTokens  int
	OutputTokens int
}

// Model is a chat model a provider offers.
type Model struct {
	ID            string // catalog id, e.g. "gpt-4o-mini"
	Provider      string // filled by the host
	Vision        bool   // accepts images
	ContextTokens int    // 0 when unknown
}

// LLM is a chat-completion provider: the third plugin kind, docindex-llm-<provider>.
type LLM interface {
	Models(ctx context.Context) ([]Model, error)
	Complete(ctx context.Context, req Request) (*Response, error)
}
