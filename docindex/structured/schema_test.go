package structured

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/docindex/docindex/docindex/dataset"
)

func boolp(b bool) *bool { return &b }

// invoiceTables has every column type, nullable and required columns, a primary column and a
// relationship.
func invoiceTables() dataset.Tables {
	return dataset.Tables{
		"invoices": {Columns: []dataset.Column{
			{Name: "number", Type: "text", Primary: true},
			{Name: "customer", Type: "text"},
			{Name: "total", Type: "numeric", Nullable: boolp(false)},
			{Name: "quantity", Type: "integer"},
			{Name: "paid", Type: "boolean"},
			{Name: "issued", Type: "timestamp"},
		}},
		"lines": {
			Columns: []dataset.Column{
				{Name: "invoice", Type: "text", Nullable: boolp(false)},
				{Name: "item", Type: "text"},
			},
			Relationships: []dataset.Relationship{{Column: "invoice", ReferencesTable: "invoices", ReferencesColumn: "number"}},
		},
	}
}

// checkStrict walks a schema and fails on anything OpenAI's strict mode refuses: an object
// that allows additional properties or leaves a property out of required.
func checkStrict(t *testing.T, path string, s map[string]any) {
	t.Helper()
	if s["type"] == "object" {
		if s["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties must be false, got %v", path, s["additionalProperties"])
		}
		props, _ := s["properties"].(map[string]any)
		req := map[string]bool{}
		for _, r := range s["required"].([]any) {
			req[r.(string)] = true
		}
		if len(req) != len(props) {
			t.Errorf("%s: required %v does not list every property", path, s["required"])
		}
		for name, p := range props {
			if !req[name] {
				t.Errorf("%s: property %s not required", path, name)
			}
			checkStrict(t, path+"."+name, p.(map[string]any))
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		checkStrict(t, path+"[]", items)
	}
}

func TestSchemaShape(t *testing.T) {
	raw := Schema(invoiceTables())
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("schema is not JSON: %v\n%s", err, raw)
	}
	checkStrict(t, "$", s)
	if got := s["required"]; !reflect.DeepEqual(got, []any{"invoices", "lines"}) {
		t.Errorf("root required = %v", got)
	}
	inv := s["properties"].(map[string]any)["invoices"].(map[string]any)
	if inv["type"] != "array" {
		t.Fatalf("invoices is %v, want an array", inv["type"])
	}
	cols := inv["items"].(map[string]any)["properties"].(map[string]any)
	want := map[string]any{
		"number":   "string",
		"customer": []any{"string", "null"},
		"total":    "number",
		"quantity": []any{"integer", "null"},
		"paid":     []any{"boolean", "null"},
		"issued":   []any{"string", "null"},
	}
	for name, typ := range want {
		if got := cols[name].(map[string]any)["type"]; !reflect.DeepEqual(got, typ) {
			t.Errorf("column %s: type %v, want %v", name, got, typ)
		}
	}
	if f := cols["issued"].(map[string]any)["format"]; f != "date-time" {
		t.Errorf("timestamp format = %v, want date-time", f)
	}
	if _, ok := cols["number"].(map[string]any)["format"]; ok {
		t.Errorf("text column has a format")
	}
}

func TestSchemaKeepsColumnOrder(t *testing.T) {
	// Strict output writes keys in schema order: the columns must keep the definition's order.
	raw := string(Schema(invoiceTables()))
	last := -1
	for _, c := range []string{`"number"`, `"customer"`, `"total"`, `"quantity"`, `"paid"`, `"issued"`} {
		i := strings.Index(raw, c+":{")
		if i < last {
			t.Fatalf("column %s out of order in %s", c, raw)
		}
		last = i
	}
}

func TestSystemPrompt(t *testing.T) {
	p := systemPrompt(invoiceTables(), "  Amounts are in euros; the customer is the billed company.  ")
	for _, want := range []string{
		"- invoices: number (text, primary, required), customer (text, nullable), total (numeric, required), quantity (integer, nullable), paid (boolean, nullable), issued (timestamp, nullable)",
		"- lines: invoice (text, required), item (text, nullable)",
		"lines.invoice refers to invoices.number",
		"Instructions from the owner of the collection:\nAmounts are in euros; the customer is the billed company.\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if p := systemPrompt(invoiceTables(), " \n"); strings.Contains(p, "Instructions from") {
		t.Errorf("blank instructions gave a heading:\n%s", p)
	}
}
