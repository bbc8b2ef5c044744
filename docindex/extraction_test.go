package docindex_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/images/imagestest"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/vectorstore"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
	"github.com/docindex/docindex/plugins/llms/openai"
)

// These tests run structured extraction end to end: uploads through the HTTP API, the real
// indexing pipeline and workers on PostgreSQL, and the openai LLM provider talking to chatModel,
// an HTTP server in OpenAI's published chat-completions shapes (response_format json_schema)
// that answers like a model would: it reads the document in the prompt and fills the schema.

const (
	chatAPIKey = "sk-extraction-test"
	chatModel  = "gpt-4o-mini"
)

// chatServer is an OpenAI-compatible chat-completions endpoint backed by extractionModel.
type chatServer struct {
	URL  string // base URL, ending in /v1
	mu   sync.Mutex
	reqs []chatCall
	// hold, when set, makes the server hold a request whose prompt contains it: arrived gets
	// the request, and the answer waits for release (or the client giving up).
	hold             string
	arrived, release chan struct{}
	// down, while above zero, answers that many requests 503 as an overloaded server does.
	down int
}

// chatCall is a request as the server received it, in OpenAI's shape.
type chatCall struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

func (c chatCall) message(role string) string {
	for _, m := range c.Messages {
		if m.Role == role {
			return m.Content
		}
	}
	return ""
}

func newChatServer(t *testing.T) *chatServer {
	cs := &chatServer{}
	srv := httptest.NewServer(http.HandlerFunc(cs.serve))
	t.Cleanup(srv.Close)
	cs.URL = srv.URL + "/v1"
	return cs
}

// provider is the real openai provider pointed at the server.
func (cs *chatServer) provider() *openai.Provider {
	return openai.New(openai.WithBaseURL(cs.URL), openai.WithAPIKey(chatAPIKey),
		openai.WithModels(openai.Model{ID: chatModel, ContextTokens: 128000}),
		openai.WithRetries(0, time.Millisecond, time.Millisecond))
}

func (cs *chatServer) calls() []chatCall {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return slices.Clone(cs.reqs)
}

// callsFor returns the requests about one file (the prompt names the file).
func (cs *chatServer) callsFor(name string) []chatCall {
	var out []chatCall
	for _, c := range cs.calls() {
		if strings.Contains(c.message("user"), fmt.Sprintf("Document %q", name)) {
			out = append(out, c)
		}
	}
	return out
}

