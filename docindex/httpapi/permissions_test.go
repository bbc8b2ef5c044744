package httpapi_test

import (
	"context"
	"net/http"
	"testing"
)

// TestPermissionTable walks the permission table of spec part 5 for every kind of caller.
func TestPermissionTable(t *testing.T) {
	s := newServer(t)
	own := s.Token(owner)
	c := createCollection(t, s, own, map[string]any{"name": "handbook"})
	id := c["id"].(string)
	share(t, s, own, id, map[string]any{"type": "user", "target": coAdmin.Email, "role": "admin"})
	share(t, s, own, id, map[string]any{"type": "user", "target": viewer.Email, "role": "viewer"})
	share(t, s, own, id, map[string]any{"type": "directory_group", "target": "eng", "role": "viewer"})

	readKey := s.Key(owner, "read")
	callers := map[string]string{
		"owner": own, "shared admin": s.Token(coAdmin), "viewer": s.Token(viewer), "group member": s.Token(member),
		"outsider": s.Token(outsider), "global admin": s.Token(root), "read-only key": readKey,
	}
	type op struct {
		method, path string
		body         any
	}
	ops := map[string]op{
		"get":          {"GET", "/api/collections/" + id, nil},
		"update":       {"PUT", "/api/collections/" + id, map[string]any{"description": "changed"}},
		"create share": {"POST", "/api/collections/" + id + "/shares", map[string]any{"type": "user", "target": "new@example.com", "role": "viewer"}},
		"list shares":  {"GET", "/api/collections/" + id + "/shares", nil},
		"create key":   {"POST", "/admin/api-keys", map[string]any{"clientName": "ci"}},
		"list keys":    {"GET", "/admin/api-keys", nil},
	}
	want := map[string]map[string]int{
		"owner":         {"get": 200, "update": 200, "create share": 201, "list shares": 200, "create key": 403, "list keys": 403},
		"shared admin":  {"get": 200, "update": 200, "create share": 403, "list shares": 200, "create key": 403, "list keys": 403},
		"viewer":        {"get": 200, "update": 404, "create share": 403, "list shares": 403, "create key": 403, "list keys": 403},
		"group member":  {"get": 200, "update": 404, "create share": 403, "list shares": 403, "create key": 403, "list keys": 403},
		"outsider":      {"get": 403, "update": 404, "create share": 403, "list shares": 403, "create key": 403, "list keys": 403},
		"global admin":  {"get": 200, "update": 200, "create share": 403, "list shares": 200, "create key": 201, "list keys": 200},
		"read-only key": {"get": 200, "update": 403, "create share": 403, "list shares": 200, "create key": 403, "list keys": 403},
	}
	for caller, tok := range callers {
		for name, o := range ops {
			t.Run(caller+"/"+name, func(t *testing.T) {
				body := o.body
				if name == "create share" {
					// A fresh target per caller, so a success never turns the next into a conflict.
					body = map[string]any{"type": "user", "target": caller + "@new.example.com", "role": "viewer"}
				}
				wantStatus(t, s.Do(o.method, o.path, tok, body), want[caller][name])
			})
		}
	}
	// Only the owner and a global admin delete; the owner's read-only key may not.
	for caller, status := range map[string]int{"read-only key": 403, "shared admin": 403, "viewer": 403, "outsider": 404} {
		wantStatus(t, s.Do("DELETE", "/api/collections/"+id, callers[caller], nil), status)
	}
	wantStatus(t, s.Do("DELETE", "/api/collections/"+id, own, nil), http.StatusOK)
	wantStatus(t, s.Do("GET", "/api/collections/"+id, own, nil), http.StatusNotFound)
	if n := count(t, s, "docindex.shares"); n != 0 {
		t.Fatalf("%d shares survived the collection", n)
	}
}

func TestGetCollectionErrors(t *testing.T) {
	s := newServer(t)
	own := s.Token(owner)
	wantStatus(t, s.Do("GET", "/api/collections/not-a-uuid", own, nil), 400)
	wantStatus(t, s.Do("GET", "/api/collections/7d3c5a34-1111-4222-8333-444455556666", own, nil), 404)
	c := createCollection(t, s, own, map[string]any{"name": "mine"})
	wantStatus(t, s.Do("GET", "/api/collections/"+c["id"].(string), s.Token(outsider), nil), 403)
}

