package connector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/docindex/docindex/plugins"
)

// ErrInvalidConfig is wrapped by every error about a bad configuration. It
// matches plugins.ErrInvalidArgument too.
var ErrInvalidConfig = fmt.Errorf("invalid configuration: %w", plugins.ErrInvalidArgument)

// Problem is one thing wrong with a configuration.
type Problem struct {
	// Field is a JSON Pointer to the offending value ("/url",
	// "/auth/token"); empty for the configuration as a whole.
	Field string
	// Message says what is wrong, for a person ("must be an absolute URL").
	Message string
}

// ValidationError lists what is wrong with a configuration. The zero value
// is ready to use:
//
//	var v connector.ValidationError
//	if cfg.URL == "" {
//		v.Add("/url", "is required")
//	}
//	return v.Err()
type ValidationError struct {
	Problems []Problem
}

// Add records a problem with field.
func (e *ValidationError) Add(field, format string, args ...any) {
	e.Problems = append(e.Problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Err returns e if it holds a problem, nil otherwise.
func (e *ValidationError) Err() error {
	if len(e.Problems) == 0 {
		return nil
	}
	return e
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		if p.Field == "" {
			parts[i] = p.Message
		} else {
			parts[i] = p.Field + ": " + p.Message
		}
	}
	return "invalid configuration: " + strings.Join(parts, "; ")
}

func (e *ValidationError) Unwrap() error { return ErrInvalidConfig }

// DecodeConfig decodes a configuration into v (a pointer to the connector's
// config struct), refusing unknown fields, so that a misspelt key is an
// error instead of a silently ignored setting. Errors are *ValidationError.
func DecodeConfig(config json.RawMessage, v any) error {
	if len(bytes.TrimSpace(config)) == 0 {
		config = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ve ValidationError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			ve.Add("/"+strings.ReplaceAll(te.Field, ".", "/"), "must be a %s, not a JSON %s", te.Type, te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			ve.Add("", "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		default:
			ve.Add("", "not a JSON object: %v", err)
		}
		return &ve
	}
	if dec.More() {
		return &ValidationError{Problems: []Problem{{Message: "trailing data after the JSON object"}}}
	}
	return nil
}

// SecretFields returns the JSON Pointers of the properties that schema marks
// secret ("writeOnly": true), searching nested object properties, sorted.
func SecretFields(schema json.RawMessage) ([]string, error) {
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("secret fields: config schema: %w", err)
	}
	var out []string
	var walk func(s map[string]any, prefix string)
	walk = func(s map[string]any, prefix string) {
		props, _ := s["properties"].(map[string]any)
		for name, raw := range props {
			p, ok := raw.(map[string]any)
			if !ok {
				continue
			}
			ptr := prefix + "/" + escapePointer(name)
			if w, _ := p["writeOnly"].(bool); w {
				out = append(out, ptr)
				continue
			}
			walk(p, ptr)
		}
	}
	walk(root, "")
	sort.Strings(out)
	return out, nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Redact returns config without the values of the secret fields of schema,
// for showing a configuration back to a user.
func Redact(schema, config json.RawMessage) (json.RawMessage, error) {
	secrets, err := SecretFields(schema)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(config, &doc); err != nil {
		return nil, fmt.Errorf("redact: config: %w", err)
	}
	for _, ptr := range secrets {
		removePointer(doc, ptr)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	return out, nil
}

func removePointer(doc map[string]any, ptr string) {
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		if i == len(parts)-1 {
			delete(doc, p)
			return
		}
		next, ok := doc[p].(map[string]any)
		if !ok {
			return
		}
		doc = next
	}
}
