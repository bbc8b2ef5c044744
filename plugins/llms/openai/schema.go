package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
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
//
// The rewrite keeps the order of every object's keys: the model writes its answer's fields in
// the order of the schema's properties, which is the order of the caller's columns.
func strictSchema(schema json.RawMessage) (out json.RawMessage, relaxed, ok bool) {
	o := order{}
	v, err := o.decode(schema)
	root, _ := v.(map[string]any)
	if err != nil || root == nil || !hasType(root, "object") {
		return nil, false, false
	}
	if !o.strictify(root, &relaxed) {
		return nil, false, false
	}
	var buf bytes.Buffer
	if err := o.encode(&buf, root); err != nil {
		return nil, false, false
	}
	return buf.Bytes(), relaxed, true
}

// order remembers the key order of the objects of a decoded JSON document, by the identity of
// their maps: the rewrite changes the maps in place and may wrap them in new ones, and each
// keeps its order through that.
type order map[uintptr][]string

// decode parses one JSON value into maps, slices, json.Number (exact), strings, bools and nil.
func (o order) decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := o.value(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func (o order) value(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		m := map[string]any{}
		var keys []string
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := o.value(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; !dup {
				keys = append(keys, k)
			}
			m[k] = v
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, err
		}
		o[reflect.ValueOf(m).Pointer()] = keys
		return m, nil
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := o.value(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, err
		}
		return list, nil
	}
	return tok, nil
}

// keys returns m's keys: those decoded in their order, then added ones sorted.
func (o order) keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	seen := make(map[string]bool, len(m))
	for _, k := range o[reflect.ValueOf(m).Pointer()] {
		if _, ok := m[k]; ok && !seen[k] {
			out = append(out, k)
			seen[k] = true
		}
	}
	var added []string
	for k := range m {
		if !seen[k] {
			added = append(added, k)
		}
	}
	slices.Sort(added)
	return append(out, added...)
}

// encode writes v as JSON with its objects' keys in order.
func (o order) encode(buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case map[string]any:
		buf.WriteByte('{')
		for i, k := range o.keys(v) {
			if i > 0 {
				buf.WriteByte(',')
			}
			kb, err := json.Marshal(k)
			if err != nil {
				return err
			}
			buf.Write(kb)
			buf.WriteByte(':')
			if err := o.encode(buf, v[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := o.encode(buf, x); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}

func (o order) strictify(s map[string]any, relaxed *bool) bool {
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
		for _, name := range o.keys(props) {
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
				if !ok || !o.strictify(sub, relaxed) {
					return false
				}
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok && !o.strictify(items, relaxed) {
		return false
	}
	if list, ok := s["anyOf"].([]any); ok {
		for _, v := range list {
			sub, ok := v.(map[string]any)
			if !ok || !o.strictify(sub, relaxed) {
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