func chatError(w http.ResponseWriter, status int, typ, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

func (cs *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		chatError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", "Unknown request URL: "+r.Method+" "+r.URL.Path)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+chatAPIKey {
		chatError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.")
		return
	}
	var call chatCall
	if err := json.NewDecoder(r.Body).Decode(&call); err != nil {
		chatError(w, http.StatusBadRequest, "invalid_request_error", "", "We could not parse the JSON body of your request.")
		return
	}
	cs.mu.Lock()
	cs.reqs = append(cs.reqs, call)
	hold := cs.hold != "" && strings.Contains(call.message("user"), cs.hold)
	down := cs.down > 0
	if down {
		cs.down--
	}
	cs.mu.Unlock()
	if hold {
		cs.arrived <- struct{}{}
		select {
		case <-cs.release:
		case <-r.Context().Done():
			return
		}
	}
	if down {
		chatError(w, http.StatusServiceUnavailable, "server_error", "", "The server is overloaded or not ready yet.")
		return
	}
	if call.Model != chatModel {
		chatError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", call.Model))
		return
	}
	rf := call.ResponseFormat
	if rf == nil || rf.Type != "json_schema" || rf.JSONSchema == nil || !regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`).MatchString(rf.JSONSchema.Name) {
		chatError(w, http.StatusBadRequest, "invalid_request_error", "", "response_format must be json_schema with a valid name")
		return
	}
	var schema jsonSchema
	if err := json.Unmarshal(rf.JSONSchema.Schema, &schema); err != nil || schema.Type != "object" {
		chatError(w, http.StatusBadRequest, "invalid_request_error", "", "Invalid schema for response_format: the root must be an object")
		return
	}
	if msg := strictProblem("", &schema); rf.JSONSchema.Strict && msg != "" {
		chatError(w, http.StatusBadRequest, "invalid_request_error", "", "Invalid schema for response_format '"+rf.JSONSchema.Name+"': "+msg)
		return
	}
	content := extractionModel(call.message("system"), call.message("user"), &schema)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-" + uuid.NewString(), "object": "chat.completion", "created": time.Now().Unix(), "model": chatModel + "-2024-07-18",
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content, "refusal": nil},
			"logprobs":      nil,
			"finish_reason": "stop",
		}},
		"usage":              map[string]any{"prompt_tokens": len(call.message("user")) / 4, "completion_tokens": len(content) / 4, "total_tokens": (len(call.message("user")) + len(content)) / 4},
		"system_fingerprint": "fp_test",
	})
}

// jsonSchema is the part of a JSON Schema the model reads.
type jsonSchema struct {
	Type                 any                    `json:"type"`
	Format               string                 `json:"format"`
	Properties           map[string]*jsonSchema `json:"properties"`
	Items                *jsonSchema            `json:"items"`
	Required             []string               `json:"required"`
	AdditionalProperties *bool                  `json:"additionalProperties"`
}

// types returns the schema's types, "null" left out.
func (s *jsonSchema) types() []string {
	switch t := s.Type.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if x != "null" {
				out = append(out, fmt.Sprint(x))
			}
		}
		return out
	}
	return nil
}

// strictProblem says why OpenAI's strict mode would refuse the schema ("" when it would not):
// every object lists all its properties as required and forbids additional ones.
func strictProblem(path string, s *jsonSchema) string {
	if slices.Contains(s.types(), "object") {
		if s.AdditionalProperties == nil || *s.AdditionalProperties {
			return "In context=(" + path + "), 'additionalProperties' is required to be supplied and to be false."
		}
		for name, p := range s.Properties {
			if !slices.Contains(s.Required, name) {
				return "In context=(" + path + "), 'required' is required to be supplied and to be an array including every key in properties. Missing '" + name + "'."
			}
			if msg := strictProblem(path+"."+name, p); msg != "" {
				return msg
			}
		}
	}
	if s.Items != nil {
		return strictProblem(path+"[]", s.Items)
	}
	return ""
}

var (
	labelRe    = regexp.MustCompile(`^\W*([A-Za-z][A-Za-z ]*?)\W*:\s*(.+?)\W*$`)
	lineItemRe = regexp.MustCompile(`^\W*(\d+) x (.+?)\W*$`)
)

// extractionModel answers like a language model asked for the rows of the schema: it reads the
// document part of the prompt, where each "Invoice number:" starts an invoice whose fields
// follow as "Label: value" lines and whose items as "- N x description" lines, and fills each
// column with the value of the label that names it, in the column's JSON type. Like models
// behind servers that do not enforce "format", it copies a date it cannot read as written.
// It follows one instruction: customer names in upper case.
func extractionModel(system, user string, schema *jsonSchema) string {
	upper := strings.Contains(strings.ToLower(system), "customer names in upper case")
	type invoice struct {
		fields map[string]string
		items  [][2]string
	}
	var invoices []*invoice
	for _, line := range strings.Split(user, "\n") {
		line = strings.TrimSpace(line)
		if m := lineItemRe.FindStringSubmatch(line); m != nil && len(invoices) > 0 {
			inv := invoices[len(invoices)-1]
			inv.items = append(inv.items, [2]string{m[1], m[2]})
			continue
		}
		m := labelRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		label := strings.ReplaceAll(strings.ToLower(m[1]), " ", "_")
		if label == "invoice_number" {
			invoices = append(invoices, &invoice{fields: map[string]string{}})
		}
		if len(invoices) > 0 {
			invoices[len(invoices)-1].fields[label] = m[2]
		}
	}
	answer := map[string][]map[string]any{}
	for table, ts := range schema.Properties {
		rows := []map[string]any{}
		for _, inv := range invoices {
			switch table {
			case "invoices":
				row := map[string]any{}
				for col, cs := range ts.Items.Properties {
					key := col
					if col == "number" {
						key = "invoice_number"
					}
					v, ok := inv.fields[key]
					if !ok {
						row[col] = nil
						continue
					}
					if col == "customer" && upper {
						v = strings.ToUpper(v)
					}
					row[col] = typed(v, cs)
				}
				rows = append(rows, row)
			case "line_items":
				for _, it := range inv.items {
					rows = append(rows, map[string]any{"invoice": inv.fields["invoice_number"],
						"quantity": typed(it[0], ts.Items.Properties["quantity"]), "description": it[1]})
				}
			}
		}
		answer[table] = rows
	}
	out, _ := json.Marshal(answer)
	return string(out)
}

// typed writes a value as the column's JSON type asks.
func typed(v string, s *jsonSchema) any {
	switch s.types()[0] {
	case "number", "integer":
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' || r == '.' || r == '-' {
				return r
			}
			return -1
		}, v)
		return json.Number(digits)
	case "boolean":
		return strings.EqualFold(v, "yes") || strings.EqualFold(v, "true")
	}
	if s.Format == "date-time" {
		if d, err := time.Parse("2006-01-02", v); err == nil {
			return d.Format(time.RFC3339)
		}
	}
	return v
}

// The collection's extraction schema: every column type, a primary column, nullable and
// required columns, a second table without a primary column.
var invoiceSchema = map[string]any{
	"invoices": map[string]any{"columns": []any{
		map[string]any{"name": "number", "type": "text", "primary": true},
		map[string]any{"name": "customer", "type": "text"},
		map[string]any{"name": "total", "type": "numeric", "nullable": false},
		map[string]any{"name": "items", "type": "integer"},
		map[string]any{"name": "paid", "type": "boolean"},
		map[string]any{"name": "issued", "type": "timestamp"},
	}},
	"line_items": map[string]any{
		"columns": []any{
			map[string]any{"name": "invoice", "type": "text", "nullable": false},
			map[string]any{"name": "description", "type": "text"},
			map[string]any{"name": "quantity", "type": "integer"},
		},
		"relationships": []any{map[string]any{"column": "invoice", "referencesTable": "invoices", "referencesColumn": "number"}},
	},
}

// The test documents, in several formats.
const (
	invoiceText = "ACME SUPPLIES - INVOICE\n\nInvoice number: INV-001\nCustomer: Acme Corp\nTotal: 1,250.50 EUR\n" +
		"Items: 3\nPaid: yes\nIssued: 2024-03-05\n\n- 2 x Steel bolts\n- 1 x Hammer\n"
	invoiceMarkdown = "# Statements for March\n\nTwo invoices were sent this month.\n\n" +
		"## First\n\nInvoice number: INV-002\n\nCustomer: Beta GmbH\n\nTotal: 99.90\n\nPaid: no\n\nIssued: 2024-03-11\n\n- 5 x Copper wire\n\n" +
		"## Second\n\nInvoice number: INV-003\n\nCustomer: Gamma Ltd\n\nTotal: 12000\n\nItems: 12\n"
	invoiceHTML = `<!DOCTYPE html><html><head><title>Invoice INV-004</title></head><body><main>
<h1>Invoice</h1><p>Invoice number: INV-004</p><p>Customer: Delta Inc</p><p>Total: 0.99</p>
<p>Paid: yes</p><p>Issued: 2024-04-01</p></main></body></html>`
	// The second invoice's date is no date: the model copies it and the row is rejected.
	invoiceBadDate = "Invoice number: INV-010\nCustomer: Good Co\nTotal: 10\nIssued: 2024-05-02\n\n" +
		"Invoice number: INV-011\nCustomer: Vague Co\nTotal: 20\nIssued: end of March\n"
)

// extEnv is a server whose service has the openai provider pointed at a chatServer.
type extEnv struct {
	s    *docindextest.Server
	chat *chatServer
	tok  string
}

// newExtEnv starts the server and its workers; h, when given, runs the jobs instead of the
// service itself.
func newExtEnv(t *testing.T, withLLM bool, h ...worker.Handler) *extEnv {
	return newExtEnvWith(t, withLLM, nil, h...)
}

// newExtEnvWith is newExtEnv with more service options.
func newExtEnvWith(t *testing.T, withLLM bool, more []docindex.Option, h ...worker.Handler) *extEnv {
	t.Helper()
	e := &extEnv{chat: newChatServer(t)}
	opts := append([]docindex.Option{docindex.WithEmbedders(hash.New())}, more...)
	if withLLM {
		opts = append(opts, docindex.WithLLM(e.chat.provider()))
	}
	e.s = docindextest.NewServer(t, opts...)
	var handler worker.Handler
	if len(h) > 0 {
		handler = h[0]
	}
	e.s.StartWorkers(handler)
	e.tok = e.s.Token(docindextest.User{Email: "clerk@example.com", Name: "Clerk"})
	return e
}

// collection creates a rag collection with structured extraction.
func (e *extEnv) collection(t *testing.T, name, instructions string, maxPages any) string {
	t.Helper()
	se := map[string]any{"enabled": true, "instructions": instructions}
	if maxPages != nil {
		se["maxPages"] = maxPages
	}
	r := e.s.Do("POST", "/api/collections", e.tok, map[string]any{"name": name, "tables": invoiceSchema, "structuredExtraction": se})
	if r.Status != http.StatusCreated {
		t.Fatalf("create collection: %d %s", r.Status, r.Body)
	}
	return r.Map(t)["id"].(string)
}

func (e *extEnv) upload(t *testing.T, coll, name, ctype string, data []byte) string {
	t.Helper()
	r := e.s.Upload(e.tok, docindextest.FileUpload{CollectionID: coll, Name: name, ContentType: ctype, Body: bytes.NewReader(data)})
	if r.Status != http.StatusCreated {
		t.Fatalf("upload %s: %d %s", name, r.Status, r.Body)
	}
	return r.Map(t)["file"].(map[string]any)["id"].(string)
}

// file returns a file's status and warning through the API.
func (e *extEnv) file(t *testing.T, id string) (status, warning string) {
	t.Helper()
	r := e.s.Do("GET", "/files/"+id, e.tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get file %s: %d %s", id, r.Status, r.Body)
	}
	var body struct {
		File struct {
			Status  string `json:"status"`
			Warning string `json:"warning"`
		} `json:"file"`
	}
	r.JSON(t, &body)
	return body.File.Status, body.File.Warning
}

// rows reads a table through the API, numbers kept exact, ordered by the primary column.
func (e *extEnv) rows(t *testing.T, coll, table string) []map[string]any {
	t.Helper()
	r := e.s.Do("GET", "/api/collections/"+coll+"/tables/"+table+"/rows?limit=1000", e.tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("rows of %s: %d %s", table, r.Status, r.Body)
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	var body struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("rows of %s: %v", table, err)
	}
	return body.Rows
}

// invoiceRow is a row of the invoices table read with its SQL types.
type invoiceRow struct {
	FileID   uuid.UUID
	Number   string
	Customer sql.NullString
	Total    string // numeric as text: every digit
	Items    sql.NullInt64
	Paid     sql.NullBool
	Issued   sql.NullTime
}

// invoices reads the invoices table with SQL, proving the values are stored in typed columns.
func (e *extEnv) invoices(t *testing.T, coll string) map[string]invoiceRow {
	t.Helper()
	rows, err := e.s.DB.QueryContext(context.Background(),
		"SELECT _file_id, number, customer, total::text, items, paid, issued FROM ?.invoices ORDER BY number",
		bun.Ident(dataset.Schema(uuid.MustParse(coll))))
	if err != nil {
		t.Fatalf("read invoices: %v", err)
	}
	defer rows.Close()
	out := map[string]invoiceRow{}
	for rows.Next() {
		var r invoiceRow
		if err := rows.Scan(&r.FileID, &r.Number, &r.Customer, &r.Total, &r.Items, &r.Paid, &r.Issued); err != nil {
			t.Fatalf("scan invoice: %v", err)
		}
		out[r.Number] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func numbers(m map[string]invoiceRow) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// TestExtractionFillsTypedTable is the acceptance test: a set of documents in several
// formats fills a typed table through the OpenAI-shaped server; the collection's instructions
// reach the model; reindex replaces a file's rows and delete removes them.
func TestExtractionFillsTypedTable(t *testing.T) {
	e := newExtEnv(t, true)
	const instructions = "Amounts are in euros. Write customer names in upper case."
	coll := e.collection(t, "invoices", instructions, nil)
	txt := e.upload(t, coll, "acme.txt", "text/plain", []byte(invoiceText))
	md := e.upload(t, coll, "march.md", "text/markdown", []byte(invoiceMarkdown))
	html := e.upload(t, coll, "delta.html", "text/html", []byte(invoiceHTML))
	e.s.WaitIdle(60 * time.Second)
	for _, id := range []string{txt, md, html} {
		if status, warning := e.file(t, id); status != "indexed" || warning != "" {
			t.Errorf("file %s: %s %q, want indexed", id, status, warning)
		}
	}

	inv := e.invoices(t, coll)
	if got := numbers(inv); !slices.Equal(got, []string{"INV-001", "INV-002", "INV-003", "INV-004"}) {
		t.Fatalf("invoices %v", got)
	}
	a := inv["INV-001"]
	if a.FileID.String() != txt || a.Customer.String != "ACME CORP" || a.Total != "1250.50" || a.Items.Int64 != 3 ||
		!a.Paid.Valid || !a.Paid.Bool || !a.Issued.Time.Equal(time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("INV-001 = %+v", a)
	}
	if b := inv["INV-002"]; b.FileID.String() != md || b.Total != "99.90" || b.Items.Valid || !b.Paid.Valid || b.Paid.Bool {
		t.Errorf("INV-002 = %+v (items not stated: null; paid: false)", b)
	}
	if c := inv["INV-003"]; c.FileID.String() != md || c.Total != "12000" || c.Items.Int64 != 12 || c.Paid.Valid || c.Issued.Valid {
		t.Errorf("INV-003 = %+v", c)
	}
	if d := inv["INV-004"]; d.FileID.String() != html || d.Customer.String != "DELTA INC" || d.Total != "0.99" {
		t.Errorf("INV-004 = %+v", d)
	}
	// The rows endpoint shows the same typed values.
	api := e.rows(t, coll, "invoices")
	if len(api) != 4 || api[0]["number"] != "INV-001" || api[0]["total"] != json.Number("1250.50") || api[0]["items"] != json.Number("3") || api[0]["paid"] != true {
		t.Errorf("rows endpoint: %v", api)
	}
	lines := e.rows(t, coll, "line_items")
	if len(lines) != 3 {
		t.Errorf("line items %v, want 3", lines)
	}

	// What the model was asked: strict structured output with the tables' schema, the
	// instructions in the system message, the document in the user message.
	calls := e.chat.calls()
	if len(calls) != 3 {
		t.Fatalf("%d requests, want one per document", len(calls))
	}
	for _, c := range calls {
		js := c.ResponseFormat.JSONSchema
		if c.Model != chatModel || !js.Strict || js.Name != "extraction" || !strings.Contains(string(js.Schema), `"format":"date-time"`) {
			t.Errorf("request model %q strict %v name %q", c.Model, js.Strict, js.Name)
		}
		if !strings.Contains(c.message("system"), instructions) {
			t.Errorf("the instructions are not in the system message: %q", c.message("system"))
		}
	}
	if u := e.chat.callsFor("acme.txt"); len(u) != 1 || !strings.Contains(u[0].message("user"), "Customer: Acme Corp") {
		t.Errorf("the document is not in the prompt: %v", u)
	}

	// Reindex with other instructions: the file's rows are replaced, not added to.
	r := e.s.Do("PUT", "/api/collections/"+coll, e.tok, map[string]any{"extractionInstructions": "Amounts are in euros."})
	if r.Status != http.StatusOK {
		t.Fatalf("update collection: %d %s", r.Status, r.Body)
	}
	if r := e.s.Do("POST", "/files/"+txt+"/reindex", e.tok, nil); r.Status != http.StatusOK && r.Status != http.StatusAccepted {
		t.Fatalf("reindex: %d %s", r.Status, r.Body)
	}
	e.s.WaitIdle(60 * time.Second)
	inv = e.invoices(t, coll)
	if len(inv) != 4 || inv["INV-001"].Customer.String != "Acme Corp" || inv["INV-004"].Customer.String != "DELTA INC" {
		t.Errorf("after reindex: %v; INV-001 %+v", numbers(inv), inv["INV-001"])
	}
	if lines := e.rows(t, coll, "line_items"); len(lines) != 3 {
		t.Errorf("after reindex: %d line items, want 3", len(lines))
	}

	// Delete: the file's rows vanish from every table; the other files keep theirs.
	if r := e.s.Do("DELETE", "/files/"+md, e.tok, nil); r.Status/100 != 2 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if got := numbers(e.invoices(t, coll)); !slices.Equal(got, []string{"INV-001", "INV-004"}) {
		t.Errorf("after delete: invoices %v", got)
	}
	for _, l := range e.rows(t, coll, "line_items") {
		if l["invoice"] == "INV-002" {
			t.Errorf("a line item of the deleted file is left: %v", l)
		}
	}
}

// TestExtractionMaxPages: with extractionMaxPages 2 the model never sees page 3 of a PDF, the
// file ends indexed_with_warning, and page 3 is still indexed for search; without a cap (or a
// cap <= 0) every page is read.
func TestExtractionMaxPages(t *testing.T) {
	e := newExtEnv(t, true)
	var pages []imagestest.Page
	for i := 1; i <= 3; i++ {
		pages = append(pages, imagestest.Page{Text: []string{
			fmt.Sprintf("Invoice number: INV-30%d", i), fmt.Sprintf("Customer: Page%d Traders", i),
			fmt.Sprintf("Total: %d00", i), fmt.Sprintf("Pagemarker%d", i),
		}})
	}
	pdf := imagestest.PDF(t, pages...)
	capped := e.collection(t, "capped", "", 2)
	uncapped := e.collection(t, "uncapped", "", nil)
	zero := e.collection(t, "zero", "", 0)
	cappedFile := e.upload(t, capped, "capped.pdf", "application/pdf", pdf)
	e.upload(t, uncapped, "uncapped.pdf", "application/pdf", pdf)
	e.upload(t, zero, "zero.pdf", "application/pdf", pdf)
	e.s.WaitIdle(60 * time.Second)

	calls := e.chat.callsFor("capped.pdf")
	if len(calls) == 0 {
		t.Fatal("no request for the capped file")
	}
	for _, c := range calls {
		u := c.message("user")
		if !strings.Contains(u, "Pagemarker1") || !strings.Contains(u, "Pagemarker2") {
			t.Errorf("the model did not see pages 1 and 2: %q", u)
		}
		if strings.Contains(u, "Pagemarker3") || strings.Contains(u, "INV-303") {
			t.Errorf("the model saw page 3: %q", u)
		}
	}
	if got := numbers(e.invoices(t, capped)); !slices.Equal(got, []string{"INV-301", "INV-302"}) {
		t.Errorf("capped: invoices %v", got)
	}
	status, warning := e.file(t, cappedFile)
	if status != "indexed_with_warning" || !strings.Contains(warning, "read the first 2 of 3 pages") {
		t.Errorf("capped file: %s %q", status, warning)
	}
	// The cap limits extraction only: page 3 is searchable.
	var n int
	if err := e.s.DB.QueryRowContext(context.Background(), "SELECT count(*) FROM "+vectorstore.Relation(uuid.MustParse(capped))+" k WHERE file_id = ? AND text LIKE '%Pagemarker3%'",
		cappedFile).Scan(&n); err != nil || n == 0 {
		t.Errorf("page 3 not indexed: %d chunks, %v", n, err)
	}

	for _, coll := range []string{uncapped, zero} {
		if got := numbers(e.invoices(t, coll)); !slices.Equal(got, []string{"INV-301", "INV-302", "INV-303"}) {
			t.Errorf("no cap: invoices %v", got)
		}
	}
	if u := e.chat.callsFor("zero.pdf"); len(u) == 0 || !strings.Contains(u[0].message("user"), "Pagemarker3") {
		t.Errorf("maxPages 0 capped the document")
	}
}

// TestExtractionRejectsInvalidRow: a row the model gets wrong is rejected, the file ends
// indexed_with_warning saying which row and why, and the valid rows are stored.
func TestExtractionRejectsInvalidRow(t *testing.T) {
	e := newExtEnv(t, true)
	coll := e.collection(t, "strict", "", nil)
	id := e.upload(t, coll, "two.txt", "text/plain", []byte(invoiceBadDate))
	e.s.WaitIdle(60 * time.Second)
	status, warning := e.file(t, id)
	if status != "indexed_with_warning" || !strings.Contains(warning, `table "invoices" row 1 rejected: column "issued": expected timestamp`) ||
		!strings.Contains(warning, "end of March") {
		t.Errorf("file: %s %q", status, warning)
	}
	inv := e.invoices(t, coll)
	if got := numbers(inv); !slices.Equal(got, []string{"INV-010"}) || inv["INV-010"].Total != "10" {
		t.Errorf("invoices %v, want only the valid INV-010", got)
	}
}

// TestExtractionRetriedAfterOutage: a model server that does not answer (503) makes the job
// retry instead of leaving the file without its rows; only the last attempt settles for a
// warning. Meanwhile the file's text is searchable.
func TestExtractionRetriedAfterOutage(t *testing.T) {
	fast := docindex.WithQueueOptions(queue.WithBackoff(func(int) time.Duration { return 50 * time.Millisecond }))
	e := newExtEnvWith(t, true, []docindex.Option{fast})
	coll := e.collection(t, "outage", "", nil)

	// Down for two requests: the second retry finds the server back.
	e.chat.mu.Lock()
	e.chat.down = 2
	e.chat.mu.Unlock()
	id := e.upload(t, coll, "acme.txt", "text/plain", []byte(invoiceText))
	e.s.WaitIdle(60 * time.Second)
	if status, warning := e.file(t, id); status != "indexed" || warning != "" {
		t.Errorf("file after a short outage: %s %q, want indexed", status, warning)
	}
	if got := numbers(e.invoices(t, coll)); !slices.Equal(got, []string{"INV-001"}) {
		t.Errorf("invoices after a short outage: %v", got)
	}
	if n := len(e.chat.callsFor("acme.txt")); n != 3 {
		t.Errorf("%d requests, want 3 (two refused, one answered)", n)
	}
	jobs := e.jobs(t, id)
	if len(jobs) != 1 || jobs[0].Status != "completed" || jobs[0].RetryCount != 2 {
		t.Errorf("jobs = %+v, want one completed after 2 retries", jobs)
	}

	// Down for longer than the retries (1 + 3 attempts): the last attempt keeps the text
	// indexed and says why the rows are missing.
	e.chat.mu.Lock()
	e.chat.down = 100
	e.chat.mu.Unlock()
	id = e.upload(t, coll, "march.md", "text/markdown", []byte(invoiceMarkdown))
	e.s.WaitIdle(60 * time.Second)
	status, warning := e.file(t, id)
	if status != "indexed_with_warning" || !strings.Contains(warning, "503") {
		t.Errorf("file after a long outage: %s %q", status, warning)
	}
	if n := len(e.chat.callsFor("march.md")); n != 4 {
		t.Errorf("%d requests, want 4 (the first attempt and three retries)", n)
	}
	jobs = e.jobs(t, id)
	if len(jobs) != 1 || jobs[0].Status != "completed" || jobs[0].RetryCount != 3 {
		t.Errorf("jobs = %+v, want one completed on its last retry", jobs)
	}
	if got := numbers(e.invoices(t, coll)); !slices.Equal(got, []string{"INV-001"}) {
		t.Errorf("invoices after a long outage: %v, want the first file's only", got)
	}
	r := e.s.Do("POST", "/api/collections/"+coll+"/search", e.tok, map[string]any{"query": "March", "mode": "fulltext"})
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), id) {
		t.Errorf("search for the file's text: %d %s", r.Status, r.Body)
	}
}

// jobs returns a file's jobs through the API.
func (e *extEnv) jobs(t *testing.T, id string) []struct {
	Status     string `json:"status"`
	RetryCount int    `json:"retryCount"`
} {
	t.Helper()
	r := e.s.Do("GET", "/files/"+id, e.tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get file %s: %d %s", id, r.Status, r.Body)
	}
	var body struct {
		Jobs []struct {
			Status     string `json:"status"`
			RetryCount int    `json:"retryCount"`
		} `json:"jobs"`
	}
	r.JSON(t, &body)
	return body.Jobs
}

// TestExtractionWithoutLLM: a service without a language model indexes the text and says why
// the tables stay empty.
func TestExtractionWithoutLLM(t *testing.T) {
	e := newExtEnv(t, false)
	coll := e.collection(t, "nollm", "", nil)
	id := e.upload(t, coll, "acme.txt", "text/plain", []byte(invoiceText))
	e.s.WaitIdle(60 * time.Second)
	status, warning := e.file(t, id)
	if status != "indexed_with_warning" || !strings.Contains(warning, "no language model is configured") {
		t.Errorf("file: %s %q", status, warning)
	}
	r := e.s.Do("POST", "/api/collections/"+coll+"/search", e.tok, map[string]any{"query": "Acme", "mode": "fulltext"})
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "Acme Corp") {
		t.Errorf("search: %d %s", r.Status, r.Body)
	}
	if rows := e.rows(t, coll, "invoices"); len(rows) != 0 {
		t.Errorf("rows without a model: %v", rows)
	}
	if n := len(e.chat.calls()); n != 0 {
		t.Errorf("%d requests without a configured model", n)
	}
}

// TestExtractionFileDeletedMeanwhile: a file deleted while the model is reading it leaves no
// rows behind. Deleting a file cancels its job, which usually stops the request; the
// interesting case is a job that does not notice (another process, a slow lease check) and
// writes its rows after the teardown: the write must see that the file is gone.
func TestExtractionFileDeletedMeanwhile(t *testing.T) {
	// The job of a deleted file is cancelled; these handlers never hear it, as a job in
	// another process with a slow lease check would not.
	deafEnv := func(t *testing.T, more ...docindex.Option) (*extEnv, chan struct{}) {
		var svc *docindex.Service
		done := make(chan struct{}, 1)
		deaf := worker.HandlerFunc(func(ctx context.Context, j queue.Job) error {
			err := svc.Handle(context.WithoutCancel(ctx), j)
			select {
			case done <- struct{}{}:
			default:
			}
			return err
		})
		e := newExtEnvWith(t, true, more, deaf)
		svc = e.s.Svc
		return e, done
	}
	check := func(t *testing.T, e *extEnv, coll, id string, done chan struct{}) {
		t.Helper()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the job did not finish")
		}
		if inv := e.invoices(t, coll); len(inv) != 0 {
			t.Errorf("rows of a deleted file: %v", numbers(inv))
		}
		if lines := e.rows(t, coll, "line_items"); len(lines) != 0 {
			t.Errorf("line items of a deleted file: %v", lines)
		}
		var chunks int
		if err := e.s.DB.QueryRowContext(context.Background(), "SELECT count(*) FROM "+vectorstore.Relation(uuid.MustParse(coll))+" k WHERE file_id = ?", id).Scan(&chunks); err != nil {
			t.Fatal(err)
		}
		if chunks != 0 {
			t.Errorf("%d chunks of a deleted file", chunks)
		}
	}
	del := func(t *testing.T, e *extEnv, id string) {
		t.Helper()
		if r := e.s.Do("DELETE", "/files/"+id, e.tok, nil); r.Status/100 != 2 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
	}

	// The file goes while the model reads it, and the model answers after the teardown.
	t.Run("answered", func(t *testing.T) {
		e, done := deafEnv(t)
		e.chat.hold, e.chat.arrived, e.chat.release = "INV-001", make(chan struct{}, 1), make(chan struct{})
		coll := e.collection(t, "deleted", "", nil)
		id := e.upload(t, coll, "acme.txt", "text/plain", []byte(invoiceText))
		wait(t, e.chat.arrived, "the model was never asked")
		del(t, e, id)
		close(e.chat.release)
		check(t, e, coll, id, done)
	})
	// The file goes while its chunks are embedded, before they are written; then the model
	// does not answer, which would retry the job, but the file is gone: its chunks must go.
	t.Run("model down", func(t *testing.T) {
		held := &heldEmbedder{Embedder: hash.New(), hold: "INV-001", arrived: make(chan struct{}, 1), release: make(chan struct{})}
		e, done := deafEnv(t, docindex.WithEmbedders(held))
		e.chat.down = 1
		coll := e.collection(t, "deleted", "", nil)
		id := e.upload(t, coll, "acme.txt", "text/plain", []byte(invoiceText))
		wait(t, held.arrived, "the file was never embedded")
		del(t, e, id)
		close(held.release)
		check(t, e, coll, id, done)
		if n := len(e.chat.callsFor("acme.txt")); n != 1 {
			t.Errorf("%d requests to the model, want 1", n)
		}
	})
}

func wait(t *testing.T, c chan struct{}, msg string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatal(msg)
	}
}

// heldEmbedder holds the first call with a text containing hold until release.
type heldEmbedder struct {
	embedder.Embedder
	hold             string
	arrived, release chan struct{}
	once             sync.Once
}

func (h *heldEmbedder) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, h.hold) {
			h.once.Do(func() {
				h.arrived <- struct{}{}
				<-h.release
			})
		}
	}
	return h.Embedder.Embed(ctx, model, texts)
}
