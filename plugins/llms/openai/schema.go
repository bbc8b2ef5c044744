package openai

import (
	"encoding/json"
	"slices"
)

// OpenAI's strict structured outputs accept a subset of JSON Schema: the root is an object,
// every object lists all its properties in "required" and has "additionalProperties": false,
// and some keywords are not supported. Optional fields are expressed as required ones whose
// type allows null.

// unsupported are keywords strict mode rejects; a schema with one is sent non-strict.
var unsupported = []string{
	"patternProperties", "unevaluatedProperties", "propertyNames", "minProperties", "maxProperties",
	"dependentRequired", "dependentSchemas", "if", "then", "else", "not", "oneOf",
}

// strictSchema returns schema rewritten for strict mode: additionalProperties false on every
// object, optional properties required and nullable (relaxed reports whether there were any).
// ok is false when the schema cannot be strict without changing what it accepts more than
// that.
func strictSchema(schema json.RawMessage) (out json.RawMessage, relaxed, ok bool) {
	var root map[string]any
	if json.Unmarshal(schema, &root) != nil || !hasType(root, "object") {
		return nil, false, false
	}
	if !strictify(root, &relaxed) {
		return nil, false, false
	}
	out, err := json.Marshal(root)
	if err != nil {
		return nil, false, false
	}
	return out, relaxed, true
}

func strictify(s map[string]any, relaxed *bool) bool {
	for _, k := range unsupported {
		if _, found := s[k]; found {
			return false
		}
	}
	if hasType(s, "object") {
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			return false // a free-form object: strict mode would only allow {}
		}
		if ap, found := s["additionalProperties"]; found && ap != false {
			return false
		}
		s["additionalProperties"] = false
		required := stringList(s["required"])
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		slices.Sort(names) // a stable request body
		for _, name := range names {
			ps, ok := props[name].(map[string]any)
			if !ok {
				return false
			}
			if !slices.Contains(required, name) {
				props[name] = nullable(ps)
				required = append(required, name)
				*relaxed = true
			}
		}
		list := make([]any, len(required))
		for i, r := range required {
			list[i] = r
		}
		s["required"] = list
	}
	for _, key := range []string{"properties", "$defs", "definitions"} {
		if m, ok := s[key].(map[string]any); ok {
			for _, v := range m {
				sub, ok := v.(map[string]any)
				if !ok || !strictify(sub, relaxed) {
					return false
				}
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok && !strictify(items, relaxed) {
		return false
	}
	if list, ok := s["anyOf"].([]any); ok {
		for _, v := range list {
			sub, ok := v.(map[string]any)
			if !ok || !strictify(sub, relaxed) {
				return false
			}
		}
	}
	return true
}

// nullable returns s also accepting null.
func nullable(s map[string]any) map[string]any {
	if allowsNull(s) {
		return s
	}
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		s["type"] = append(t, "null")
	default:
		if _, ok := s["enum"].([]any); !ok {
			return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		s["enum"] = append(enum, nil)
	}
	return s
}

func allowsNull(s map[string]any) bool {
	if hasType(s, "null") {
		return true
	}
	if enum, ok := s["enum"].([]any); ok && s["type"] == nil && slices.Contains(enum, nil) {
		return true
	}
	if list, ok := s["anyOf"].([]any); ok {
		for _, v := range list {
			if sub, ok := v.(map[string]any); ok && hasType(sub, "null") {
				return true
			}
		}
	}
	return false
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

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// pruneNulls removes from doc the null values of properties that schema (the caller's,
// before strictSchema) leaves optional and does not allow to be null: the model had to fill
// them in because strict mode made them required. It reports whether it removed any.
func pruneNulls(doc any, schema map[string]any) bool {
	changed := false
	switch v := doc.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		required := stringList(schema["required"])
		for name, val := range v {
			ps, _ := props[name].(map[string]any)
			if ps == nil {
				continue
			}
			if val == nil && !slices.Contains(required, name) && !allowsNull(ps) {
				delete(v, name)
				changed = true
				continue
			}
			if pruneNulls(val, ps) {
				changed = true
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		if items == nil {
			break
		}
		for _, it := range v {
			if pruneNulls(it, items) {
				changed = true
			}
		}
	}
	return changed
}
