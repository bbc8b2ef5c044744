package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestAPIKeys(t *testing.T) {
	s := newServer(t)
	admin := s.Token(root)

	r := s.Do("POST", "/admin/api-keys", admin, map[string]any{"clientName": "reporting"})
	wantStatus(t, r, http.StatusCreated)
	created := r.Map(t)
	key := created["key"].(string)
	if !strings.HasPrefix(key, "dik_") || created["clientName"] != "reporting" {
		t.Fatalf("created %v", created)
	}
	if p := created["permissions"].([]any); len(p) != 1 || p[0] != "read" {
		t.Fatalf("default permissions %v, want [read]", p)
	}
	// Only the hash is stored.
	var n int
	if err := s.DB.QueryRow("SELECT count(*) FROM docindex.api_keys WHERE position(? in encode(key_hash, 'escape')) > 0", key).Scan(&n); err != nil || n != 0 {
		t.Fatalf("raw key stored (%d, %v)", n, err)
	}

	for name, tc := range map[string]struct {
		body   any
		status int
	}{
		"missing clientName": {map[string]any{"permissions": []string{"read"}}, 400},
		"unknown permission": {map[string]any{"clientName": "x", "permissions": []string{"root"}}, 400},
		"empty permissions":  {map[string]any{"clientName": "x", "permissions": []string{}}, 400},
		"malformed":          {"{", 400},
		"permissions type":   {map[string]any{"clientName": "x", "permissions": "read"}, 400},
	} {
		t.Run(name, func(t *testing.T) { wantStatus(t, s.Do("POST", "/admin/api-keys", admin, tc.body), tc.status) })
	}

	// The read key reads, and its use is recorded.
	wantStatus(t, s.Do("GET", "/api/collections", key, nil), http.StatusOK)
	wantStatus(t, s.Do("POST", "/api/collections", key, map[string]any{"name": "nope"}), http.StatusForbidden)
	var keys []map[string]any
	r = s.Do("GET", "/admin/api-keys", admin, nil)
	wantStatus(t, r, http.StatusOK)
	r.JSON(t, &keys)
	if len(keys) != 1 {
		t.Fatalf("%d keys listed", len(keys))
	}
	k := keys[0]
	if k["id"] != created["id"] || k["userEmail"] != root.Email || k["revoked"] != false || k["lastUsedAt"] == nil || k["userId"] == "" {
		t.Fatalf("listed key %v", k)
	}
	if _, ok := k["key"]; ok {
		t.Fatal("the raw key is listed")
	}

	// A key with write may create; one with admin acts as the admin it belongs to.
	w := s.Do("POST", "/admin/api-keys", admin, map[string]any{"clientName": "writer", "permissions": []string{"read", "write"}})
	wantStatus(t, w, http.StatusCreated)
	writer := w.Map(t)["key"].(string)
	wantStatus(t, s.Do("POST", "/api/collections", writer, map[string]any{"name": "by_key"}), http.StatusCreated)
	wantStatus(t, s.Do("GET", "/admin/api-keys", writer, nil), http.StatusForbidden)
	adm := s.Do("POST", "/admin/api-keys", admin, map[string]any{"clientName": "ops", "permissions": []string{"admin"}})
	wantStatus(t, adm, http.StatusCreated)
	wantStatus(t, s.Do("GET", "/admin/api-keys", adm.Map(t)["key"].(string), nil), http.StatusOK)

	// Revoke: refused at once, hidden unless includeRevoked.
	wantStatus(t, s.Do("DELETE", "/admin/api-keys/"+created["id"].(string), admin, nil), http.StatusOK)
	wantStatus(t, s.Do("GET", "/api/collections", key, nil), http.StatusUnauthorized)
	r = s.Do("GET", "/admin/api-keys", admin, nil)
	r.JSON(t, &keys)
	if len(keys) != 2 {
		t.Fatalf("%d keys listed after revoke, want 2", len(keys))
	}
	r = s.Do("GET", "/admin/api-keys?includeRevoked=true", admin, nil)
	r.JSON(t, &keys)
	if len(keys) != 3 {
		t.Fatalf("%d keys with includeRevoked, want 3", len(keys))
	}
	wantStatus(t, s.Do("GET", "/admin/api-keys?includeRevoked=maybe", admin, nil), 400)
	wantStatus(t, s.Do("DELETE", "/admin/api-keys/not-a-uuid", admin, nil), 400)
	wantStatus(t, s.Do("DELETE", "/admin/api-keys/7d3c5a34-1111-4222-8333-444455556666", admin, nil), 404)
	wantStatus(t, s.Do("DELETE", "/admin/api-keys/"+created["id"].(string), s.Token(owner), nil), 403)
}

func TestEmbeddingModels(t *testing.T) {
	s := newServer(t)
	r := s.Do("GET", "/api/embedding-models", s.Token(viewer), nil)
	wantStatus(t, r, http.StatusOK)
	var body struct {
		Models []map[string]any `json:"models"`
	}
	r.JSON(t, &body)
	if len(body.Models) != 1 || body.Models[0]["id"] != testModel || body.Models[0]["default"] != true ||
		body.Models[0]["dimensions"] != float64(8) || body.Models[0]["provider"] != "test" {
		t.Fatalf("models %v", body.Models)
	}
}
