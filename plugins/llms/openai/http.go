package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/internal/retry"
	"github.com/docindex/docindex/plugins/llm"
)

// chatResponse is the part of a chat.completion object the provider reads.
type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// apiError is OpenAI's error body; other servers send variations, so the raw body is the
// fallback.
type apiError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// send posts the request, retrying what is worth retrying.
func (p *Provider) send(ctx context.Context, endpoint string, m Model, payload []byte) (*chatResponse, error) {
	return retry.Do(ctx, p.backoff, func() (*chatResponse, time.Duration, error) {
		return p.once(ctx, endpoint, m, payload)
	})
}

// once sends the request one time. retryAfter < 0 means "do not retry"; 0 means "retry after
// the computed backoff"; > 0 is the server's wish.
func (p *Provider) once(ctx context.Context, endpoint string, m Model, payload []byte) (_ *chatResponse, retryAfter time.Duration, _ error) {
	rctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, -1, fmt.Errorf("openai llm: %w", err)
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
			return nil, -1, fmt.Errorf("openai llm: model %q: POST %s: %w", m.ID, endpoint, ctx.Err())
		}
		// Connection refused, reset, timed out: the server may come back.
		return nil, 0, fmt.Errorf("openai llm: model %q: POST %s: %w", m.ID, endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		if ctx.Err() != nil {
			return nil, -1, fmt.Errorf("openai llm: model %q: POST %s: reading the answer: %w", m.ID, endpoint, ctx.Err())
		}
		return nil, 0, fmt.Errorf("openai llm: model %q: POST %s: reading the answer: %w", m.ID, endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, retryAfterOf(resp, raw), statusError(endpoint, m, resp, raw)
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return nil, -1, fmt.Errorf("openai llm: model %q: POST %s: the answer is not a chat completion: %w (%s)", m.ID, endpoint, err, snippet(raw))
	}
	if len(cr.Choices) == 0 {
		return nil, -1, fmt.Errorf("openai llm: model %q: POST %s: the answer has no choices (%s)", m.ID, endpoint, snippet(raw))
	}
	return &cr, 0, nil
}

// retryAfterOf reads when a 429 or 5xx may be retried; -1 for answers that will not change on
// retry.
func retryAfterOf(resp *http.Response, raw []byte) time.Duration {
	// An exhausted quota or billing limit does not lift in seconds.
	if resp.StatusCode == http.StatusTooManyRequests {
		if code, _, _ := errorDetail(raw); code == "insufficient_quota" {
			return -1
		}
	}
	if !retry.Retryable(resp.StatusCode) {
		return -1
	}
	return retry.After(resp.Header, time.Now())
}

// errorDetail reads OpenAI's error object: its code (or type), its message, or the start of
// the body when it is something else.
func errorDetail(raw []byte) (code, msg string, structured bool) {
	var ae apiError
	if json.Unmarshal(raw, &ae) == nil && ae.Error.Message != "" {
		if ae.Error.Code != nil {
			code = fmt.Sprint(ae.Error.Code)
		} else {
			code = ae.Error.Type
		}
		return code, ae.Error.Message, true
	}
	return "", snippet(raw), false
}

func statusError(endpoint string, m Model, resp *http.Response, raw []byte) error {
	code, msg, _ := errorDetail(raw)
	detail := msg
	if code != "" {
		detail += " (" + code + ")"
	}
	base := fmt.Sprintf("openai llm: model %q: POST %s: %s: %s", m.ID, endpoint, resp.Status, detail)
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%s; check the API key: %w", base, plugins.ErrUnauthenticated)
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s: %w", base, plugins.ErrPermissionDenied)
	case resp.StatusCode == http.StatusTooManyRequests:
		return fmt.Errorf("%s: %w", base, plugins.ErrRateLimited)
	case resp.StatusCode == http.StatusRequestEntityTooLarge:
		return fmt.Errorf("%s; send fewer or smaller images: %w", base, plugins.ErrInvalidArgument)
	case resp.StatusCode == http.StatusNotFound && (code == "model_not_found" || code == "DeploymentNotFound" || strings.Contains(strings.ToLower(msg), "model")):
		return fmt.Errorf("%s: %w", base, llm.ErrUnknownModel)
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

// answer turns the first choice into a Response.
func (p *Provider) answer(m Model, cr *chatResponse, pl plan) (*llm.Response, error) {
	c := cr.Choices[0]
	if c.Message.Refusal != nil && *c.Message.Refusal != "" {
		return nil, fmt.Errorf("openai llm: model %q refused: %s: %w", m.ID, *c.Message.Refusal, plugins.ErrInvalidArgument)
	}
	resp := &llm.Response{FinishReason: c.FinishReason}
	if c.Message.Content != nil {
		resp.Content = *c.Message.Content
	}
	if cr.Usage != nil {
		resp.InputTokens, resp.OutputTokens = cr.Usage.PromptTokens, cr.Usage.CompletionTokens
	}
	if resp.FinishReason == "" {
		resp.FinishReason = "stop" // some servers leave it out of complete answers
	}
	if pl.schema == nil || resp.FinishReason == "length" {
		return resp, nil
	}
	content, err := p.structuredContent(m, resp.Content, pl)
	if err != nil {
		return nil, err
	}
	resp.Content = content
	return resp, nil
}

// structuredContent checks that an answer to a schema is JSON, unwrapping a Markdown code
// fence that servers without schema support like to add, and removes the nulls that strict
// mode forced on optional properties.
func (p *Provider) structuredContent(m Model, content string, pl plan) (string, error) {
	text := strings.TrimSpace(content)
	if !json.Valid([]byte(text)) {
		text = unfence(text)
		if !json.Valid([]byte(text)) {
			return "", fmt.Errorf("openai llm: model %q was asked for JSON and answered with something else: %s", m.ID, snippet([]byte(content)))
		}
	}
	if !pl.relaxed {
		return text, nil
	}
	var doc any
	var schema map[string]any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber() // keeps large integers exact through the rewrite
	if dec.Decode(&doc) != nil || json.Unmarshal(pl.schema, &schema) != nil {
		return text, nil
	}
	if !pruneNulls(doc, schema) {
		return text, nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return text, nil
	}
	return string(out), nil
}

// unfence returns the content of the first ``` fence of s, or s.
func unfence(s string) string {
	start := strings.Index(s, "```")
	if start < 0 {
		return s
	}
	rest := s[start+3:]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[nl+1:] // the fence's language tag
	}
	end := strings.Index(rest, "```")
	if end < 0 {
		return s
	}
	return strings.TrimSpace(rest[:end])
}
