package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/auth"
	"github.com/docindex/docindex/docindex/docindextest"
)

var (
	owner    = docindextest.User{Email: "owner@example.com", Name: "Olga Owner"}
	coAdmin  = docindextest.User{Email: "admin@example.com"}
	viewer   = docindextest.User{Email: "viewer@example.com"}
	member   = docindextest.User{Email: "member@example.com", Groups: []string{"eng"}}
	outsider = docindextest.User{Email: "outsider@example.com"}
	root     = docindextest.User{Email: "root@example.com", Admin: true}
)

// newServer starts a test server whose every exchange is checked against openapi.yaml.
func newServer(t *testing.T) *docindextest.Server {
	t.Helper()
	s := docindextest.NewServer(t, testEmbedders())
	s.Check = contractCheck(t)
	return s
}

func count(t *testing.T, s *docindextest.Server, table string) int {
	t.Helper()
	var n int
	if err := s.DB.QueryRowContext(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func createCollection(t *testing.T, s *docindextest.Server, token string, body map[string]any) map[string]any {
	t.Helper()
	r := s.Do("POST", "/api/collections", token, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create collection: %d %s", r.Status, r.Body)
	}
	return r.Map(t)
}

func share(t *testing.T, s *docindextest.Server, token, id string, body map[string]any) map[string]any {
	t.Helper()
	r := s.Do("POST", "/api/collections/"+id+"/shares", token, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create share: %d %s", r.Status, r.Body)
	}
	return r.Map(t)
}

func wantStatus(t *testing.T, r *docindextest.Response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if status >= 400 {
		var body struct {
			Error string `json:"error"`
		}
		r.JSON(t, &body)
		if body.Error == "" {
			t.Fatalf("error response without an error message: %s", r.Body)
		}
	}
}

func TestHealthzNeedsNoToken(t *testing.T) {
	s := newServer(t)
	r := s.Do("GET", "/healthz", "", nil)
	wantStatus(t, r, http.StatusOK)
	if r.Map(t)["status"] != "ok" {
		t.Fatalf("healthz body %s", r.Body)
	}
}

func TestUnauthorized(t *testing.T) {
	s := newServer(t)
	expired, err := auth.MintHS256([]byte(docindextest.Secret), auth.Claims{Subject: "x", Email: "x@example.com"}, -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wrongSecret, err := auth.MintHS256([]byte("another secret"), auth.Claims{Subject: "x", Email: "x@example.com"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	noEmail, err := auth.MintHS256([]byte(docindextest.Secret), auth.Claims{Subject: "x"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	revoked := s.Key(root, "read", "write", "admin")
	var keys []map[string]any
	s.Do("GET", "/admin/api-keys", revoked, nil).JSON(t, &keys)
	wantStatus(t, s.Do("DELETE", "/admin/api-keys/"+keys[0]["id"].(string), revoked, nil), http.StatusOK)

	tokens := map[string]string{
		"none": "", "garbage": "not-a-token", "expired": expired, "wrong secret": wrongSecret,
		"no email": noEmail, "revoked key": revoked, "unknown key": "dik_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	}
	usersBefore := count(t, s, "docindex.users")
	for name, tok := range tokens {
		t.Run(name, func(t *testing.T) {
			for _, ep := range []struct{ method, path string }{
				{"GET", "/api/collections"}, {"POST", "/api/collections"}, {"GET", "/admin/api-keys"},
				{"GET", "/api/embedding-models"}, {"PUT", "/api/collections/00000000-0000-0000-0000-000000000000"},
			} {
				r := s.Do(ep.method, ep.path, tok, map[string]any{"displayName": "Should not exist"})
				wantStatus(t, r, http.StatusUnauthorized)
			}
		})
	}
	if n := count(t, s, "docindex.collections"); n != 0 {
		t.Fatalf("%d collections created by unauthenticated requests", n)
	}
	if n := count(t, s, "docindex.users"); n != usersBefore {
		t.Fatalf("unauthenticated requests created users: %d -> %d", usersBefore, n)
	}
	// A bearer scheme in another case is accepted.
	r := s.Do("GET", "/api/collections", "", nil)
	wantStatus(t, r, http.StatusUnauthorized)
	req, _ := http.NewRequest("GET", s.URL+"/api/collections", nil)
	req.Header.Set("Authorization", "bearer "+s.Token(owner))
	wantStatus(t, s.Send(req), http.StatusOK)
}

// Users come from tokens: created on first sight, refreshed when the claims change (a revoked
// admin role takes effect on the next request), and left alone otherwise.
func TestUserFollowsTokenClaims(t *testing.T) {
	s := newServer(t)
	boss := docindextest.User{Email: "Boss@Example.com", Name: "Boss", Admin: true}
	wantStatus(t, s.Do("GET", "/admin/api-keys", s.Token(boss), nil), http.StatusOK)
	first := s.UserRow("boss@example.com")
	if !first.IsAdmin || first.Name != "Boss" {
		t.Fatalf("user after first sight: %+v", first)
	}
	wantStatus(t, s.Do("GET", "/api/collections", s.Token(boss), nil), http.StatusOK)
	if again := s.UserRow("boss@example.com"); !again.UpdatedAt.Equal(first.UpdatedAt) {
		t.Fatalf("unchanged claims rewrote the user: %v -> %v", first.UpdatedAt, again.UpdatedAt)
	}
	demoted := docindextest.User{Email: "boss@example.com", Name: "Former Boss"}
	wantStatus(t, s.Do("GET", "/admin/api-keys", s.Token(demoted), nil), http.StatusForbidden)
	u := s.UserRow("boss@example.com")
	if u.IsAdmin || u.Name != "Former Boss" || u.ID != first.ID {
		t.Fatalf("user after the claims changed: %+v", u)
	}
	if n := count(t, s, "docindex.users"); n != 1 {
		t.Fatalf("%d users for one e-mail", n)
	}
}