func TestListCollections(t *testing.T) {
	s := newServer(t)
	own := s.Token(owner)
	mine := createCollection(t, s, own, map[string]any{"name": "mine_private"})
	createCollection(t, s, own, map[string]any{"name": "mine_public", "visibility": "public"})
	other := s.Token(outsider)
	sharedToOwner := createCollection(t, s, other, map[string]any{"name": "theirs_shared"})
	share(t, s, other, sharedToOwner["id"].(string), map[string]any{"type": "user", "target": owner.Email, "role": "admin"})
	pubShare := createCollection(t, s, other, map[string]any{"name": "theirs_public_share"})
	share(t, s, other, pubShare["id"].(string), map[string]any{"type": "public", "role": "viewer"})
	createCollection(t, s, other, map[string]any{"name": "theirs_private"})
	share(t, s, own, mine["id"].(string), map[string]any{"type": "user", "target": "x@example.com", "role": "viewer"})
	share(t, s, own, mine["id"].(string), map[string]any{"type": "directory_group", "target": "g", "role": "viewer"})

	names := func(filter string) map[string]map[string]any {
		path := "/api/collections"
		if filter != "" {
			path += "?filter=" + filter
		}
		r := s.Do("GET", path, own, nil)
		wantStatus(t, r, http.StatusOK)
		var body struct {
			Collections []map[string]any `json:"collections"`
		}
		r.JSON(t, &body)
		out := map[string]map[string]any{}
		for _, c := range body.Collections {
			out[c["name"].(string)] = c
		}
		return out
	}
	for filter, want := range map[string][]string{
		"":       {"mine_private", "mine_public", "theirs_shared", "theirs_public_share"},
		"all":    {"mine_private", "mine_public", "theirs_shared", "theirs_public_share"},
		"mine":   {"mine_private", "mine_public"},
		"shared": {"theirs_shared"},
		"public": {"mine_public", "theirs_public_share"},
	} {
		got := names(filter)
		if len(got) != len(want) {
			t.Errorf("filter %q: got %d collections %v, want %v", filter, len(got), keys(got), want)
		}
		for _, n := range want {
			if _, ok := got[n]; !ok {
				t.Errorf("filter %q lacks %s", filter, n)
			}
		}
	}
	all := names("all")
	item := all["mine_private"]
	u := s.UserRow(owner.Email)
	if item["myRole"] != "owner" || item["shareCount"] != float64(2) || item["ownerId"] != u.ID.String() ||
		item["collectionType"] != "rag" {
		t.Errorf("list item %v", item)
	}
	// A rag collection with an embedding model gets its chunk table (with indexes) at creation.
	if size, _ := item["tableSizeBytes"].(float64); size <= 0 {
		t.Errorf("tableSizeBytes %v, want the chunk table's size", item["tableSizeBytes"])
	}
	o := item["owner"].(map[string]any)
	if o["id"] != u.ID.String() || o["email"] != owner.Email || o["name"] != owner.Name {
		t.Errorf("owner object %v", o)
	}
	for _, k := range []string{"createdAt", "updatedAt", "displayName", "description", "visibility", "searchLanguage",
		"structuredExtractionEnabled", "imageDescriptionsEnabled"} {
		if _, ok := item[k]; !ok {
			t.Errorf("list item lacks %q", k)
		}
	}
	for _, k := range []string{"created_at", "owner_id", "type"} {
		if _, ok := item[k]; ok {
			t.Errorf("list item has record-only field %q", k)
		}
	}
	if all["theirs_shared"]["myRole"] != "admin" || all["theirs_public_share"]["myRole"] != "viewer" {
		t.Errorf("roles: %v / %v", all["theirs_shared"]["myRole"], all["theirs_public_share"]["myRole"])
	}
	wantStatus(t, s.Do("GET", "/api/collections?filter=everything", own, nil), 400)
}

func keys(m map[string]map[string]any) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestUpdateCollection(t *testing.T) {
	s := newServer(t)
	own := s.Token(owner)
	c := createCollection(t, s, own, map[string]any{"name": "upd", "displayName": "Before"})
	id := c["id"].(string)
	path := "/api/collections/" + id

	r := s.Do("PUT", path, own, map[string]any{"displayName": "After", "description": "new", "imageDescriptionsEnabled": true,
		"extractionInstructions": "ignored without extraction"})
	wantStatus(t, r, http.StatusOK)
	u := r.Map(t)
	if u["displayName"] != "After" || u["description"] != "new" || u["imageDescriptionsEnabled"] != true || u["imageDescriptionMode"] != "all" {
		t.Errorf("updated record %v", u)
	}
	if _, ok := u["extractionInstructions"]; ok {
		t.Errorf("extractionInstructions stored on a collection without extraction: %v", u)
	}
	if u["name"] != "upd" || u["created_at"] != c["created_at"] {
		t.Errorf("update changed fields it should not: %v", u)
	}

	before := count(t, s, "docindex.jobs")
	for name, tc := range map[string]struct {
		path   string
		body   any
		status int
	}{
		"bad language":    {path, map[string]any{"searchLanguage": "elvish"}, 400},
		"bad image mode":  {path, map[string]any{"imageDescriptionMode": "most"}, 400},
		"empty name":      {path, map[string]any{"displayName": "  "}, 400},
		"malformed body":  {path, "{{", 400},
		"wrong type":      {path, map[string]any{"imageDescriptionsEnabled": "yes"}, 400},
		"malformed id":    {"/api/collections/xyz", map[string]any{"description": "x"}, 400},
		"unknown id":      {"/api/collections/7d3c5a34-1111-4222-8333-444455556666", map[string]any{"description": "x"}, 404},
		"same language":   {path, map[string]any{"searchLanguage": "english"}, 200},
		"image mode only": {path, map[string]any{"imageDescriptionMode": "empty_pages"}, 200},
	} {
		t.Run(name, func(t *testing.T) { wantStatus(t, s.Do("PUT", tc.path, own, tc.body), tc.status) })
	}
	if n := count(t, s, "docindex.jobs"); n != before {
		t.Fatalf("updates without a language change queued jobs")
	}
	// A language change queues one rebuild_fts job.
	r = s.Do("PUT", path, own, map[string]any{"searchLanguage": "german"})
	wantStatus(t, r, http.StatusOK)
	if r.Map(t)["searchLanguage"] != "german" {
		t.Fatalf("language not changed: %s", r.Body)
	}
	var typ, status, coll string
	if err := s.DB.QueryRowContext(context.Background(), "SELECT type, status, collection_id FROM docindex.jobs").Scan(&typ, &status, &coll); err != nil {
		t.Fatal(err)
	}
	if typ != "rebuild_fts" || status != "queued" || coll != id {
		t.Fatalf("job %s %s %s", typ, status, coll)
	}
}
