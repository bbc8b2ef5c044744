package docsuite_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeConfluence is an HTTP server that answers like Confluence Cloud
// (REST v2 under /wiki/api/v2, v1 restrictions under /wiki/rest/api) or
// Confluence Data Center (/rest/api below a context path), with the
// published response shapes: {results, _links{next, base}} listings, cursor
// pagination on Cloud and start/limit on Data Center, storage-format bodies,
// read restrictions, attachments with download links. It pages its
// listings after at most limit results so that clients must follow next
// links.
type fakeConfluence struct {
	srv     *httptest.Server
	cloud   bool
	context string // Data Center context path ("/confluence")

	mu       sync.Mutex
	user     string
	token    string
	pat      string // Data Center personal access token
	limit    int
	fail500  bool // answer everything with a 500 that echoes the request's credentials
	spaces   []*fakeSpace
	pages    map[string]*fakePage
	order    []string
	atts     map[string]*fakeAttachment
	nextID   int
	requests map[string]int // by route pattern
}

type fakeSpace struct{ ID, Key, Name string }

type fakeUser struct{ AccountID, Email, Username string }

type fakePage struct {
	ID, Space, Title, Parent, Body string
	Version                        int
	Status                         string
	Users                          []fakeUser
	Groups                         []string
	When                           time.Time
}

type fakeAttachment struct {
	ID, Page, Title, MediaType string
	Data                       []byte
	Version                    int
	Status                     string
}

func newFakeConfluence(t testing.TB, cloud bool) *fakeConfluence {
	f := &fakeConfluence{
		cloud:    cloud,
		user:     "bot@example.com",
		token:    "fake-api-token-0123456789",
		pat:      "fake-personal-access-token-abcdef",
		limit:    2,
		pages:    map[string]*fakePage{},
		atts:     map[string]*fakeAttachment{},
		nextID:   1000,
		requests: map[string]int{},
	}
	if !cloud {
		f.context = "/confluence"
	}
	mux := http.NewServeMux()
	if cloud {
		mux.HandleFunc("GET /wiki/api/v2/spaces", f.cloudSpaces)
		mux.HandleFunc("GET /wiki/api/v2/spaces/{id}/pages", f.cloudSpacePages)
		mux.HandleFunc("GET /wiki/api/v2/pages/{id}", f.cloudPage)
		mux.HandleFunc("GET /wiki/api/v2/pages/{id}/attachments", f.cloudAttachments)
		mux.HandleFunc("GET /wiki/api/v2/attachments/{id}", f.cloudAttachment)
		mux.HandleFunc("GET /wiki/rest/api/content/{id}/restriction/byOperation/read", f.cloudRestriction)
		mux.HandleFunc("GET /wiki/download/attachments/{page}/{name}", f.download)
	} else {
		c := f.context
		mux.HandleFunc("GET "+c+"/rest/api/space", f.dcSpaces)
		mux.HandleFunc("GET "+c+"/rest/api/content", f.dcContentList)
		mux.HandleFunc("GET "+c+"/rest/api/content/{id}", f.dcContent)
		mux.HandleFunc("GET "+c+"/rest/api/content/{id}/child/attachment", f.dcAttachments)
		mux.HandleFunc("GET "+c+"/download/attachments/{page}/{name}", f.download)
	}
	f.srv = httptest.NewServer(f.auth(mux))
	t.Cleanup(f.srv.Close)
	return f
}

// baseURL is what a user configures: the site (Cloud) or the site with its
// context path (Data Center).
func (f *fakeConfluence) baseURL() string { return f.srv.URL + f.context }

// config returns a source configuration for this server.
func (f *fakeConfluence) config(extra map[string]any) json.RawMessage {
	cfg := map[string]any{
		"flavor":     "confluence",
		"baseUrl":    f.baseURL(),
		"deployment": map[bool]string{true: "cloud", false: "datacenter"}[f.cloud],
		"username":   f.user,
		"apiToken":   f.token,
	}
	for k, v := range extra {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = v
		}
	}
	raw, _ := json.Marshal(cfg)
	return raw
}

