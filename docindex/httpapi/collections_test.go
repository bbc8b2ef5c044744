package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestCreateCollectionRecordShape(t *testing.T) {
	s := newServer(t)
	tok := s.Token(owner)
	c := createCollection(t, s, tok, map[string]any{"displayName": "Team Handbook 2026!", "description": "d"})
	if c["name"] != "team_handbook_2026" {
		t.Errorf("generated name %v", c["name"])
	}
	u := s.UserRow(owner.Email)
	want := map[string]any{
		"displayName": "Team Handbook 2026!", "description": "d", "visibility": "private",
		"searchLanguage": "english", "type": "rag", "chunkingStrategy": "recursive", "datasetMode": "",
		"structuredExtractionEnabled": false, "imageDescriptionsEnabled": false, "imageDescriptionMode": "",
		"owner_id": u.ID.String(), "created_by": u.ID.String(), "embeddingModel": testModel,
		"chunkSize": nil, "chunkOverlap": nil, "lastIngestedAt": nil, "extractionMaxPages": nil,
	}
	for k, v := range want {
		got, ok := c[k]
		if !ok {
			t.Errorf("record lacks %q", k)
			continue
		}
		if got != v {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	for _, k := range []string{"id", "created_at", "updated_at"} {
		if _, ok := c[k]; !ok {
			t.Errorf("record lacks %q", k)
		}
	}
	for _, k := range []string{"createdAt", "ownerId", "extractionInstructions", "myRole"} {
		if _, ok := c[k]; ok {
			t.Errorf("record has list-only or empty field %q", k)
		}
	}
	// Get answers the same record.
	r := s.Do("GET", "/api/collections/"+c["id"].(string), tok, nil)
	wantStatus(t, r, http.StatusOK)
	if g := r.Map(t); g["name"] != c["name"] || g["owner_id"] != c["owner_id"] {
		t.Errorf("get differs from create: %v", g)
	}
}

func TestCreateCollectionValidation(t *testing.T) {
	s := newServer(t)
	tok := s.Token(owner)
	createCollection(t, s, tok, map[string]any{"name": "taken"})
	cases := map[string]struct {
		body   any
		status int
	}{
		"neither name nor displayName": {map[string]any{"description": "x"}, 400},
		"bad name":                     {map[string]any{"name": "Bad Name"}, 400},
		"duplicate name":               {map[string]any{"name": "taken"}, 409},
		"duplicate generated name":     {map[string]any{"displayName": "Taken"}, 409},
		"bad visibility":               {map[string]any{"name": "a1", "visibility": "secret"}, 400},
		"bad type":                     {map[string]any{"name": "a2", "type": "graph"}, 400},
		"bad strategy":                 {map[string]any{"name": "a3", "chunkingStrategy": "fixed"}, 400},
		"bad dataset mode":             {map[string]any{"name": "a4", "type": "dataset", "datasetMode": "stream"}, 400},
		"bad image mode":               {map[string]any{"name": "a5", "imageDescriptionMode": "some"}, 400},
		"bad language":                 {map[string]any{"name": "a6", "searchLanguage": "klingon"}, 400},
		"unknown model":                {map[string]any{"name": "a7", "embeddingModel": "nope"}, 400},
		"chunk size too small":         {map[string]any{"name": "a8", "chunkSize": 1}, 400},
		"overlap not below size":       {map[string]any{"name": "a9", "chunkSize": 100, "chunkOverlap": 100}, 400},
		"live without tables":          {map[string]any{"name": "b1", "type": "dataset", "datasetMode": "live"}, 400},
		"extraction without tables":    {map[string]any{"name": "b2", "structuredExtraction": map[string]any{"enabled": true}}, 400},
		"two primary columns": {map[string]any{"name": "b3", "type": "dataset", "datasetMode": "live", "tables": map[string]any{
			"t": map[string]any{"columns": []any{
				map[string]any{"name": "a", "type": "text", "primary": true},
				map[string]any{"name": "b", "type": "text", "primary": true}}}}}, 400},
		"bad column type": {map[string]any{"name": "b4", "type": "dataset", "datasetMode": "live", "tables": map[string]any{
			"t": map[string]any{"columns": []any{map[string]any{"name": "a", "type": "float"}}}}}, 400},
		"bad column name": {map[string]any{"name": "b5", "type": "dataset", "datasetMode": "live", "tables": map[string]any{
			"t": map[string]any{"columns": []any{map[string]any{"name": "A;drop", "type": "text"}}}}}, 400},
		"bad table name": {map[string]any{"name": "b6", "type": "dataset", "datasetMode": "live", "tables": map[string]any{
			"1t": map[string]any{"columns": []any{map[string]any{"name": "a", "type": "text"}}}}}, 400},
		"no columns": {map[string]any{"name": "b7", "type": "dataset", "datasetMode": "live", "tables": map[string]any{
			"t": map[string]any{"columns": []any{}}}}, 400},
		"malformed json":   {"{not json", 400},
		"wrong field type": {map[string]any{"name": "b8", "chunkSize": "big"}, 400},
		"array body":       {"[]", 400},
	}
	before := count(t, s, "docindex.collections")
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			wantStatus(t, s.Do("POST", "/api/collections", tok, tc.body), tc.status)
		})
	}
	if n := count(t, s, "docindex.collections"); n != before {
		t.Fatalf("rejected creates changed the database: %d -> %d collections", before, n)
	}
}

