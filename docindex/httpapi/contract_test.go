package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestContractDocumentIsValid(t *testing.T) {
	doc, err := LoadOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi = %q, want 3.1.x", doc.OpenAPI)
	}
	for _, name := range []string{"Error", "CollectionRecord", "CollectionListItem", "Share", "APIKeyCreated", "APIKeyItem", "EmbeddingModel"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("components.schemas.%s is missing", name)
		}
	}
	if doc.Components.SecuritySchemes["bearer"] == nil {
		t.Error("components.securitySchemes.bearer is missing")
	}
	// Every authenticated operation answers 401 and 500; every operation lists its statuses.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Responses.Len() == 0 {
				t.Errorf("%s %s has no responses", method, path)
			}
			if op.Responses.Status(500) == nil {
				t.Errorf("%s %s does not document 500", method, path)
			}
			public := op.Security != nil && len(*op.Security) == 0
			if !public && op.Responses.Status(401) == nil {
				t.Errorf("%s %s is authenticated but does not document 401", method, path)
			}
		}
	}
}

// TestContractCoversRoutes compares the operations of openapi.yaml with the routes Mount
// registers, read from routes.go, so neither can drift from the other.
func TestContractCoversRoutes(t *testing.T) {
	routes := registeredRoutes(t, "routes.go")
	if len(routes) < 10 {
		t.Fatalf("found only %d routes in routes.go (%v): the parser no longer understands it", len(routes), routes)
	}
	doc, err := LoadOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	slices.Sort(documented)
	for _, r := range routes {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is registered in routes.go but not documented in openapi.yaml", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routes, d) {
			t.Errorf("operation %s is documented in openapi.yaml but not registered in routes.go", d)
		}
	}
}

// registeredRoutes returns "METHOD /path" for every g.GET/POST/PUT/DELETE/PATCH call in file,
// prefixed with the paths of the enclosing WithGroup calls, in OpenAPI form ({id}, not :id).
func registeredRoutes(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	var out []string
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		method, path, ok := routeCall(n)
		if !ok || method == "WithGroup" {
			return true
		}
		prefix := ""
		for _, anc := range stack[:len(stack)-1] {
			if m, p, ok := routeCall(anc); ok && m == "WithGroup" {
				prefix += p
			}
		}
		segs := strings.Split(prefix+path, "/")
		for i, s := range segs {
			if name, ok := strings.CutPrefix(s, ":"); ok {
				segs[i] = "{" + name + "}"
			}
		}
		out = append(out, method+" "+strings.Join(segs, "/"))
		return true
	})
	slices.Sort(out)
	return out
}

// routeCall recognises x.METHOD("literal", ...) for the router methods and WithGroup.
func routeCall(n ast.Node) (method, path string, ok bool) {
	call, isCall := n.(*ast.CallExpr)
	if !isCall || len(call.Args) == 0 {
		return "", "", false
	}
	sel, isSel := call.Fun.(*ast.SelectorExpr)
	if !isSel {
		return "", "", false
	}
	switch sel.Sel.Name {
	case "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "WithGroup":
	default:
		return "", "", false
	}
	lit, isLit := call.Args[0].(*ast.BasicLit)
	if !isLit || lit.Kind != token.STRING {
		return "", "", false
	}
	p, err := strconv.Unquote(lit.Value)
	if err != nil {
		return "", "", false
	}
	return sel.Sel.Name, p, true
}

const (
	uuidA = "0b9e3c1e-4a57-4f0e-9d6b-2d3c4e5f6a7b"
	uuidB = "5d1c7e2a-8b3f-4c6d-a1e2-f3a4b5c6d7e8"
	when  = "2026-11-22T01:02:03.456789Z"
)

// record is a valid collection record (spec 2.1), as the server writes it for a rag collection.
func record() map[string]any {
	return map[string]any{
		"id": uuidA, "name": "handbook", "displayName": "Handbook", "description": "",
		"created_by": uuidB, "owner_id": uuidB, "visibility": "private", "searchLanguage": "english",
		"type": "rag", "chunkingStrategy": "recursive", "chunkSize": nil, "chunkOverlap": nil,
		"datasetMode": "", "lastIngestedAt": nil, "structuredExtractionEnabled": false,
		"extractionMaxPages": nil, "imageDescriptionsEnabled": false, "imageDescriptionMode": "",
		"embeddingModel": "hash-256", "created_at": when, "updated_at": when,
	}
}