func (f *fakeConfluence) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		fail, user, token, pat := f.fail500, f.user, f.token, f.pat
		if _, pattern := next.(*http.ServeMux).Handler(r); pattern != "" {
			f.requests[pattern]++
		}
		f.mu.Unlock()
		if fail {
			// A broken proxy that echoes the request: clients must not
			// repeat it in their errors.
			u, p, _ := r.BasicAuth()
			http.Error(w, fmt.Sprintf("internal error for %s / %s (%s)", u, p, r.Header.Get("Authorization")), http.StatusInternalServerError)
			return
		}
		u, p, ok := r.BasicAuth()
		good := ok && u == user && p == token
		if !f.cloud && r.Header.Get("Authorization") == "Bearer "+pat {
			good = true
		}
		if !good {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"statusCode":401,"message":"Unauthorized"}`))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (f *fakeConfluence) count(pattern string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[pattern]
}

// Mutations, as a user of the suite would make them.

func (f *fakeConfluence) addSpace(key, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.spaces = append(f.spaces, &fakeSpace{ID: strconv.Itoa(f.nextID), Key: key, Name: name})
}

func (f *fakeConfluence) addPage(space, parent, title, body string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	id := strconv.Itoa(f.nextID)
	f.pages[id] = &fakePage{ID: id, Space: space, Title: title, Parent: parent, Body: body, Version: 1, Status: "current", When: time.Now().UTC()}
	f.order = append(f.order, id)
	return id
}

func (f *fakeConfluence) edit(id, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pages[id]
	p.Body = body
	p.Version++
	p.When = time.Now().UTC()
}

// trash moves a page to the trash: it leaves listings, and reading it by
// id shows status "trashed".
func (f *fakeConfluence) trash(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages[id].Status = "trashed"
}

// restrict sets a page's read restriction (none for empty lists), which
// does not change its version, as in Confluence.
func (f *fakeConfluence) restrict(id string, users []fakeUser, groups []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages[id].Users = users
	f.pages[id].Groups = groups
}

func (f *fakeConfluence) addAttachment(page, title, mediaType string, data []byte) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	id := "att" + strconv.Itoa(f.nextID)
	f.atts[id] = &fakeAttachment{ID: id, Page: page, Title: title, MediaType: mediaType, Data: data, Version: 1, Status: "current"}
	return id
}

func (f *fakeConfluence) setFail500(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail500 = on
}

// Helpers for answers.

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"errors":[{"status":404,"code":"NOT_FOUND","title":"Not Found","detail":null}]}`))
}

// window cuts a listing by the request's limit (capped at the server's) and
// its position: a Cloud cursor (opaque) or a Data Center start offset.
func (f *fakeConfluence) window(r *http.Request, n int) (from, to int, next url.Values) {
	q := r.URL.Query()
	limit := f.limit
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 && l < limit {
		limit = l
	}
	if f.cloud {
		if c := q.Get("cursor"); c != "" {
			raw, _ := base64.RawURLEncoding.DecodeString(c)
			from, _ = strconv.Atoi(strings.TrimPrefix(string(raw), "offset:"))
		}
	} else {
		from, _ = strconv.Atoi(q.Get("start"))
	}
	from = min(from, n)
	to = min(from+limit, n)
	if to < n {
		next = url.Values{}
		for k, v := range q {
			next[k] = v
		}
		if f.cloud {
			next.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte("offset:"+strconv.Itoa(to))))
		} else {
			next.Set("start", strconv.Itoa(to))
		}
		next.Set("limit", strconv.Itoa(limit))
	}
	return from, to, next
}

// cloudListing writes a v2 listing with _links.next relative to the site,
// "/wiki/api/v2/...", and _links.base ending in /wiki, as Cloud does, and
// the same next link in a Link header.
func (f *fakeConfluence) cloudListing(w http.ResponseWriter, r *http.Request, results []any) {
	from, to, next := f.window(r, len(results))
	l := map[string]any{"base": f.srv.URL + "/wiki"}
	if next != nil {
		link := r.URL.Path + "?" + next.Encode()
		l["next"] = link
		w.Header().Set("Link", "<"+link+`>; rel="next"`)
	}
	writeJSON(w, map[string]any{"results": nonNil(results[from:to]), "_links": l})
}

