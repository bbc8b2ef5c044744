package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// timeLayouts are the timestamp forms accepted besides RFC 3339, each unambiguous: a date, a date
// with a time (UTC when no zone is given).
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02",
}

// Coerce turns one JSON value into the Go value of a column type, or says why it cannot. A JSON
// null gives nil (the caller checks nullability). Strings are coerced where the reading is
// unambiguous: "42" is an integer, "true" a boolean, "2024-05-01" a timestamp.
func Coerce(typ string, raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	isString := raw[0] == '"'
	if isString {
		// Most strings hold no escapes: slice them instead of running the JSON decoder.
		if len(raw) >= 2 && raw[len(raw)-1] == '"' && bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 {
			s = string(raw[1 : len(raw)-1])
		} else if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("malformed string")
		}
	}
	switch typ {
	case "text":
		switch {
		case isString:
			return s, nil
		case raw[0] == '{' || raw[0] == '[':
			return nil, fmt.Errorf("expected text, got a JSON %s", kind(raw))
		default: // numbers and booleans keep their literal spelling
			return string(raw), nil
		}
	case "integer":
		lit := string(raw)
		if isString {
			lit = strings.TrimSpace(s)
		} else if raw[0] == 't' || raw[0] == 'f' || raw[0] == '{' || raw[0] == '[' {
			return nil, fmt.Errorf("expected integer, got %s", kind(raw))
		}
		if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return n, nil
		}
		if !isDecimal(lit) {
			return nil, fmt.Errorf("expected integer, got %s", quote(raw))
		}
		// 42.0 and 4.2e1 are integers too; 42.5 is not.
		f, ok := new(big.Float).SetString(lit)
		if !ok {
			return nil, fmt.Errorf("expected integer, got %s", quote(raw))
		}
		if !f.IsInt() {
			return nil, fmt.Errorf("expected integer, got %s (has a fraction)", lit)
		}
		n, acc := f.Int64()
		if acc != big.Exact {
			return nil, fmt.Errorf("integer %s out of range", lit)
		}
		return n, nil
	case "numeric":
		lit := string(raw)
		if isString {
			lit = strings.TrimSpace(s)
		} else if raw[0] == 't' || raw[0] == 'f' || raw[0] == '{' || raw[0] == '[' {
			return nil, fmt.Errorf("expected numeric, got %s", kind(raw))
		}
		if !isDecimal(lit) {
			return nil, fmt.Errorf("expected numeric, got %s", quote(raw))
		}
		// Kept as its decimal text so PostgreSQL's numeric keeps every digit.
		return lit, nil
	case "boolean":
		if !isString {
			switch string(raw) {
			case "true", "1":
				return true, nil
			case "false", "0":
				return false, nil
			}
			return nil, fmt.Errorf("expected boolean, got %s", quote(raw))
		}
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "t", "yes", "y", "1":
			return true, nil
		case "false", "f", "no", "n", "0":
			return false, nil
		}
		return nil, fmt.Errorf("expected boolean, got %q", s)
	case "timestamp":
		if !isString {
			return nil, fmt.Errorf("expected timestamp as a string (RFC 3339 or YYYY-MM-DD[ HH:MM[:SS]]), got %s", kind(raw))
		}
		v := strings.TrimSpace(s)
		for _, l := range timeLayouts {
			if t, err := time.Parse(l, v); err == nil {
				return t.UTC(), nil
			}
		}
		return nil, fmt.Errorf("expected timestamp (RFC 3339 or YYYY-MM-DD[ HH:MM[:SS]]), got %q", s)
	}
	return nil, fmt.Errorf("unknown column type %q", typ)
}

func kind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	}
	return "number"
}

func quote(raw json.RawMessage) string {
	if len(raw) > 60 {
		return string(raw[:60]) + "..."
	}
	return string(raw)
}

// Row validates one JSON object against a table: unknown columns, missing or null non-nullable
// columns and values that cannot be coerced are errors. The result holds one value per column, in
// the table's column order (nil for absent nullable columns).
func (t Table) Row(raw json.RawMessage) ([]any, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		obj = nil
	}
	return t.RowObject(obj)
}

// RowObject is Row for an object already parsed into raw values (nil: the row was no object).
// It leaves one extra slot at the end of the result for the caller (the ingest order).
func (t Table) RowObject(obj map[string]json.RawMessage) ([]any, error) {
	if obj == nil {
		return nil, fmt.Errorf("row must be a JSON object")
	}
	for name := range obj {
		if _, ok := t.Column(name); !ok {
			return nil, fmt.Errorf("unknown column %q", name)
		}
	}
	out := make([]any, len(t.Columns), len(t.Columns)+1)
	for i, c := range t.Columns {
		v, present := obj[c.Name]
		val, err := Coerce(c.Type, v)
		if err != nil {
			return nil, fmt.Errorf("column %q: %v", c.Name, err)
		}
		if val == nil && !c.IsNullable() {
			if !present {
				return nil, fmt.Errorf("column %q is required", c.Name)
			}
			return nil, fmt.Errorf("column %q must not be null", c.Name)
		}
		out[i] = val
	}
	return out, nil
}