// liveRecord is a live dataset's record, with a liveSchema and every nullable field set.
func liveRecord() map[string]any {
	r := record()
	r["type"], r["datasetMode"] = "dataset", "live"
	r["chunkSize"], r["chunkOverlap"], r["lastIngestedAt"] = 512, 64, when
	r["created_by"] = nil
	delete(r, "embeddingModel")
	r["liveSchema"] = map[string]any{
		"orders": map[string]any{"columns": []any{
			map[string]any{"name": "id", "type": "text", "primary": true, "nullable": false},
			map[string]any{"name": "total", "type": "numeric", "nullable": true},
		}},
	}
	return r
}

func listItem() map[string]any {
	return map[string]any{
		"id": uuidA, "name": "handbook", "displayName": "Handbook", "description": "d",
		"ownerId": uuidB, "owner": map[string]any{"id": uuidB, "email": "o@example.com", "name": "O"},
		"visibility": "shared", "searchLanguage": "english", "collectionType": "rag",
		"structuredExtractionEnabled": false, "extractionMaxPages": nil, "imageDescriptionsEnabled": true,
		"imageDescriptionMode": "all", "tableSizeBytes": 8192, "myRole": "viewer", "shareCount": 2,
		"createdAt": when, "updatedAt": when,
	}
}

func share() map[string]any {
	return map[string]any{"id": uuidA, "collection_id": uuidB, "type": "user", "target": "a@example.com",
		"targetDisplay": "a@example.com", "role": "viewer", "created_at": when}
}

func keyItem() map[string]any {
	return map[string]any{"id": uuidA, "userId": uuidB, "userEmail": "admin@example.com", "clientName": "ci",
		"permissions": []any{"read", "write"}, "createdAt": when, "lastUsedAt": nil, "revoked": false}
}

// with returns m with key set to v (v == del removes the key).
func with(m map[string]any, key string, v any) map[string]any {
	if v == del {
		delete(m, key)
	} else {
		m[key] = v
	}
	return m
}

