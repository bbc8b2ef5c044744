package structured

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/extract"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/llm"
)

// scripted is a model that answers each request with the next reply of its script and keeps the
// requests for the test to look at.
type scripted struct {
	mu      sync.Mutex
	replies []func(llm.Request) (*llm.Response, error)
	reqs    []llm.Request
}

func (s *scripted) Models(context.Context) ([]llm.Model, error) {
	return []llm.Model{{ID: "scripted"}}, nil
}

func (s *scripted) Complete(_ context.Context, req llm.Request) (*llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if len(s.replies) == 0 {
		return nil, errors.New("scripted: no reply left")
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r(req)
}

func answer(content string) func(llm.Request) (*llm.Response, error) {
	return func(llm.Request) (*llm.Response, error) {
		return &llm.Response{Content: content, FinishReason: "stop"}, nil
	}
}

func pages(texts ...string) []extract.Page {
	out := make([]extract.Page, len(texts))
	for i, t := range texts {
		out[i] = extract.Page{Number: i + 1, Text: t}
	}
	return out
}

func TestExtractValidRows(t *testing.T) {
	m := &scripted{replies: []func(llm.Request) (*llm.Response, error){answer(`{
		"invoices": [{"number": "INV-7", "customer": "Acme", "total": 1250.50, "quantity": 3, "paid": true, "issued": "2024-05-01T00:00:00Z"}],
		"lines": [{"invoice": "INV-7", "item": "bolts"}, {"invoice": "INV-7", "item": null}]}`)}}
	e := New(m, "gpt-test")
	res, err := e.Extract(context.Background(), Input{Tables: invoiceTables(), Instructions: "Totals include VAT.",
		Name: "inv.txt", Pages: []extract.Page{{Text: "Invoice INV-7 for Acme"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 0 || res.Requests != 1 {
		t.Fatalf("warnings %v, requests %d", res.Warnings, res.Requests)
	}
	want := []any{"INV-7", "Acme", "1250.50", int64(3), true, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	if got := res.Rows["invoices"]; len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("invoices = %#v", got)
	}
	if got := res.Rows["lines"]; len(got) != 2 || got[1][1] != nil {
		t.Errorf("lines = %#v", got)
	}
	req := m.reqs[0]
	if req.Model != "gpt-test" || req.SchemaName != SchemaName || string(req.Schema) != string(Schema(invoiceTables())) {
		t.Errorf("request model %q schema name %q", req.Model, req.SchemaName)
	}
	if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		t.Fatalf("messages %+v", req.Messages)
	}
	if !strings.Contains(req.Messages[0].Content, "Totals include VAT.") {
		t.Errorf("instructions not in the system prompt")
	}
	if u := req.Messages[1].Content; !strings.Contains(u, `Document "inv.txt"`) || !strings.Contains(u, "Invoice INV-7 for Acme") || strings.Contains(u, "--- page") {
		t.Errorf("user message %q", u)
	}
}

func TestExtractRejectsInvalidRows(t *testing.T) {
	m := &scripted{replies: []func(llm.Request) (*llm.Response, error){answer(`{
		"invoices": [
			{"number": "A", "customer": "Ok Ltd", "total": 10, "quantity": null, "paid": null, "issued": null},
			{"number": "B", "customer": "Bad", "total": "ten euros", "quantity": null, "paid": null, "issued": null},
			{"number": "C", "total": 5, "colour": "red"},
			{"number": null, "total": 1},
			"not a row",
			{"number": "D", "total": 4, "issued": "yesterday"}
		],
		"lines": [], "extra": []}`)}}
	res, err := New(m, "x").Extract(context.Background(), Input{Tables: invoiceTables(), Pages: pages("text")})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Rows["invoices"]; len(got) != 1 || got[0][0] != "A" {
		t.Errorf("kept rows %v, want only A", got)
	}
	want := []string{
		`the answer names no table "extra"; ignored`,
		`table "invoices" row 1 rejected: column "total": expected numeric, got "ten euros"`,
		`table "invoices" row 2 rejected: unknown column "colour"`,
		`table "invoices" row 3 rejected: column "number" must not be null`,
		`table "invoices" row 4 rejected: row must be a JSON object`,
		`table "invoices" row 5 rejected: column "issued": expected timestamp`,
	}
	if len(res.Warnings) != len(want) {
		t.Fatalf("warnings %q", res.Warnings)
	}
	for i, w := range want {
		if !strings.HasPrefix(res.Warnings[i], "structured extraction: "+w) {
			t.Errorf("warning %d = %q, want %q", i, res.Warnings[i], w)
		}
	}
}

func TestExtractBoundsRowWarnings(t *testing.T) {
	var rows []string
	for i := range 25 {
		rows = append(rows, fmt.Sprintf(`{"number": "N%d", "total": "?"}`, i))
	}
	m := &scripted{replies: []func(llm.Request) (*llm.Response, error){answer(`{"invoices": [` + strings.Join(rows, ",") + `], "lines": []}`)}}
	res, err := New(m, "x").Extract(context.Background(), Input{Tables: invoiceTables(), Pages: pages("t")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != maxRowWarnings+1 || res.Warnings[maxRowWarnings] != "structured extraction: 5 more rows rejected" {
		t.Errorf("%d warnings, last %q", len(res.Warnings), res.Warnings[len(res.Warnings)-1])
	}
}

func TestExtractMaxPages(t *testing.T) {
	m := &scripted{replies: []func(llm.Request) (*llm.Response, error){answer(`{"invoices": [], "lines": []}`)}}
	doc := pages("first page MARK1", "second page MARK2", "third page MARK3", "fourth page MARK4")
	res, err := New(m, "x").Extract(context.Background(), Input{Tables: invoiceTables(), MaxPages: 2, Pages: doc, PageCount: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.reqs) != 1 {
		t.Fatalf("%d requests", len(m.reqs))
	}
	u := m.reqs[0].Messages[1].Content
	if !strings.Contains(u, "MARK1") || !strings.Contains(u, "MARK2") || strings.Contains(u, "MARK3") || strings.Contains(u, "MARK4") {
		t.Errorf("the model saw %q", u)
	}
	if len(res.Warnings) != 1 || res.Warnings[0] != "structured extraction read the first 2 of 4 pages (extractionMaxPages)" {
		t.Errorf("warnings %q", res.Warnings)
	}
	// No warning when the cap covers the document.
	m = &scripted{replies: []func(llm.Request) (*llm.Response, error){answer(`{"invoices": [], "lines": []}`)}}
	res, err = New(m, "x").Extract(context.Background(), Input{Tables: invoiceTables(), MaxPages: 4, Pages: doc, PageCount: 4})
	if err != nil || len(res.Warnings) != 0 {
		t.Errorf("cap of 4 on 4 pages: %v %q", err, res.Warnings)
	}
}

// TestExtractWindowsMerge sends a document in three windows; a record seen in two of them is
// stored once with the columns filled from both, and a failed window costs only its own rows.
func TestExtractWindowsMerge(t *testing.T) {
	page := func(s string) string { return s + " " + strings.Repeat("filler ", 300) } // ~2.1 kB: one page a window
	m := &scripted{replies: []func(llm.Request) (*llm.Response, error){
		answer(`{"invoices": [{"number": "A", "customer": null, "total": 1.50, "quantity": null, "paid": null, "issued": null}], "lines": [{"invoice": "A", "item": "x"}]}`),
		answer(`{"invoices": [{"number": "A", "customer": "Acme", "total": 1.5, "quantity": 2, "paid": null, "issued": null},
			{"number": "B", "customer": "Beta", "total": 2, "quantity": null, "paid": false, "issued": null}], "lines": [{"invoice": "A", "item": "x"}]}`),
		func(llm.Request) (*llm.Response, error) { return nil, errors.New("503 overloaded") },
		answer("```json\n" + `{"invoices": [], "lines": [{"invoice": "B", "item": "y"}]}` + "\n```"),
		func(llm.Request) (*llm.Response, error) {
			return &llm.Response{Content: `{"invoices": [{"number": "Z"`, FinishReason: "length"}, nil
		},
	}}
	res, err := New(m, "x", WithBudget(2500)).Extract(context.Background(), Input{Tables: invoiceTables(),
		Pages: pages(page("one"), page("two"), page("three"), page("four"), page("five")), PageCount: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 5 {
		t.Fatalf("%d requests, want 5", res.Requests)
	}
	inv := res.Rows["invoices"]
	if len(inv) != 2 || inv[0][0] != "A" || inv[0][1] != "Acme" || inv[0][2] != "1.50" || inv[0][3] != int64(2) || inv[1][0] != "B" {
		t.Errorf("invoices %v", inv)
	}
	if lines := res.Rows["lines"]; len(lines) != 3 {
		t.Errorf("lines %v: rows without a primary column are all kept", lines)
	}
	want := []string{
		"structured extraction failed (page 3): 503 overloaded",
		"structured extraction (page 5): the answer is not a JSON object (it was cut off at the output token limit); its rows are lost",
	}
	if !reflect.DeepEqual(res.Warnings, want) {
		t.Errorf("warnings %q", res.Warnings)
	}
	if u := m.reqs[1].Messages[1].Content; !strings.HasPrefix(u, "Document, part covering page 2 of 5:\n\n--- page 2 ---\ntwo ") {
		t.Errorf("second request starts %q", u[:60])
	}
}

func TestExtractCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := &scripted{replies: []func(llm.Request) (*llm.Response, error){func(llm.Request) (*llm.Response, error) {
		cancel()
		return nil, context.Canceled
	}}}
	if _, err := New(m, "x").Extract(ctx, Input{Tables: invoiceTables(), Pages: pages("t")}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestContextTokensShrinkBudget(t *testing.T) {
	if e := New(nil, "x", WithContextTokens(8000)); e.budget != 8000 {
		t.Errorf("budget %d for an 8k model", e.budget)
	}
	if e := New(nil, "x", WithContextTokens(1_000_000)); e.budget != DefaultBudget {
		t.Errorf("budget %d for a 1M model", e.budget)
	}
	if e := New(nil, "x", WithContextTokens(100)); e.budget != minBudget {
		t.Errorf("budget %d for a tiny model", e.budget)
	}
}

func TestKeyOf(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		typ  string
		a, b any
	}{
		{"numeric", "1.50", "1.5"},
		{"numeric", "1e2", "100"},
		{"timestamp", time.Date(2024, 1, 1, 1, 0, 0, 0, cet), time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"integer", int64(7), int64(7)},
	} {
		if keyOf(tc.typ, tc.a) != keyOf(tc.typ, tc.b) {
			t.Errorf("%s %v and %v have different keys", tc.typ, tc.a, tc.b)
		}
	}
	if keyOf("text", "1.50") == keyOf("text", "1.5") {
		t.Errorf("text keys compared as numbers")
	}
}

// The answer is decoded with raw values: make sure a big numeric keeps its digits end to end.
func TestNumericKeepsDigits(t *testing.T) {
	ts := dataset.Tables{"t": {Columns: []dataset.Column{{Name: "n", Type: "numeric"}}}}
	m := &scripted{replies: []func(llm.Request) (*llm.Response, error){answer(`{"t": [{"n": 12345678901234567890.123456789}]}`)}}
	res, err := New(m, "x").Extract(context.Background(), Input{Tables: ts, Pages: pages("t")})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Rows["t"][0][0]; got != "12345678901234567890.123456789" {
		t.Errorf("numeric %v", got)
	}
}

// A failed request is reported as Unavailable only when asking again later may help: a server
// or plugin that does not answer, rate limits; not a refusal, a wrong key or an unknown model.
func TestExtractUnavailable(t *testing.T) {
	fail := func(err error) func(llm.Request) (*llm.Response, error) {
		return func(llm.Request) (*llm.Response, error) { return nil, err }
	}
	for _, tc := range []struct {
		err     error
		passing bool
	}{
		{errors.New("POST /v1/chat/completions: 503 Service Unavailable"), true},
		{fmt.Errorf("llm plugin: %w", plugins.ErrUnavailable), true},
		{fmt.Errorf("429: %w", plugins.ErrRateLimited), true},
		{fmt.Errorf("refused: %w", plugins.ErrInvalidArgument), false},
		{fmt.Errorf("401: %w", plugins.ErrUnauthenticated), false},
		{fmt.Errorf("gpt-9: %w", llm.ErrUnknownModel), false},
	} {
		// Two windows: the first fails, the second answers; its rows count either way.
		m := &scripted{replies: []func(llm.Request) (*llm.Response, error){fail(tc.err),
			answer(`{"invoices": [{"number": "INV-8", "total": 1}], "lines": []}`)}}
		res, err := New(m, "gpt-test", WithBudget(minBudget)).Extract(context.Background(), Input{Tables: invoiceTables(),
			Name: "two.txt", Pages: pages(strings.Repeat("a ", 750), "Invoice INV-8 "+strings.Repeat("b ", 500))})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Unavailable != nil; got != tc.passing || (got && !errors.Is(res.Unavailable, tc.err)) {
			t.Errorf("%v: Unavailable = %v, want passing %v", tc.err, res.Unavailable, tc.passing)
		}
		if res.Requests != 2 || len(res.Rows["invoices"]) != 1 || len(res.Warnings) != 1 {
			t.Errorf("%v: %d requests, rows %v, warnings %v", tc.err, res.Requests, res.Rows, res.Warnings)
		}
	}
}
