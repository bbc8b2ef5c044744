package structured

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/docindex/docindex/docindex/dataset"
)

// SchemaName names the answer's schema for providers that want one (OpenAI: ^[a-zA-Z0-9_-]{1,64}$).
const SchemaName = "extraction"

// field is one key of a JSON object written in a fixed order: strict structured output generates
// the keys in schema order, so columns keep the order of the table definition.
type field struct {
	key string
	val any
}

type object []field

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.val)
		if err != nil {
			return nil, fmt.Errorf("schema key %s: %w", f.key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Schema is the JSON Schema of the answer for the tables, in the subset OpenAI's strict structured
// outputs accept: every property required, nullable columns as a type union with "null", no
// additional properties. The root is an object with one array of row objects per table.
//
// A numeric column is a JSON number: the answer is decoded into raw JSON values, so every digit
// the model writes reaches PostgreSQL's numeric unchanged.
func Schema(ts dataset.Tables) json.RawMessage {
	names := ts.Names()
	props := make(object, 0, len(names))
	for _, name := range names {
		t := ts[name]
		cols := make(object, 0, len(t.Columns))
		required := make([]string, 0, len(t.Columns))
		for _, c := range t.Columns {
			cols = append(cols, field{c.Name, columnSchema(c)})
			required = append(required, c.Name)
		}
		props = append(props, field{name, object{
			{"type", "array"},
			{"description", "Rows of table " + name + ": one object per record the document states; empty when it states none."},
			{"items", object{
				{"type", "object"},
				{"properties", cols},
				{"required", required},
				{"additionalProperties", false},
			}},
		}})
	}
	raw, err := json.Marshal(object{
		{"type", "object"},
		{"properties", props},
		{"required", names},
		{"additionalProperties", false},
	})
	if err != nil {
		// Only strings, bools and nested objects of them are marshalled: this cannot fail.
		panic(fmt.Sprintf("structured: schema: %v", err))
	}
	return raw
}

// jsonTypes maps column types to JSON Schema types.
var jsonTypes = map[string]string{
	"text":      "string",
	"integer":   "integer",
	"numeric":   "number",
	"boolean":   "boolean",
	"timestamp": "string",
}

func columnSchema(c dataset.Column) object {
	var typ any = jsonTypes[c.Type]
	if c.IsNullable() {
		typ = []string{jsonTypes[c.Type], "null"}
	}
	s := object{{"type", typ}}
	if c.Type == "timestamp" {
		s = append(s, field{"format", "date-time"})
	}
	if d := columnNote(c); d != "" {
		s = append(s, field{"description", d})
	}
	return s
}

// columnNote tells the model what a column needs beyond its JSON type.
func columnNote(c dataset.Column) string {
	var notes []string
	if c.Primary {
		notes = append(notes, "identifies the record: give each record once")
	}
	switch c.Type {
	case "numeric":
		notes = append(notes, "a plain number: no currency symbol, unit or thousands separator")
	case "timestamp":
		notes = append(notes, "RFC 3339 date-time; midnight UTC when only a date is stated")
	}
	if c.IsNullable() {
		notes = append(notes, "null when the document does not state it")
	}
	return strings.Join(notes, "; ")
}

// systemPrompt explains the task, describes the tables and passes on the collection's
// instructions, which come last so they can refine the general rules.
func systemPrompt(ts dataset.Tables, instructions string) string {
	var b strings.Builder
	b.WriteString("You extract structured data from documents into database tables.\n" +
		"Answer with one JSON object holding, for each table, an array with one object per record the document states " +
		"(an empty array when it states none).\n" +
		"Rules:\n" +
		"- Take every value from the document; never guess or invent one. Use null for a value the document does not state, where the column allows null.\n" +
		"- text: the value as written. integer: a whole number. numeric: a plain number without currency symbols, units or thousands separators. " +
		"boolean: true or false. timestamp: an RFC 3339 date-time (midnight UTC when only a date is stated).\n" +
		"- A primary column identifies a record: list each record once.\n" +
		"- The document may arrive in parts: answer for the part you are given.\n\n" +
		"Tables:\n")
	for _, name := range ts.Names() {
		t := ts[name]
		cols := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			attrs := []string{c.Type}
			if c.Primary {
				attrs = append(attrs, "primary")
			}
			if c.IsNullable() {
				attrs = append(attrs, "nullable")
			} else {
				attrs = append(attrs, "required")
			}
			cols[i] = fmt.Sprintf("%s (%s)", c.Name, strings.Join(attrs, ", "))
		}
		fmt.Fprintf(&b, "- %s: %s\n", name, strings.Join(cols, ", "))
		for _, r := range t.Relationships {
			fmt.Fprintf(&b, "  %s.%s refers to %s.%s\n", name, r.Column, r.ReferencesTable, r.ReferencesColumn)
		}
	}
	if s := strings.TrimSpace(instructions); s != "" {
		b.WriteString("\nInstructions from the owner of the collection:\n")
		b.WriteString(s)
		b.WriteString("\n")
	}
	return b.String()
}