var del = new(int)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestContractCheck(t *testing.T) {
	c, err := NewContract()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(c.Doc())
	if err != nil {
		t.Fatal(err)
	}
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	cases := []struct {
		name         string
		method, path string
		status       int
		header       http.Header // jsonCT when nil
		body         any         // marshalled unless []byte
		wantErr      string      // "" when the exchange must pass
	}{
		// Exchanges the server produces.
		{"create record", "POST", "/api/collections", 201, nil, record(), ""},
		{"live dataset record", "GET", "/api/collections/" + uuidA, 200, nil, liveRecord(), ""},
		{"update record", "PUT", "/api/collections/" + uuidA, 200, nil, with(record(), "extractionInstructions", "pull totals"), ""},
		{"list", "GET", "/api/collections?filter=mine", 200, nil, map[string]any{"collections": []any{listItem(), with(listItem(), "owner", map[string]any{"id": uuidB, "email": "o@example.com"})}}, ""},
		{"empty list", "GET", "/api/collections", 200, nil, map[string]any{"collections": []any{}}, ""},
		{"delete collection", "DELETE", "/api/collections/" + uuidA, 200, nil, map[string]any{"status": "deleted"}, ""},
		{"create share", "POST", "/api/collections/" + uuidA + "/shares", 201, nil, share(), ""},
		{"public share", "PUT", "/api/collections/" + uuidA + "/shares/" + uuidB, 200, nil, with(with(share(), "type", "public"), "target", ""), ""},
		{"list shares", "GET", "/api/collections/" + uuidA + "/shares", 200, nil, map[string]any{"shares": []any{share()}}, ""},
		{"delete share", "DELETE", "/api/collections/" + uuidA + "/shares/" + uuidB, 200, nil, map[string]any{"status": "deleted"}, ""},
		{"models", "GET", "/api/embedding-models", 200, nil, map[string]any{"models": []any{map[string]any{"id": "hash-256", "provider": "hash", "dimensions": 256, "default": true}}}, ""},
		{"create key", "POST", "/admin/api-keys", 201, nil, map[string]any{"id": uuidA, "key": "dik_" + strings.Repeat("aB3-_", 8) + "xyz", "clientName": "ci", "permissions": []any{"read"}}, ""},
		{"list keys", "GET", "/admin/api-keys?includeRevoked=true", 200, nil, []any{keyItem(), with(keyItem(), "lastUsedAt", when)}, ""},
		{"revoke key", "DELETE", "/admin/api-keys/" + uuidA, 200, nil, map[string]any{"status": "revoked"}, ""},
		{"healthz", "GET", "/healthz", 200, nil, map[string]any{"status": "ok"}, ""},
		{"healthz down", "GET", "/healthz", 503, nil, map[string]any{"status": "unavailable", "error": "database does not answer"}, ""},
		{"openapi.json", "GET", "/openapi.json", 200, nil, doc, ""},
		{"openapi.yaml", "GET", "/openapi.yaml", 200, http.Header{"Content-Type": {"application/yaml"}}, OpenAPI, ""},
		{"401", "GET", "/api/collections", 401, http.Header{"Content-Type": {"application/json"}, "Www-Authenticate": {`Bearer realm="docindex"`}}, map[string]any{"error": "Unauthorized"}, ""},
		{"400 bad id", "GET", "/api/collections/not-a-uuid", 400, nil, map[string]any{"error": "Invalid collection ID"}, ""},
		{"403", "POST", "/api/collections/" + uuidA + "/shares", 403, nil, map[string]any{"error": "Forbidden"}, ""},
		{"404", "PUT", "/api/collections/" + uuidA, 404, nil, map[string]any{"error": "Not found"}, ""},
		{"409", "POST", "/api/collections", 409, nil, map[string]any{"error": "A collection with this name exists"}, ""},
		{"413", "POST", "/admin/api-keys", 413, nil, map[string]any{"error": "Request body too large"}, ""},
		{"500", "GET", "/api/embedding-models", 500, nil, map[string]any{"error": "Server error"}, ""},

		// Breaches the contract must catch.
		{"missing required field", "POST", "/api/collections", 201, nil, with(record(), "owner_id", del), "owner_id"},
		{"camelCase in the record", "GET", "/api/collections/" + uuidA, 200, nil, with(with(record(), "created_at", del), "createdAt", when), "created_at"},
		{"snake_case in the list item", "GET", "/api/collections", 200, nil, map[string]any{"collections": []any{with(with(listItem(), "createdAt", del), "created_at", when)}}, "createdAt"},
		{"nullable field left out", "GET", "/api/collections/" + uuidA, 200, nil, with(record(), "chunkSize", del), "chunkSize"},
		{"wrong type", "GET", "/api/collections/" + uuidA, 200, nil, with(record(), "chunkSize", "512"), "chunkSize"},
		{"null where not nullable", "GET", "/api/collections/" + uuidA, 200, nil, with(record(), "name", nil), "name"},
		{"null owner_id", "GET", "/api/collections/" + uuidA, 200, nil, with(record(), "owner_id", nil), "owner_id"},
		{"bad enum", "POST", "/api/collections/" + uuidA + "/shares", 201, nil, with(share(), "role", "editor"), "role"},
		{"empty string outside the list's enum", "GET", "/api/collections", 200, nil, map[string]any{"collections": []any{with(listItem(), "datasetMode", "")}}, "datasetMode"},
		{"bad uuid", "GET", "/api/collections/" + uuidA, 200, nil, with(record(), "created_by", "not-a-uuid"), "created_by"},
		{"bad date-time", "GET", "/api/collections/" + uuidA, 200, nil, with(record(), "updated_at", "yesterday"), "updated_at"},
		{"undocumented field", "GET", "/api/collections/" + uuidA, 200, nil, with(record(), "ownerEmail", "o@example.com"), "ownerEmail"},
		{"empty omitempty field", "GET", "/api/collections/" + uuidA, 200, nil, with(record(), "extractionInstructions", ""), "extractionInstructions"},
		{"bad liveSchema", "GET", "/api/collections/" + uuidA, 200, nil, with(record(), "liveSchema", map[string]any{"t": map[string]any{"columns": []any{map[string]any{"name": "a", "type": "varchar"}}}}), "type"},
		{"wrong item type", "GET", "/admin/api-keys", 200, nil, []any{with(keyItem(), "revoked", "no")}, "revoked"},
		{"object instead of array", "GET", "/admin/api-keys", 200, nil, map[string]any{"keys": []any{keyItem()}}, "array"},
		{"bad key", "POST", "/admin/api-keys", 201, nil, map[string]any{"id": uuidA, "key": "secret", "clientName": "ci", "permissions": []any{"read"}}, "key"},
		{"error without message", "GET", "/api/collections/" + uuidA, 404, nil, map[string]any{"message": "Not found"}, "error"},
		{"undocumented status", "GET", "/api/collections", 404, nil, map[string]any{"error": "Not found"}, "status is not supported"},
		{"201 for a read", "GET", "/api/collections/" + uuidA, 201, nil, record(), "status is not supported"},
		{"wrong status value", "DELETE", "/api/collections/" + uuidA, 200, nil, map[string]any{"status": "ok"}, "status"},
		{"not JSON", "GET", "/api/collections/" + uuidA, 200, http.Header{"Content-Type": {"text/plain"}}, []byte("hello"), "text/plain"},
		{"unknown path", "GET", "/api/files", 200, nil, map[string]any{}, ErrUndocumented.Error()},
		{"unknown method", "PATCH", "/api/collections/" + uuidA, 200, nil, record(), ErrUndocumented.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, ok := tc.body.([]byte)
			if !ok {
				body = mustJSON(t, tc.body)
			}
			header := tc.header
			if header == nil {
				header = jsonCT
			}
			req := httptest.NewRequest(tc.method, tc.path, nil)
			err := c.Check(req, tc.status, header, body)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("want a pass, got %v", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("want an error about %q, got a pass", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("want an error about %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestContractUndocumentedIsErrUndocumented(t *testing.T) {
	c, err := NewContract()
	if err != nil {
		t.Fatal(err)
	}
	err = c.Check(httptest.NewRequest("GET", "/nowhere", nil), 404, nil, nil)
	if !errors.Is(err, ErrUndocumented) {
		t.Fatalf("want ErrUndocumented, got %v", err)
	}
}

func TestContractBasePath(t *testing.T) {
	c, err := NewContract(WithBasePath("/docindex/"))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if err := c.Check(httptest.NewRequest("GET", "/docindex/healthz", nil), 200, h, []byte(`{"status":"ok"}`)); err != nil {
		t.Errorf("prefixed path: %v", err)
	}
	if err := c.Check(httptest.NewRequest("GET", "/healthz", nil), 200, h, []byte(`{"status":"ok"}`)); !errors.Is(err, ErrUndocumented) {
		t.Errorf("path outside the prefix: want ErrUndocumented, got %v", err)
	}
}

// errRecorder is a testing.TB that records Errorf calls instead of failing the test.
type errRecorder struct {
	testing.TB
	errs []string
}

func (r *errRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestContractTransport(t *testing.T) {
	c, err := NewContract()
	if err != nil {
		t.Fatal(err)
	}
	// A real server on loopback: /healthz answers per the contract, /api/embedding-models
	// breaks it (a model without dimensions).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/healthz":
			io.WriteString(w, `{"status":"ok"}`)
		case "/api/embedding-models":
			io.WriteString(w, `{"models":[{"id":"m","provider":"p","default":true}]}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"Not found"}`)
		}
	}))
	defer srv.Close()

	rec := &errRecorder{TB: t}
	client := &http.Client{Transport: c.Transport(nil, rec)}
	get := func(path string) string {
		t.Helper()
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	if body := get("/healthz"); body != `{"status":"ok"}` {
		t.Errorf("the transport changed the body: %q", body)
	}
	if len(rec.errs) != 0 {
		t.Fatalf("a valid response was reported: %v", rec.errs)
	}
	if body := get("/api/embedding-models"); !strings.Contains(body, `"models"`) {
		t.Errorf("the transport changed the body: %q", body)
	}
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "dimensions") {
		t.Fatalf("want one report about dimensions, got %v", rec.errs)
	}
	get("/nowhere")
	if len(rec.errs) != 2 || !strings.Contains(rec.errs[1], ErrUndocumented.Error()) {
		t.Fatalf("want a report of the undocumented endpoint, got %v", rec.errs)
	}
}
