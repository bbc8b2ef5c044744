package openaitest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DefaultAnswer is the server's answer unless WithAnswer replaces it: under a json_schema
// response format a document that satisfies the schema (see Instance); under json_object an
// object that echoes the last user message; otherwise a few sentences that repeat the last
// user message and describe the images sent, long enough that a small token limit cuts them.
func DefaultAnswer(req *Request) Answer {
	last := ""
	var images []string
	for _, m := range req.Messages {
		if m.Role == "user" {
			if m.Text != "" {
				last = m.Text
			}
			for _, img := range m.Images {
				images = append(images, fmt.Sprintf("%s %dx%d", img.MediaType, img.Width, img.Height))
			}
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_schema":
			doc, err := Instance(rf.JSONSchema.Schema)
			if err != nil {
				return Answer{Content: `{}`}
			}
			return Answer{Content: string(doc)}
		case "json_object":
			doc, _ := json.Marshal(map[string]any{"answer": last, "images": len(images)})
			return Answer{Content: string(doc)}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "You said: %s", last)
	if len(images) > 0 {
		fmt.Fprintf(&b, " You sent %d image(s): %s.", len(images), strings.Join(images, ", "))
	}
	b.WriteString(" This answer comes from a test server that follows the published shapes of the chat completions API; it repeats what it was told instead of thinking about it.")
	return Answer{Content: b.String()}
}

// Instance returns a JSON document that satisfies schema: every property present, the first
// alternative of anyOf and enum, one item per array (or minItems), numbers within their
// bounds, strings that name their property. It follows local $refs.
func Instance(schema json.RawMessage) (json.RawMessage, error) {
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("openaitest: schema: %w", err)
	}
	v, err := instance(root, root, "value", 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func instance(s, root map[string]any, name string, depth int) (any, error) {
	if depth > 32 {
		return nil, fmt.Errorf("openaitest: schema nests deeper than 32 levels (a recursive $ref?)")
	}
	if ref, ok := s["$ref"].(string); ok {
		target, err := resolve(root, ref)
		if err != nil {
			return nil, err
		}
		return instance(target, root, name, depth+1)
	}
	if c, ok := s["const"]; ok {
		return c, nil
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		for _, e := range enum {
			if e != nil {
				return e, nil
			}
		}
		return enum[0], nil
	}
	if list, ok := s["anyOf"].([]any); ok && len(list) > 0 {
		for _, alt := range list {
			if sub, ok := alt.(map[string]any); ok && !hasType(sub, "null") {
				return instance(sub, root, name, depth+1)
			}
		}
		return nil, nil
	}
	switch typeOf(s) {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for prop, v := range props {
			sub, _ := v.(map[string]any)
			val, err := instance(sub, root, prop, depth+1)
			if err != nil {
				return nil, err
			}
			out[prop] = val
		}
		return out, nil
	case "array":
		n := 1
		if minItems, ok := s["minItems"].(float64); ok && int(minItems) > n {
			n = int(minItems)
		}
		items, _ := s["items"].(map[string]any)
		out := make([]any, 0, n)
		for i := range n {
			val, err := instance(items, root, fmt.Sprintf("%s %d", name, i+1), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, val)
		}
		return out, nil
	case "integer":
		return bounded(s, 42, true), nil
	case "number":
		return bounded(s, 4.25, false), nil
	case "boolean":
		return true, nil
	case "null":
		return nil, nil
	default: // string, or no type at all
		switch s["format"] {
		case "date":
			return "2024-05-17", nil
		case "date-time":
			return "2024-05-17T09:30:00Z", nil
		case "email":
			return "someone@example.com", nil
		}
		return "example " + name, nil
	}
}

// typeOf is the first non-null type of s.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x != "null" {
				return fmt.Sprint(x)
			}
		}
		return "null"
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

func bounded(s map[string]any, v float64, integer bool) any {
	if lo, ok := s["minimum"].(float64); ok && v < lo {
		v = lo
	}
	if hi, ok := s["maximum"].(float64); ok && v > hi {
		v = hi
	}
	if integer {
		return int64(v)
	}
	return v
}

func resolve(root map[string]any, ref string) (map[string]any, error) {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		if ref == "#" {
			return root, nil
		}
		return nil, fmt.Errorf("openaitest: only local $refs are followed, not %q", ref)
	}
	cur := root
	for _, part := range strings.Split(path, "/") {
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		next, ok := cur[part].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("openaitest: $ref %q does not resolve", ref)
		}
		cur = next
	}
	return cur, nil
}
