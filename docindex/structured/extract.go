package structured

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/extract"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/llm"
)

// Defaults of an Extractor.
const (
	// DefaultBudget is the text of one request in bytes: about 12k tokens of English, which
	// leaves room for the answer in the context of current chat models.
	DefaultBudget = 48000
	// minBudget keeps a model with a tiny context from splitting a document into crumbs.
	minBudget = 2000
	// maxRowWarnings bounds the rejected rows reported one by one; the rest are counted.
	maxRowWarnings = 20
)

// Extractor asks a language model for the rows of extraction tables.
type Extractor struct {
	llm    llm.LLM
	model  string
	budget int
}

// Option configures an Extractor.
type Option func(*Extractor)

// WithBudget sets how many bytes of document text go into one request (default DefaultBudget).
func WithBudget(n int) Option { return func(e *Extractor) { e.budget = n } }

// WithContextTokens fits the budget to a model's context window: a quarter of it for the
// document (about four bytes a token), the rest for the prompt and the answer. 0: unknown.
func WithContextTokens(n int) Option {
	return func(e *Extractor) {
		if n > 0 {
			e.budget = min(e.budget, max(n, minBudget))
		}
	}
}

// New returns an Extractor that asks model of m.
func New(m llm.LLM, model string, opts ...Option) *Extractor {
	e := &Extractor{llm: m, model: model, budget: DefaultBudget}
	for _, o := range opts {
		o(e)
	}
	e.budget = max(e.budget, minBudget)
	return e
}

// Input is what to extract from which document.
type Input struct {
	Tables       dataset.Tables
	Instructions string // the collection's extractionInstructions
	MaxPages     int    // pages read at most; <= 0: no cap
	Name         string // file name, shown to the model
	Pages        []extract.Page
	PageCount    int // pages in the source, 0 when not paged
}

// Result is what the model extracted.
type Result struct {
	// Rows holds the valid rows per table, values in column order, ready for Replace.
	Rows map[string][][]any
	// Warnings says which rows were rejected and why, which parts of the document were not
	// read (the page cap, a failed request). Empty means everything went in.
	Warnings []string
	// Requests is the number of completions asked for.
	Requests int
	// Unavailable is the first request error that may pass (the model's server down or busy,
	// the plugin restarting), as opposed to one the request itself caused (a refusal, a wrong
	// key, an unknown model). A caller that can try again later may prefer that to keeping
	// the rows that did come back.
	Unavailable error
}

// passing tells whether a failed completion may succeed when asked again later.
func passing(err error) bool {
	for _, lasting := range []error{plugins.ErrInvalidArgument, plugins.ErrUnauthenticated,
		plugins.ErrPermissionDenied, plugins.ErrNotReady, plugins.ErrUnimplemented, plugins.ErrNotFound, llm.ErrUnknownModel} {
		if errors.Is(err, lasting) {
			return false
		}
	}
	return true
}

// Extract asks the model for the rows of every table, window by window, and validates each
// row against its table. A failed request or an unreadable answer costs the rows of its
// window and adds a warning; the other windows still count. The error is only for a
// cancelled context.
func (e *Extractor) Extract(ctx context.Context, in Input) (*Result, error) {
	res := &Result{Rows: map[string][][]any{}}
	pages, total, cut := capPages(in.Pages, in.PageCount, in.MaxPages)
	if cut {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"structured extraction read the first %d of %d pages (extractionMaxPages)", in.MaxPages, total))
	}
	paged := in.PageCount > 0 || len(pages) > 1
	wins := windows(pages, paged, e.budget)
	schema := Schema(in.Tables)
	system := systemPrompt(in.Tables, in.Instructions)
	m := newMerger(in.Tables)
	rejected := 0
	for _, w := range wins {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("structured extraction: %w", err)
		}
		where := ""
		if len(wins) > 1 {
			where = " (" + w.label() + ")"
		}
		res.Requests++
		resp, err := e.llm.Complete(ctx, llm.Request{
			Model: e.model,
			Messages: []llm.Message{
				{Role: "system", Content: system},
				{Role: "user", Content: userPrompt(in.Name, w, total, len(wins) > 1) + w.text},
			},
			Schema:     schema,
			SchemaName: SchemaName,
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("structured extraction: %w", ctx.Err())
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("structured extraction failed%s: %v", where, err))
			if res.Unavailable == nil && passing(err) {
				res.Unavailable = err
			}
			continue
		}
		answer, err := parseAnswer(resp)
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("structured extraction%s: %v", where, err))
			continue
		}
		for _, name := range sortedKeys(answer) {
			if _, ok := in.Tables[name]; !ok {
				res.Warnings = append(res.Warnings, fmt.Sprintf("structured extraction%s: the answer names no table %q; ignored", where, name))
			}
		}
		for _, name := range in.Tables.Names() {
			t := in.Tables[name]
			raw, ok := answer[name]
			if !ok || isNull(raw) {
				continue // no rows for this table
			}
			var rows []json.RawMessage
			if err := json.Unmarshal(raw, &rows); err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("structured extraction%s: table %q is not an array of rows; ignored", where, name))
				continue
			}
			for i, r := range rows {
				var obj map[string]json.RawMessage
				if err := json.Unmarshal(r, &obj); err != nil {
					obj = nil // RowObject says the row is no object
				}
				vals, err := t.RowObject(obj)
				if err != nil {
					rejected++
					if rejected <= maxRowWarnings {
						res.Warnings = append(res.Warnings, fmt.Sprintf("structured extraction%s: table %q row %d rejected: %v", where, name, i, err))
					}
					continue
				}
				m.add(name, vals)
			}
		}
	}
	if rejected > maxRowWarnings {
		res.Warnings = append(res.Warnings, fmt.Sprintf("structured extraction: %d more rows rejected", rejected-maxRowWarnings))
	}
	res.Rows = m.rows
	return res, nil
}

