package llm

import (
	"context"
	"encoding/json"
)

// Image is a picture sent to a vision-capable model.
type Image struct {
	ContentType string // image/png, image/jpeg, ...; empty: sniffed from Data
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
	// Content is the answer: text, or a JSON document when the request had a Schema.
	Content string
	// FinishReason says why the model stopped: "stop" (a complete answer), "length" (MaxTokens
	// or the context window was reached: Content is cut off, and under a Schema is usually not
	// valid JSON), "content_filter", or a provider's own reason.
	FinishReason string // "stop", "length", ...
	// Token usage as the provider reports it; 0 when it does not.
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
//
// Implementations must be safe for concurrent use. Errors wrap the SDK's sentinels so that
// they keep their meaning across the process boundary: ErrUnknownModel for a model the
// provider does not offer, plugins.ErrInvalidArgument for a request that cannot succeed as it
// is (no messages, images for a model without vision, a refusal), plugins.ErrRateLimited,
// plugins.ErrUnauthenticated and plugins.ErrNotReady (missing configuration) as their names say.
type LLM interface {
	// Models lists the models offered. An error that wraps plugins.ErrNotReady says the
	// provider lacks something (an API key, a model list) and how to provide it.
	Models(ctx context.Context) ([]Model, error)
	// Complete asks req.Model for one completion of req.Messages. With a Schema the answer's
	// Content satisfies it (unless FinishReason is "length").
	Complete(ctx context.Context, req Request) (*Response, error)
}
