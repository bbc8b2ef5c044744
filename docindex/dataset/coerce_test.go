package dataset

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestCoerce(t *testing.T) {
	ts := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		typ, in string
		want    any
		err     string
	}{
		{"text", `"hello"`, "hello", ""},
		{"text", `42`, "42", ""},
		{"text", `true`, "true", ""},
		{"text", `{"a":1}`, nil, "expected text"},
		{"text", `[1]`, nil, "expected text"},
		{"text", `null`, nil, ""},
		{"integer", `42`, int64(42), ""},
		{"integer", `"42"`, int64(42), ""},
		{"integer", `" 7 "`, int64(7), ""},
		{"integer", `42.0`, int64(42), ""},
		{"integer", `4.2e1`, int64(42), ""},
		{"integer", `-9223372036854775808`, int64(-9223372036854775808), ""},
		{"integer", `42.5`, nil, "fraction"},
		{"integer", `9223372036854775808`, nil, "out of range"},
		{"integer", `"forty"`, nil, "expected integer"},
		{"integer", `"0x10"`, nil, "expected integer"},
		{"integer", `true`, nil, "expected integer"},
		{"integer", `""`, nil, "expected integer"},
		{"numeric", `3.14159265358979323846264338327950288`, "3.14159265358979323846264338327950288", ""},
		{"numeric", `"12.50"`, "12.50", ""},
		{"numeric", `-1e-3`, "-1e-3", ""},
		{"numeric", `"NaN"`, nil, "expected numeric"},
		{"numeric", `"Inf"`, nil, "expected numeric"},
		{"numeric", `"1,5"`, nil, "expected numeric"},
		{"numeric", `false`, nil, "expected numeric"},
		{"boolean", `true`, true, ""},
		{"boolean", `false`, false, ""},
		{"boolean", `1`, true, ""},
		{"boolean", `0`, false, ""},
		{"boolean", `"TRUE"`, true, ""},
		{"boolean", `"yes"`, true, ""},
		{"boolean", `"n"`, false, ""},
		{"boolean", `"0"`, false, ""},
		{"boolean", `2`, nil, "expected boolean"},
		{"boolean", `"maybe"`, nil, "expected boolean"},
		{"timestamp", `"2024-05-01T00:00:00Z"`, ts, ""},
		{"timestamp", `"2024-05-01T02:00:00+02:00"`, ts, ""},
		{"timestamp", `"2024-05-01"`, ts, ""},
		{"timestamp", `"2024-05-01 00:00:00"`, ts, ""},
		{"timestamp", `"2024-05-01T00:00"`, ts, ""},
		{"timestamp", `"2024-05-01 00:00"`, ts, ""},
		{"timestamp", `"05/01/2024"`, nil, "expected timestamp"},
		{"timestamp", `1714521600`, nil, "expected timestamp"},
		{"timestamp", `"2024-13-01"`, nil, "expected timestamp"},
	}
	for _, c := range cases {
		got, err := Coerce(c.typ, json.RawMessage(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: err %v, want one containing %q", c.typ, c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", c.typ, c.in, err)
			continue
		}
		if tt, ok := c.want.(time.Time); ok {
			if g, ok := got.(time.Time); !ok || !g.Equal(tt) {
				t.Errorf("%s %s = %v, want %v", c.typ, c.in, got, tt)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s %s = %#v, want %#v", c.typ, c.in, got, c.want)
		}
	}
}

func TestRow(t *testing.T) {
	no := false
	tbl := Table{Columns: []Column{
		{Name: "id", Type: "integer", Primary: true},
		{Name: "name", Type: "text", Nullable: &no},
		{Name: "note", Type: "text"},
	}}
	for in, want := range map[string]string{
		`{"id": 1, "name": "a"}`:               "",
		`{"id": 1, "name": "a", "note": null}`: "",
		`{"id": 1}`:                            `column "name" is required`,
		`{"id": 1, "name": null}`:              `column "name" must not be null`,
		`{"name": "a"}`:                        `column "id" is required`,
		`{"id": 1, "name": "a", "extra": 1}`:   `unknown column "extra"`,
		`{"id": "x", "name": "a"}`:             `column "id": expected integer`,
		`[1, 2]`:                               "row must be a JSON object",
		`"row"`:                                "row must be a JSON object",
	} {
		_, err := tbl.Row(json.RawMessage(in))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: err %v, want %q", in, err, want)
		}
	}
}

func TestDecodeRows(t *testing.T) {
	count := func(body string) (int, error) {
		n := 0
		err := DecodeRows(strings.NewReader(body), func(int, map[string]json.RawMessage) { n++ })
		return n, err
	}
	if n, err := count(`{"rows": [{"a": 1}, {"a": 2}]}`); n != 2 || err != nil {
		t.Fatalf("%d %v", n, err)
	}
	if n, err := count(`{"rows": []}`); n != 0 || err != nil {
		t.Fatalf("empty: %d %v", n, err)
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"rows": {}}`, `{"rows": [1,}`, `{"rows": [], "x": 1}`, `{"rows": []} {}`} {
		if _, err := count(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var b strings.Builder
	b.WriteString(`{"rows": [`)
	for i := 0; i <= MaxRows; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{}`)
	}
	b.WriteString(`]}`)
	if _, err := count(b.String()); err != ErrTooManyRows {
		t.Fatalf("%d rows: %v", MaxRows+1, err)
	}
}
