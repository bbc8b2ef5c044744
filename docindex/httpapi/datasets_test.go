package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestIngestOverHTTP(t *testing.T) {
	s := newServer(t)
	own := s.Token(owner)
	c := createCollection(t, s, own, map[string]any{"name": "shop", "type": "dataset", "datasetMode": "live",
		"tables": map[string]any{"orders": map[string]any{"columns": []any{
			map[string]any{"name": "id", "type": "integer", "primary": true},
			map[string]any{"name": "customer", "type": "text", "nullable": false},
			map[string]any{"name": "at", "type": "timestamp"}}}}})
	id := c["id"].(string)
	share(t, s, own, id, map[string]any{"type": "user", "target": viewer.Email, "role": "viewer"})

	r := s.Do("POST", "/api/ingest/shop/orders", own, map[string]any{"rows": []any{
		map[string]any{"id": 1, "customer": "ann", "at": "2024-05-01"},
		map[string]any{"id": 2},
		map[string]any{"id": "3", "customer": "cy", "at": "yesterday"},
	}})
	wantStatus(t, r, http.StatusOK)
	res := r.Map(t)
	if res["inserted"] != float64(1) || res["rejected"] != float64(2) {
		t.Fatalf("ingest result %v", res)
	}
	errs := res["errors"].([]any)
	if errs[0].(map[string]any)["index"] != float64(1) || errs[1].(map[string]any)["index"] != float64(2) {
		t.Fatalf("errors %v", errs)
	}
	if g := s.Do("GET", "/api/collections/"+id, own, nil).Map(t); g["lastIngestedAt"] == nil {
		t.Fatalf("lastIngestedAt not set: %v", g)
	}

	for name, tc := range map[string]struct {
		path, token string
		body        any
		status      int
	}{
		"viewer":         {"/api/ingest/shop/orders", s.Token(viewer), map[string]any{"rows": []any{}}, 403},
		"outsider":       {"/api/ingest/shop/orders", s.Token(outsider), map[string]any{"rows": []any{}}, 404},
		"read-only key":  {"/api/ingest/shop/orders", s.Key(owner, "read"), map[string]any{"rows": []any{}}, 403},
		"unknown table":  {"/api/ingest/shop/nope", own, map[string]any{"rows": []any{}}, 404},
		"bad table name": {"/api/ingest/shop/No-Such", own, map[string]any{"rows": []any{}}, 400},
		"unknown set":    {"/api/ingest/nope/orders", own, map[string]any{"rows": []any{}}, 404},
		"malformed":      {"/api/ingest/shop/orders", own, "{\"rows\": [", 400},
		"too many rows":  {"/api/ingest/shop/orders", own, `{"rows": [` + strings.Repeat(`{},`, 10000) + `{}]}`, 400},
		"empty":          {"/api/ingest/shop/orders", own, map[string]any{"rows": []any{}}, 200},
	} {
		t.Run(name, func(t *testing.T) { wantStatus(t, s.Do("POST", tc.path, tc.token, tc.body), tc.status) })
	}
	big := `{"rows": [{"id": 9, "customer": "` + strings.Repeat("x", 64<<20) + `"}]}`
	wantStatus(t, s.Do("POST", "/api/ingest/shop/orders", own, big), http.StatusRequestEntityTooLarge)

	r = s.Do("GET", "/api/collections/"+id+"/tables", s.Token(viewer), nil)
	wantStatus(t, r, http.StatusOK)
	tables := r.Map(t)["tables"].([]any)
	if len(tables) != 1 || tables[0].(map[string]any)["rowCount"] != float64(1) {
		t.Fatalf("tables %v", tables)
	}
	r = s.Do("GET", "/api/collections/"+id+"/tables/orders/rows?customer=ann", s.Token(viewer), nil)
	wantStatus(t, r, http.StatusOK)
	rows := r.Map(t)["rows"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["id"] != float64(1) {
		t.Fatalf("rows %v", rows)
	}
	wantStatus(t, s.Do("GET", "/api/collections/"+id+"/tables/orders/rows?colour=red", own, nil), 400)
	wantStatus(t, s.Do("GET", "/api/collections/"+id+"/tables/orders/rows?order=-nope", own, nil), 400)
	wantStatus(t, s.Do("GET", "/api/collections/"+id+"/tables/nope/rows", own, nil), 404)
	wantStatus(t, s.Do("GET", "/api/collections/"+id+"/tables", s.Token(outsider), nil), 403)
}
