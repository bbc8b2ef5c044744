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
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, false, true},
		{"optional made nullable", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["integer","null"]},"c":{"type":"number"}},"required":["a"]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["integer","null"]},"c":{"type":["number","null"]}},"required":["a","b","c"],"additionalProperties":false}`, true, true},
		{"nested and defs", `{"type":"object","properties":{"x":{"$ref":"#/$defs/p"}},"required":["x"],"$defs":{"p":{"type":"object","properties":{"q":{"type":"boolean"}}}}}`,
			`{"type":"object","properties":{"x":{"$ref":"#/$defs/p"}},"required":["x"],"$defs":{"p":{"type":"object","properties":{"q":{"type":["boolean","null"]}},"additionalProperties":false,"required":["q"]}},"additionalProperties":false}`, true, true},
		{"ref made optional", `{"type":"object","properties":{"x":{"$ref":"#/$defs/p"}},"$defs":{"p":{"type":"string"}}}`,
			`{"type":"object","properties":{"x":{"anyOf":[{"$ref":"#/$defs/p"},{"type":"null"}]}},"$defs":{"p":{"type":"string"}},"additionalProperties":false,"required":["x"]}`, true, true},
		{"root not an object", `{"type":"array","items":{"type":"string"}}`, "", false, false},
		{"free-form object", `{"type":"object","properties":{"m":{"type":"object"}},"required":["m"]}`, "", false, false},
		{"open object", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`, "", false, false},
		{"oneOf", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"integer"}]}},"required":["a"]}`, "", false, false},
		// The model writes its fields in the order of the properties: the caller's order stays,
		// in nested objects and wrapped ones too, and optional names join "required" in it.
		{"order kept", `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"object","properties":{"y":{"type":"integer","maximum":12345678901234567890},"b":{"type":"number"}},"required":["y"]},"mid":{"type":"string"}},"required":["mid"]}`,
			`{"type":"object","properties":{"zeta":{"type":["string","null"]},"alpha":{"type":["object","null"],"properties":{"y":{"type":"integer","maximum":12345678901234567890},"b":{"type":["number","null"]}},"required":["y","b"],"additionalProperties":false},"mid":{"type":"string"}},"required":["mid","zeta","alpha"],"additionalProperties":false}`, true, true},
		{"not JSON", `{`, "", false, false},
		{"two values", `{"type":"object","properties":{"a":{"type":"string"}}} {}`, "", false, false},
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