// userPrompt heads the document text: which file, which part of it.
func userPrompt(name string, w window, total int, parts bool) string {
	var b strings.Builder
	b.WriteString("Document")
	if name != "" {
		fmt.Fprintf(&b, " %q", name)
	}
	if parts {
		fmt.Fprintf(&b, ", part covering %s", w.label())
		if total > 0 {
			fmt.Fprintf(&b, " of %d", total)
		}
	}
	b.WriteString(":\n\n")
	return b.String()
}

// parseAnswer reads the model's JSON object. Models served without strict structured output
// may wrap it in a Markdown code fence: that is taken off.
func parseAnswer(resp *llm.Response) (map[string]json.RawMessage, error) {
	if resp == nil {
		return nil, fmt.Errorf("the model gave no answer")
	}
	text := strings.TrimSpace(resp.Content)
	if strings.HasPrefix(text, "```") {
		text = strings.TrimPrefix(text, "```json")
		text = strings.TrimPrefix(text, "```")
		text = strings.TrimSuffix(strings.TrimSpace(text), "```")
	}
	var answer map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &answer); err != nil || answer == nil {
		why := "the answer is not a JSON object"
		if resp.FinishReason == "length" {
			why += " (it was cut off at the output token limit)"
		}
		return nil, fmt.Errorf("%s; its rows are lost", why)
	}
	return answer, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// merger collects the rows of all windows. In a table with a primary column a record is stored
// once per file (the table has UNIQUE (_file_id, primary)): a record seen again, in another
// window or twice in one answer, fills the columns still null and otherwise keeps the first
// values. Rows of tables without a primary column are all kept.
type merger struct {
	tables dataset.Tables
	rows   map[string][][]any
	index  map[string]map[string]int // table -> primary key -> row in rows
}

func newMerger(ts dataset.Tables) *merger {
	return &merger{tables: ts, rows: map[string][][]any{}, index: map[string]map[string]int{}}
}

func (m *merger) add(table string, vals []any) {
	t := m.tables[table]
	pk, ok := t.Primary()
	if !ok {
		m.rows[table] = append(m.rows[table], vals)
		return
	}
	col := 0
	for i, c := range t.Columns {
		if c.Name == pk.Name {
			col = i
		}
	}
	key := keyOf(pk.Type, vals[col])
	idx := m.index[table]
	if idx == nil {
		idx = map[string]int{}
		m.index[table] = idx
	}
	if i, seen := idx[key]; seen {
		prev := m.rows[table][i]
		for c, v := range vals {
			if prev[c] == nil {
				prev[c] = v
			}
		}
		return
	}
	idx[key] = len(m.rows[table])
	m.rows[table] = append(m.rows[table], vals)
}

// keyOf spells a coerced value so that values PostgreSQL holds equal spell the same:
// numeric 1.50 and 1.5, one instant in two zones.
func keyOf(typ string, v any) string {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case string:
		if typ == "numeric" {
			if r, ok := new(big.Rat).SetString(x); ok {
				return r.RatString()
			}
		}
		return x
	}
	return fmt.Sprint(v)
}
