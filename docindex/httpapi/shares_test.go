package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"
)

func TestShares(t *testing.T) {
	s := newServer(t)
	own := s.Token(owner)
	c := createCollection(t, s, own, map[string]any{"name": "docs"})
	id := c["id"].(string)
	base := "/api/collections/" + id + "/shares"

	sh := share(t, s, own, id, map[string]any{"type": "user", "target": "Viewer@Example.com", "role": "viewer"})
	for _, k := range []string{"id", "collection_id", "type", "target", "targetDisplay", "role", "created_at"} {
		if _, ok := sh[k]; !ok {
			t.Errorf("share lacks %q: %v", k, sh)
		}
	}
	if sh["collection_id"] != id || sh["targetDisplay"] != "Viewer@Example.com" {
		t.Errorf("share %v", sh)
	}
	pub := share(t, s, own, id, map[string]any{"type": "public", "target": "ignored", "role": "viewer"})
	if pub["target"] != "" {
		t.Errorf("public share target %q, want empty", pub["target"])
	}
	grp := share(t, s, own, id, map[string]any{"type": "directory_group", "target": "eng", "targetDisplay": "Engineering", "role": "admin"})
	if grp["targetDisplay"] != "Engineering" {
		t.Errorf("group share %v", grp)
	}

	before := count(t, s, "docindex.shares")
	for name, tc := range map[string]struct {
		token  string
		path   string
		body   any
		status int
	}{
		"duplicate user (case-insensitive)": {own, base, map[string]any{"type": "user", "target": "viewer@example.com", "role": "admin"}, 409},
		"duplicate public":                  {own, base, map[string]any{"type": "public", "role": "admin"}, 409},
		"bad type":                          {own, base, map[string]any{"type": "team", "target": "x", "role": "viewer"}, 400},
		"bad role":                          {own, base, map[string]any{"type": "user", "target": "a@example.com", "role": "owner"}, 400},
		"missing role":                      {own, base, map[string]any{"type": "user", "target": "a@example.com"}, 400},
		"missing target":                    {own, base, map[string]any{"type": "user", "role": "viewer"}, 400},
		"missing group target":              {own, base, map[string]any{"type": "directory_group", "role": "viewer"}, 400},
		"malformed body":                    {own, base, "{", 400},
		"malformed collection id":           {own, "/api/collections/nope/shares", map[string]any{"type": "public", "role": "viewer"}, 400},
		"unknown collection":                {own, "/api/collections/7d3c5a34-1111-4222-8333-444455556666/shares", map[string]any{"type": "public", "role": "viewer"}, 404},
		"collection admin is not owner":     {s.Token(member), base, map[string]any{"type": "user", "target": "a@example.com", "role": "viewer"}, 403},
		"viewer is not owner":               {s.Token(viewer), base, map[string]any{"type": "user", "target": "a@example.com", "role": "viewer"}, 403},
		"global admin is not owner":         {s.Token(root), base, map[string]any{"type": "user", "target": "a@example.com", "role": "viewer"}, 403},
	} {
		t.Run(name, func(t *testing.T) { wantStatus(t, s.Do("POST", tc.path, tc.token, tc.body), tc.status) })
	}
	if n := count(t, s, "docindex.shares"); n != before {
		t.Fatalf("rejected share creates changed the database: %d -> %d", before, n)
	}

	// Change a role.
	shareURL := base + "/" + sh["id"].(string)
	r := s.Do("PUT", shareURL, own, map[string]any{"role": "admin"})
	wantStatus(t, r, http.StatusOK)
	if r.Map(t)["role"] != "admin" {
		t.Fatalf("role not changed: %s", r.Body)
	}
	wantStatus(t, s.Do("PUT", shareURL, own, map[string]any{"role": "superuser"}), 400)
	wantStatus(t, s.Do("PUT", shareURL, own, map[string]any{}), 400)
	wantStatus(t, s.Do("PUT", shareURL, own, "[1"), 400)
	wantStatus(t, s.Do("PUT", base+"/not-a-uuid", own, map[string]any{"role": "viewer"}), 400)
	wantStatus(t, s.Do("PUT", shareURL, s.Token(viewer), map[string]any{"role": "viewer"}), 403)
	wantStatus(t, s.Do("PUT", base+"/7d3c5a34-1111-4222-8333-444455556666", own, map[string]any{"role": "viewer"}), 404)
	wantStatus(t, s.Do("PUT", "/api/collections/7d3c5a34-1111-4222-8333-444455556666/shares/"+sh["id"].(string), own, map[string]any{"role": "viewer"}), 404)

	// List: owner and collection admins.
	r = s.Do("GET", base, own, nil)
	wantStatus(t, r, http.StatusOK)
	var list struct {
		Shares []map[string]any `json:"shares"`
	}
	r.JSON(t, &list)
	if len(list.Shares) != 3 {
		t.Fatalf("%d shares listed, want 3", len(list.Shares))
	}
	wantStatus(t, s.Do("GET", base, s.Token(member), nil), http.StatusOK)
	wantStatus(t, s.Do("GET", base, s.Token(outsider), nil), http.StatusForbidden)

	// Delete: owner only.
	wantStatus(t, s.Do("DELETE", base+"/"+pub["id"].(string), s.Token(member), nil), http.StatusForbidden)
	wantStatus(t, s.Do("DELETE", base+"/"+pub["id"].(string), own, nil), http.StatusOK)
	wantStatus(t, s.Do("DELETE", base+"/"+pub["id"].(string), own, nil), http.StatusNotFound)
}