func TestLiveDatasetProvisionsTables(t *testing.T) {
	s := newServer(t)
	tok := s.Token(owner)
	c := createCollection(t, s, tok, map[string]any{"name": "sales", "type": "dataset", "datasetMode": "live",
		"tables": map[string]any{"orders": map[string]any{"columns": []any{
			map[string]any{"name": "order_id", "type": "integer", "primary": true},
			map[string]any{"name": "customer", "type": "text", "nullable": false},
			map[string]any{"name": "total", "type": "numeric"},
			map[string]any{"name": "paid", "type": "boolean"},
			map[string]any{"name": "at", "type": "timestamp"},
		}}}})
	if c["datasetMode"] != "live" || c["type"] != "dataset" {
		t.Fatalf("record %v", c)
	}
	schema := c["liveSchema"].(map[string]any)
	cols := schema["orders"].(map[string]any)["columns"].([]any)
	if cols[2].(map[string]any)["nullable"] != true || cols[0].(map[string]any)["nullable"] != false {
		t.Errorf("nullable defaults not applied in liveSchema: %v", cols)
	}
	schemaName := "dix_" + strings.ReplaceAll(c["id"].(string), "-", "")
	rows, err := s.DB.QueryContext(context.Background(), `SELECT column_name, data_type, is_nullable
		FROM information_schema.columns WHERE table_schema = ? AND table_name = 'orders' ORDER BY ordinal_position`, schemaName)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var name, typ, null string
		if err := rows.Scan(&name, &typ, &null); err != nil {
			t.Fatal(err)
		}
		got[name] = typ + "/" + null
	}
	want := map[string]string{"order_id": "bigint/NO", "customer": "text/NO", "total": "numeric/YES",
		"paid": "boolean/YES", "at": "timestamp with time zone/YES"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("column %s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	// Deleting the collection drops its tables.
	wantStatus(t, s.Do("DELETE", "/api/collections/"+c["id"].(string), tok, nil), http.StatusOK)
	var n int
	if err := s.DB.QueryRowContext(context.Background(), "SELECT count(*) FROM pg_namespace WHERE nspname = ?", schemaName).Scan(&n); err != nil || n != 0 {
		t.Fatalf("schema %s still there after delete (%d, %v)", schemaName, n, err)
	}
}

func TestExtractionProvisionsTables(t *testing.T) {
	s := newServer(t)
	c := createCollection(t, s, s.Token(owner), map[string]any{"name": "invoices",
		"structuredExtraction": map[string]any{"enabled": true, "instructions": "Pull invoice fields", "maxPages": 3},
		"tables": map[string]any{"invoice": map[string]any{"columns": []any{
			map[string]any{"name": "number", "type": "text", "primary": true},
			map[string]any{"name": "amount", "type": "numeric"}}}}})
	if c["structuredExtractionEnabled"] != true || c["extractionInstructions"] != "Pull invoice fields" || c["extractionMaxPages"] != float64(3) {
		t.Fatalf("record %v", c)
	}
	var n int
	schemaName := "dix_" + strings.ReplaceAll(c["id"].(string), "-", "")
	if err := s.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM information_schema.columns
		WHERE table_schema = ? AND table_name = 'invoice' AND column_name = '_file_id'`, schemaName).Scan(&n); err != nil || n != 1 {
		t.Fatalf("extraction table lacks _file_id (%d, %v)", n, err)
	}
}

// A failure while provisioning leaves nothing behind and is a server error. The failure is real:
// an event trigger refuses to create tables in the collection schemas.
func TestProvisioningFailureLeavesNothing(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE FUNCTION public.refuse_ddl() RETURNS event_trigger LANGUAGE plpgsql AS
		 $$BEGIN RAISE EXCEPTION 'disk full (simulated)'; END$$`,
		`CREATE EVENT TRIGGER refuse_tables ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION public.refuse_ddl()`,
	} {
		if _, err := s.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	r := s.Do("POST", "/api/collections", s.Token(owner), map[string]any{"name": "doomed", "type": "dataset", "datasetMode": "live",
		"tables": map[string]any{"t": map[string]any{"columns": []any{map[string]any{"name": "a", "type": "text"}}}}})
	wantStatus(t, r, http.StatusInternalServerError)
	if strings.Contains(string(r.Body), "disk full") {
		t.Errorf("internal error leaked to the caller: %s", r.Body)
	}
	if n := count(t, s, "docindex.collections"); n != 0 {
		t.Fatalf("a collection row survived the failed provisioning")
	}
	var n int
	if err := s.DB.QueryRowContext(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'dix\\_%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("a collection schema survived the failed provisioning (%d, %v)", n, err)
	}
}
