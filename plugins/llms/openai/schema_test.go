package openai

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStrictSchema(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		relaxed, ok    bool
	}{
		{"already strict", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`,
			`{"additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}`, false, true},
		{"optional made nullable", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["integer","null"]},"c":{"type":"number"}},"required":["a"]}`,
			`{"additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":["integer","null"]},"c":{"type":["number","null"]}},"required":["a","b","c"],"type":"object"}`, true, true},
		{"nested and defs", `{"type":"object","properties":{"x":{"$ref":"#/$defs/p"}},"required":["x"],"$defs":{"p":{"type":"object","properties":{"q":{"type":"boolean"}}}}}`,
			`{"$defs":{"p":{"additionalProperties":false,"properties":{"q":{"type":["boolean","null"]}},"required":["q"],"type":"object"}},"additionalProperties":false,"properties":{"x":{"$ref":"#/$defs/p"}},"required":["x"],"type":"object"}`, true, true},
		{"ref made optional", `{"type":"object","properties":{"x":{"$ref":"#/$defs/p"}},"$defs":{"p":{"type":"string"}}}`,
			`{"$defs":{"p":{"type":"string"}},"additionalProperties":false,"properties":{"x":{"anyOf":[{"$ref":"#/$defs/p"},{"type":"null"}]}},"required":["x"],"type":"object"}`, true, true},
		{"root not an object", `{"type":"array","items":{"type":"string"}}`, "", false, false},
		{"free-form object", `{"type":"object","properties":{"m":{"type":"object"}},"required":["m"]}`, "", false, false},
		{"open object", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`, "", false, false},
		{"oneOf", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"integer"}]}},"required":["a"]}`, "", false, false},
		{"not JSON", `{`, "", false, false},
	} {
		out, relaxed, ok := strictSchema(json.RawMessage(tc.in))
		if ok != tc.ok || relaxed != tc.relaxed || string(out) != tc.want {
			t.Errorf("%s: got %s relaxed=%v ok=%v\nwant %s relaxed=%v ok=%v", tc.name, out, relaxed, ok, tc.want, tc.relaxed, tc.ok)
		}
	}
	// The caller's schema is left as it was.
	in := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	strictSchema(in)
	if string(in) != `{"type":"object","properties":{"a":{"type":"string"}}}` {
		t.Errorf("input changed: %s", in)
	}
}

func TestPruneNulls(t *testing.T) {
	var schema map[string]any
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{
		"a":{"type":"string"}, "b":{"type":["string","null"]}, "c":{"type":"string"},
		"list":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x"]}}},
		"required":["a","c"]}`), &schema)
	var doc any
	_ = json.Unmarshal([]byte(`{"a":null,"b":null,"c":"k","list":[{"x":null,"y":null},{"x":1,"y":2}],"extra":null}`), &doc)
	if !pruneNulls(doc, schema) {
		t.Fatal("nothing pruned")
	}
	out, _ := json.Marshal(doc)
	// a: required (kept, the model's business); b: allows null; y: optional, not nullable.
	if want := `{"a":null,"b":null,"c":"k","extra":null,"list":[{"x":null},{"x":1,"y":2}]}`; string(out) != want {
		t.Errorf("pruned to %s, want %s", out, want)
	}
}

func TestSchemaName(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "response",
		"invoice_lines":         "invoice_lines",
		"Rechnung Positionen!":  "Rechnung_Positionen_",
		"???":                   "response",
		strings.Repeat("x", 80): strings.Repeat("x", 64),
	} {
		if got := schemaName(in); got != want {
			t.Errorf("schemaName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnfence(t *testing.T) {
	for in, want := range map[string]string{
		"```json\n{\"a\":1}\n```":       `{"a":1}`,
		"Here:\n```\n[1,2]\n```\nDone.": `[1,2]`,
		"no fence":                      "no fence",
		"```json\n{\"a\":1}":            "```json\n{\"a\":1}",
	} {
		if got := unfence(in); got != want {
			t.Errorf("unfence(%q) = %q, want %q", in, got, want)
		}
	}
}