// The SQL role expression and the Go resolver agree for every kind of caller.
func TestRoleResolutionSQLMatchesGo(t *testing.T) {
	s := newServer(t)
	own := s.Token(owner)
	ids := map[string]string{}
	for _, spec := range []struct {
		name, visibility string
		shares           []map[string]any
	}{
		{"plain", "private", nil},
		{"pub", "public", nil},
		{"shared_user", "shared", []map[string]any{{"type": "user", "target": "VIEWER@example.com", "role": "viewer"}}},
		{"shared_group", "shared", []map[string]any{{"type": "directory_group", "target": "eng", "role": "admin"}, {"type": "public", "role": "viewer"}}},
		{"pub_admin_share", "public", []map[string]any{{"type": "user", "target": "viewer@example.com", "role": "admin"}}},
	} {
		c := createCollection(t, s, own, map[string]any{"name": spec.name, "visibility": spec.visibility})
		ids[spec.name] = c["id"].(string)
		for _, b := range spec.shares {
			share(t, s, own, c["id"].(string), b)
		}
	}
	want := map[string]map[string]string{
		owner.Email:    {"plain": "owner", "pub": "owner", "shared_user": "owner", "shared_group": "owner", "pub_admin_share": "owner"},
		viewer.Email:   {"pub": "viewer", "shared_user": "viewer", "shared_group": "viewer", "pub_admin_share": "admin"},
		member.Email:   {"pub": "viewer", "shared_group": "admin", "pub_admin_share": "viewer"},
		outsider.Email: {"pub": "viewer", "shared_group": "viewer", "pub_admin_share": "viewer"},
		root.Email:     {"plain": "admin", "pub": "admin", "shared_user": "admin", "shared_group": "admin", "pub_admin_share": "admin"},
	}
	for _, u := range []struct {
		email string
		tok   string
	}{
		{owner.Email, own}, {viewer.Email, s.Token(viewer)}, {member.Email, s.Token(member)},
		{outsider.Email, s.Token(outsider)}, {root.Email, s.Token(root)},
	} {
		r := s.Do("GET", "/api/collections", u.tok, nil)
		wantStatus(t, r, http.StatusOK)
		var list struct {
			Collections []map[string]any `json:"collections"`
		}
		r.JSON(t, &list)
		got := map[string]string{}
		for _, c := range list.Collections {
			got[c["name"].(string)] = c["myRole"].(string)
		}
		if len(got) != len(want[u.email]) {
			t.Errorf("%s sees %v, want %v", u.email, got, want[u.email])
		}
		for name, role := range want[u.email] {
			if got[name] != role {
				t.Errorf("%s on %s: role %q, want %q", u.email, name, got[name], role)
			}
		}
		// The Go resolver gives the same answers.
		p, err := s.Svc.Authenticate(context.Background(), u.tok)
		if err != nil {
			t.Fatal(err)
		}
		for name, id := range ids {
			role, err := s.Svc.Role(context.Background(), p, uuid.MustParse(id))
			if err != nil {
				t.Fatal(err)
			}
			if string(role) != want[u.email][name] {
				t.Errorf("Go resolver: %s on %s: %q, want %q", u.email, name, role, want[u.email][name])
			}
		}
	}
}