// dcListing writes a Data Center listing: start, limit, size, and
// _links.next relative to _links.base (the site with its context path).
func (f *fakeConfluence) dcListing(w http.ResponseWriter, r *http.Request, results []any) {
	from, to, next := f.window(r, len(results))
	base := f.srv.URL + f.context
	l := map[string]any{"base": base, "context": f.context, "self": base + strings.TrimPrefix(r.URL.Path, f.context)}
	if next != nil {
		l["next"] = strings.TrimPrefix(r.URL.Path, f.context) + "?" + next.Encode()
	}
	limit := f.limit
	writeJSON(w, map[string]any{"results": nonNil(results[from:to]), "start": from, "limit": limit, "size": to - from, "_links": l})
}

func nonNil(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}

func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func (f *fakeConfluence) spaceByKey(key string) *fakeSpace {
	for _, s := range f.spaces {
		if s.Key == key {
			return s
		}
	}
	return nil
}

func (f *fakeConfluence) currentPages(space string) []*fakePage {
	var out []*fakePage
	for _, id := range f.order {
		if p := f.pages[id]; p.Space == space && p.Status == "current" {
			out = append(out, p)
		}
	}
	return out
}

func (f *fakeConfluence) pageAttachments(page string) []*fakeAttachment {
	var out []*fakeAttachment
	for _, a := range f.atts {
		if a.Page == page && a.Status == "current" {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b *fakeAttachment) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (f *fakeConfluence) ancestors(p *fakePage) []*fakePage {
	var chain []*fakePage
	for cur := f.pages[p.Parent]; cur != nil; cur = f.pages[cur.Parent] {
		chain = append([]*fakePage{cur}, chain...)
	}
	return chain
}

func webTitle(s string) string { return strings.ReplaceAll(url.PathEscape(s), "%20", "+") }

// Cloud.

func (f *fakeConfluence) cloudSpaces(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := splitList(r.URL.Query()["keys"])
	var out []any
	for _, s := range f.spaces {
		if len(keys) > 0 && !slices.Contains(keys, s.Key) {
			continue
		}
		out = append(out, map[string]any{
			"id": s.ID, "key": s.Key, "name": s.Name, "type": "global", "status": "current",
			"authorId": "557058:author", "createdAt": "2024-01-01T00:00:00.000Z", "homepageId": nil,
			"_links": map[string]any{"webui": "/spaces/" + s.Key},
		})
	}
	f.cloudListing(w, r, out)
}

func (f *fakeConfluence) cloudPageJSON(p *fakePage, withBody bool) map[string]any {
	sp := f.spaceByKey(p.Space)
	m := map[string]any{
		"id": p.ID, "status": p.Status, "title": p.Title, "spaceId": sp.ID,
		"parentId": nil, "parentType": nil, "position": 0,
		"authorId": "557058:author", "ownerId": "557058:author", "lastOwnerId": nil,
		"createdAt": "2024-01-01T00:00:00.000Z",
		"version": map[string]any{
			"createdAt": p.When.Format("2006-01-02T15:04:05.000Z"), "message": "", "number": p.Version,
			"minorEdit": false, "authorId": "557058:author",
		},
		"_links": map[string]any{
			"webui":  "/spaces/" + p.Space + "/pages/" + p.ID + "/" + webTitle(p.Title),
			"editui": "/pages/resumedraft.action?draftId=" + p.ID,
			"tinyui": "/x/" + p.ID,
		},
	}
	if p.Parent != "" {
		m["parentId"], m["parentType"] = p.Parent, "page"
	}
	if withBody {
		m["body"] = map[string]any{"storage": map[string]any{"representation": "storage", "value": p.Body}}
	}
	return m
}

func (f *fakeConfluence) cloudSpacePages(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var sp *fakeSpace
	for _, s := range f.spaces {
		if s.ID == r.PathValue("id") {
			sp = s
		}
	}
	if sp == nil {
		notFound(w)
		return
	}
	var out []any
	for _, p := range f.currentPages(sp.Key) {
		out = append(out, f.cloudPageJSON(p, r.URL.Query().Get("body-format") == "storage"))
	}
	f.cloudListing(w, r, out)
}

func (f *fakeConfluence) cloudPage(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pages[r.PathValue("id")]
	if p == nil {
		notFound(w)
		return
	}
	writeJSON(w, f.cloudPageJSON(p, r.URL.Query().Get("body-format") == "storage"))
}

func (f *fakeConfluence) downloadLink(a *fakeAttachment) string {
	return "/download/attachments/" + a.Page + "/" + url.PathEscape(a.Title) + "?version=" + strconv.Itoa(a.Version) + "&modificationDate=1700000000000&api=v2"
}

func (f *fakeConfluence) cloudAttachmentJSON(a *fakeAttachment) map[string]any {
	p := f.pages[a.Page]
	return map[string]any{
		"id": a.ID, "status": a.Status, "title": a.Title, "createdAt": "2024-01-01T00:00:00.000Z",
		"pageId": a.Page, "mediaType": a.MediaType, "mediaTypeDescription": "", "comment": "",
		"fileId": "file-" + a.ID, "fileSize": len(a.Data),
		"webuiLink":    "/spaces/" + p.Space + "/pages/" + p.ID + "/" + webTitle(p.Title) + "?preview=" + url.QueryEscape("/"+a.Page+"/"+a.ID+"/"+a.Title),
		"downloadLink": f.downloadLink(a),
		"version":      map[string]any{"createdAt": "2024-01-01T00:00:00.000Z", "message": "", "number": a.Version, "minorEdit": false, "authorId": "557058:author"},
		"_links":       map[string]any{"webui": "/pages/viewpageattachments.action?pageId=" + a.Page, "download": f.downloadLink(a)},
	}
}

func (f *fakeConfluence) cloudAttachments(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pages[r.PathValue("id")] == nil {
		notFound(w)
		return
	}
	var out []any
	for _, a := range f.pageAttachments(r.PathValue("id")) {
		out = append(out, f.cloudAttachmentJSON(a))
	}
	f.cloudListing(w, r, out)
}

func (f *fakeConfluence) cloudAttachment(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.atts[r.PathValue("id")]
	if a == nil {
		notFound(w)
		return
	}
	writeJSON(w, f.cloudAttachmentJSON(a))
}

// restrictionJSON is a read restriction as both APIs write it; limit and
// start page the user and group lists.
func (f *fakeConfluence) restrictionJSON(p *fakePage, start, limit int) map[string]any {
	var users, groups []any
	for _, u := range p.Users {
		if f.cloud {
			users = append(users, map[string]any{
				"type": "known", "accountId": u.AccountID, "accountType": "atlassian",
				"email": u.Email, "publicName": u.AccountID, "displayName": u.AccountID,
			})
		} else {
			users = append(users, map[string]any{"type": "known", "username": u.Username, "userKey": "key-" + u.Username, "displayName": u.Username})
		}
	}
	for _, g := range p.Groups {
		groups = append(groups, map[string]any{"type": "group", "name": g, "id": "gid-" + g})
	}
	cut := func(s []any) []any {
		from := min(start, len(s))
		return nonNil(s[from:min(from+limit, len(s))])
	}
	u, g := cut(users), cut(groups)
	return map[string]any{
		"operation": "read",
		"restrictions": map[string]any{
			"user":  map[string]any{"results": u, "start": start, "limit": limit, "size": len(u)},
			"group": map[string]any{"results": g, "start": start, "limit": limit, "size": len(g)},
		},
		"_links": map[string]any{"base": f.srv.URL + "/wiki"},
	}
}

func (f *fakeConfluence) cloudRestriction(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pages[r.PathValue("id")]
	if p == nil || p.Status != "current" {
		notFound(w)
		return
	}
	start, _ := strconv.Atoi(r.URL.Query().Get("start"))
	// Cloud caps the lists well below what clients ask for.
	limit := 2
	writeJSON(w, f.restrictionJSON(p, start, limit))
}

func (f *fakeConfluence) download(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.atts {
		if a.Page == r.PathValue("page") && a.Title == r.PathValue("name") && a.Status == "current" {
			w.Header().Set("Content-Type", a.MediaType)
			w.Header().Set("Content-Length", strconv.Itoa(len(a.Data)))
			_, _ = w.Write(a.Data)
			return
		}
	}
	http.NotFound(w, r)
}

// Data Center.

func (f *fakeConfluence) dcSpaces(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := r.URL.Query()["spaceKey"]
	var out []any
	for _, s := range f.spaces {
		if len(keys) > 0 && !slices.Contains(keys, s.Key) {
			continue
		}
		id, _ := strconv.Atoi(s.ID)
		out = append(out, map[string]any{
			"id": id, "key": s.Key, "name": s.Name, "type": "global",
			"_links": map[string]any{"webui": "/display/" + s.Key, "self": f.baseURL() + "/rest/api/space/" + s.Key},
		})
	}
	f.dcListing(w, r, out)
}

func (f *fakeConfluence) dcPageJSON(p *fakePage, expand string) map[string]any {
	m := map[string]any{
		"id": p.ID, "type": "page", "status": p.Status, "title": p.Title,
		"_links": map[string]any{
			"webui":  "/display/" + p.Space + "/" + webTitle(p.Title),
			"tinyui": "/x/" + p.ID,
			"self":   f.baseURL() + "/rest/api/content/" + p.ID,
		},
		"_expandable": map[string]any{"container": "/rest/api/space/" + p.Space},
	}
	if strings.Contains(expand, "version") {
		m["version"] = map[string]any{
			"by":     map[string]any{"type": "known", "username": "admin", "userKey": "key-admin"},
			"when":   p.When.Format("2006-01-02T15:04:05.000Z07:00"),
			"number": p.Version, "minorEdit": false,
		}
	}
	if strings.Contains(expand, "ancestors") {
		var anc []any
		for _, a := range f.ancestors(p) {
			anc = append(anc, map[string]any{"id": a.ID, "type": "page", "status": a.Status, "title": a.Title})
		}
		m["ancestors"] = nonNil(anc)
	}
	if strings.Contains(expand, "restrictions.read") {
		m["restrictions"] = map[string]any{"read": f.restrictionJSON(p, 0, 200)}
	}
	if strings.Contains(expand, "body.storage") {
		m["body"] = map[string]any{"storage": map[string]any{"value": p.Body, "representation": "storage"}}
	}
	return m
}

func (f *fakeConfluence) dcAttachmentJSON(a *fakeAttachment) map[string]any {
	return map[string]any{
		"id": a.ID, "type": "attachment", "status": a.Status, "title": a.Title,
		"version":    map[string]any{"number": a.Version, "when": "2024-01-01T00:00:00.000Z"},
		"metadata":   map[string]any{"mediaType": a.MediaType},
		"extensions": map[string]any{"mediaType": a.MediaType, "fileSize": len(a.Data), "comment": ""},
		"_links": map[string]any{
			"webui":    "/pages/viewpageattachments.action?pageId=" + a.Page + "&preview=" + url.QueryEscape("/"+a.Page+"/"+a.ID+"/"+a.Title),
			"download": f.downloadLink(a),
			"self":     f.baseURL() + "/rest/api/content/" + a.ID,
		},
	}
}

func (f *fakeConfluence) dcContentList(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := r.URL.Query()
	if q.Get("type") != "page" {
		http.Error(w, "the fake serves type=page only", http.StatusBadRequest)
		return
	}
	var out []any
	for _, p := range f.currentPages(q.Get("spaceKey")) {
		out = append(out, f.dcPageJSON(p, q.Get("expand")))
	}
	f.dcListing(w, r, out)
}

func (f *fakeConfluence) dcContent(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if a := f.atts[id]; a != nil {
		writeJSON(w, f.dcAttachmentJSON(a))
		return
	}
	p := f.pages[id]
	if p == nil || p.Status != "current" {
		// Data Center answers 404 for trashed content unless asked for
		// status=trashed.
		notFound(w)
		return
	}
	writeJSON(w, f.dcPageJSON(p, r.URL.Query().Get("expand")))
}

func (f *fakeConfluence) dcAttachments(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pages[r.PathValue("id")] == nil {
		notFound(w)
		return
	}
	var out []any
	for _, a := range f.pageAttachments(r.PathValue("id")) {
		out = append(out, f.dcAttachmentJSON(a))
	}
	f.dcListing(w, r, out)
}
