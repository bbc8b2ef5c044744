package dataset

import (
	"encoding/json"
	"errors"
)

// isDecimal reports whether s is a plain decimal number as JSON and PostgreSQL's numeric both
// read it: optional sign, digits with an optional fraction (or a fraction alone), an optional
// exponent. No hex, Inf, NaN or digit separators. A hand-written scan: this runs for every
// numeric value of an ingest.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

var errNotObject = errors.New("not an object")

// splitObject parses one JSON object (already known to be valid JSON, as the stream decoder
// checked it) into its members' raw values without reflection: ingest parses every row this way.
// Duplicate keys keep the last value, as encoding/json does.
func splitObject(raw []byte) (map[string]json.RawMessage, error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, errNotObject
	}
	obj := make(map[string]json.RawMessage, 8)
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return obj, nil
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return nil, errNotObject
		}
		end := stringEnd(raw, i)
		if end < 0 {
			return nil, errNotObject
		}
		var key string
		if k := raw[i+1 : end-1]; indexByte(k, '\\') < 0 {
			key = string(k)
		} else if err := json.Unmarshal(raw[i:end], &key); err != nil {
			return nil, err
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, errNotObject
		}
		i = skipSpace(raw, i+1)
		vend := valueEnd(raw, i)
		if vend < 0 {
			return nil, errNotObject
		}
		obj[key] = json.RawMessage(raw[i:vend])
		i = skipSpace(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
			continue
		}
		if i < len(raw) && raw[i] == '}' {
			return obj, nil
		}
		return nil, errNotObject
	}
	return nil, errNotObject
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// stringEnd returns the index just past the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd returns the index just past the JSON value starting at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
				if j < 0 {
					return -1
				}
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default: // number, true, false, null
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		return j
	}
}
