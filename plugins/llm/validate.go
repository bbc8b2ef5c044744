package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/docindex/docindex/plugins"
)

// Roles are the message roles every provider understands.
func Roles() []string { return []string{"system", "user", "assistant"} }

// Validate checks what every provider needs of a request, so that a malformed one fails the
// same way everywhere and before any network call: a model, at least one message, known roles,
// no empty message, images only in user messages and with image data, a Schema that is a JSON
// object, no negative limits. Its errors wrap plugins.ErrInvalidArgument. Whether the model accepts images
// is the provider's (or the host's) check: only it knows the model.
func (r Request) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("llm request: %s: %w", fmt.Sprintf(format, args...), plugins.ErrInvalidArgument)
	}
	if strings.TrimSpace(r.Model) == "" {
		return bad("no model")
	}
	if len(r.Messages) == 0 {
		return bad("no messages")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return bad("message %d: role %q (want system, user or assistant)", i, m.Role)
		}
		if len(m.Images) > 0 && m.Role != "user" {
			return bad("message %d: images are only accepted in user messages, not %s", i, m.Role)
		}
		if m.Content == "" && len(m.Images) == 0 {
			return bad("message %d (%s) is empty", i, m.Role)
		}
		for j, img := range m.Images {
			if len(img.Data) == 0 {
				return bad("message %d: image %d has no data", i, j)
			}
			if img.ContentType != "" && !strings.HasPrefix(img.ContentType, "image/") {
				return bad("message %d: image %d has content type %q, not an image type", i, j, img.ContentType)
			}
		}
	}
	if len(r.Schema) > 0 {
		var obj map[string]any
		if err := json.Unmarshal(r.Schema, &obj); err != nil {
			return bad("the schema is not a JSON object: %v", err)
		}
	}
	if r.MaxTokens < 0 {
		return bad("max tokens %d is negative", r.MaxTokens)
	}
	if r.Temperature != nil && *r.Temperature < 0 {
		return bad("temperature %v is negative", *r.Temperature)
	}
	return nil
}

// HasImages reports whether any message of r carries an image.
func (r Request) HasImages() bool {
	for _, m := range r.Messages {
		if len(m.Images) > 0 {
			return true
		}
	}
	return false
}
