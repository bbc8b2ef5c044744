package docsuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

// Page sizes of the listings: the largest each API accepts without
// shortening the answer.
const (
	cloudLimit = 250
	dcLimit    = 100
)

// dcExpand is what a Data Center page listing expands: the version for
// Version, ancestors and read restrictions for the access list.
const dcExpand = "version,ancestors,restrictions.read.restrictions.user,restrictions.read.restrictions.group"

// errSpaceMissing is wrapped when a configured space cannot be found.
var errSpaceMissing = fmt.Errorf("space not found or not readable with these credentials: %w", plugins.ErrNotFound)

// confluence reads Confluence Cloud (REST v2, with v1 for restrictions) or
// Confluence Data Center (REST /rest/api).
type confluence struct {
	c     *Connector
	cfg   Config
	a     *api
	cloud bool
	site  string // scheme://host plus the context path, if any (Data Center)
	web   string // what web UI links are relative to
	rest  string // the API root: /wiki/api/v2 (Cloud) or /rest/api (Data Center)
	v1    string // Cloud's v1 API root, for restrictions
}

func newConfluence(c *Connector, cfg Config) *confluence {
	f := &confluence{c: c, cfg: cfg, cloud: cfg.Deployment == DeploymentCloud, site: cfg.BaseURL}
	if f.cloud {
		// Cloud sites are given with or without /wiki; the APIs live below
		// /wiki either way.
		f.site = strings.TrimSuffix(f.site, "/wiki")
		f.web = f.site + "/wiki"
		f.rest = f.web + "/api/v2"
		f.v1 = f.web + "/rest/api"
	} else {
		f.web = f.site
		f.rest = f.site + "/rest/api"
	}
	var auth func(*http.Request)
	switch {
	case cfg.Username != "":
		auth = func(r *http.Request) { r.SetBasicAuth(cfg.Username, cfg.APIToken) }
	case cfg.APIToken != "":
		// A Data Center personal access token.
		auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+cfg.APIToken) }
	}
	f.a = c.newAPI(cfg, c.hc, auth)
	return f
}

// space is a Confluence space.
type space struct {
	ID, Key, Name, URL string
}

// page is a page's metadata from a listing.
type page struct {
	ID, Title, ParentID string
	Version             int
	Modified            time.Time
	URL                 string
	own                 *acl // the page's own read restriction
	gone                bool // deleted while the sync ran
}

// Wire shapes of the two APIs (only the fields used).

// flexString takes a JSON string or number: ids are strings in the REST
// APIs and numbers in webhook payloads.
type flexString string

func (s *flexString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = flexString(v)
		return nil
	}
	if string(b) != "null" {
		*s = flexString(strings.TrimSpace(string(b)))
	}
	return nil
}

type links struct {
	Next     string `json:"next"`
	Base     string `json:"base"`
	WebUI    string `json:"webui"`
	Download string `json:"download"`
}

type listing[T any] struct {
	Results []T   `json:"results"`
	Links   links `json:"_links"`
}

type cloudSpace struct {
	ID    flexString `json:"id"`
	Key   string     `json:"key"`
	Name  string     `json:"name"`
	Links links      `json:"_links"`
}

type cloudVersion struct {
	Number    int    `json:"number"`
	CreatedAt string `json:"createdAt"`
}

type cloudPage struct {
	ID       flexString   `json:"id"`
	Status   string       `json:"status"`
	Title    string       `json:"title"`
	ParentID flexString   `json:"parentId"`
	Version  cloudVersion `json:"version"`
	Body     struct {
		Storage struct {
			Value string `json:"value"`
		} `json:"storage"`
	} `json:"body"`
	Links links `json:"_links"`
}

type cloudAttachment struct {
	ID           flexString   `json:"id"`
	Status       string       `json:"status"`
	Title        string       `json:"title"`
	MediaType    string       `json:"mediaType"`
	FileSize     int64        `json:"fileSize"`
	WebuiLink    string       `json:"webuiLink"`
	DownloadLink string       `json:"downloadLink"`
	Version      cloudVersion `json:"version"`
	Links        links        `json:"_links"`
}

// restriction is a read restriction as both APIs write it.
type restriction struct {
	Restrictions struct {
		User struct {
			Results []restrictedUser `json:"results"`
			Limit   int              `json:"limit"`
		} `json:"user"`
		Group struct {
			Results []struct {
				Name string `json:"name"`
			} `json:"results"`
			Limit int `json:"limit"`
		} `json:"group"`
	} `json:"restrictions"`
}

type restrictedUser struct {
	Email     string `json:"email"`
	AccountID string `json:"accountId"`
	Username  string `json:"username"`
	UserKey   string `json:"userKey"`
}

// principal is how a user appears in an access list: the e-mail address
// (what docindex matches) when the suite discloses it, else the most
// stable id it gives.
func (u restrictedUser) principal() string {
	for _, s := range []string{u.Email, u.AccountID, u.Username, u.UserKey} {
		if s != "" {
			return s
		}
	}
	return ""
}

func (r restriction) lists() (users, groups []string) {
	for _, u := range r.Restrictions.User.Results {
		users = append(users, u.principal())
	}
	for _, g := range r.Restrictions.Group.Results {
		groups = append(groups, g.Name)
	}
	return users, groups
}

type dcContent struct {
	ID      flexString `json:"id"`
	Type    string     `json:"type"`
	Status  string     `json:"status"`
	Title   string     `json:"title"`
	Version struct {
		Number int    `json:"number"`
		When   string `json:"when"`
	} `json:"version"`
	Ancestors []struct {
		ID flexString `json:"id"`
	} `json:"ancestors"`
	Restrictions struct {
		Read restriction `json:"read"`
	} `json:"restrictions"`
	Body struct {
		Storage struct {
			Value string `json:"value"`
		} `json:"storage"`
	} `json:"body"`
	Metadata struct {
		MediaType string `json:"mediaType"`
	} `json:"metadata"`
	Extensions struct {
		MediaType string `json:"mediaType"`
		FileSize  int64  `json:"fileSize"`
	} `json:"extensions"`
	Links links `json:"_links"`
}

func (f *confluence) deployment() string {
	if f.cloud {
		return "Confluence Cloud"
	}
	return "Confluence Data Center"
}

// list GETs a paginated listing from u on, following _links.next, and hands
// every result to each.
func list[T any](ctx context.Context, f *confluence, u string, each func(T) error) error {
	seen := map[string]bool{}
	for u != "" {
		if seen[u] {
			return fmt.Errorf("listing %s: the next link repeats itself", redactURL(mustParse(u)))
		}
		seen[u] = true
		var l listing[T]
		if err := f.a.getJSON(ctx, u, &l); err != nil {
			return err
		}
		for _, r := range l.Results {
			if err := each(r); err != nil {
				return err
			}
		}
		next, err := f.next(l.Links)
		if err != nil {
			return err
		}
		u = next
	}
	return nil
}

// next returns the absolute URL of a listing's next page, "" after the
// last. Cloud's links include /wiki, which its base also ends with; Data
// Center's are relative to a base that includes the context path.
func (f *confluence) next(l links) (string, error) {
	if l.Next == "" {
		return "", nil
	}
	base := f.web
	if !f.cloud && l.Base != "" && sameOrigin(f.site, l.Base) {
		base = l.Base
	}
	u, err := resolve(base, l.Next)
	if err != nil {
		return "", fmt.Errorf("next link: %w", err)
	}
	if !sameOrigin(f.site, u) {
		return "", fmt.Errorf("next link leads to another host (%s); refusing to follow it", redactURL(mustParse(u)))
	}
	return u, nil
}

func mustParse(u string) *url.URL {
	p, err := url.Parse(u)
	if err != nil {
		return &url.URL{Opaque: "(unparseable URL)"}
	}
	return p
}

// spaces returns the configured spaces (all readable ones when none are
// configured); a configured key that is not found is an error wrapping
// errSpaceMissing.
func (f *confluence) spaces(ctx context.Context) ([]space, error) {
	var out []space
	add := func(id flexString, key, name string, l links) error {
		out = append(out, space{ID: string(id), Key: key, Name: name, URL: f.webURL(l.WebUI)})
		return nil
	}
	var err error
	if f.cloud {
		q := url.Values{"limit": {strconv.Itoa(f.c.limit(cloudLimit))}, "status": {"current"}}
		if len(f.cfg.Spaces) > 0 {
			q.Set("keys", strings.Join(f.cfg.Spaces, ","))
		}
		err = list(ctx, f, f.rest+"/spaces?"+q.Encode(), func(s cloudSpace) error {
			return add(s.ID, s.Key, s.Name, s.Links)
		})
	} else {
		q := url.Values{"limit": {strconv.Itoa(f.c.limit(dcLimit))}}
		for _, k := range f.cfg.Spaces {
			q.Add("spaceKey", k)
		}
		// Same fields as a Cloud space, but ids are numbers.
		err = list(ctx, f, f.rest+"/space?"+q.Encode(), func(s cloudSpace) error {
			return add(s.ID, s.Key, s.Name, s.Links)
		})
	}
	if err != nil {
		return nil, fmt.Errorf("list spaces: %w", err)
	}
	if len(f.cfg.Spaces) == 0 {
		return out, nil
	}
	// Keep the configured order, and only the configured spaces (a server
	// that ignores the filter must not widen the source).
	var picked []space
	for _, key := range f.cfg.Spaces {
		found := false
		for _, s := range out {
			if strings.EqualFold(s.Key, key) {
				picked = append(picked, s)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%q: %w", key, errSpaceMissing)
		}
	}
	return picked, nil
}

func (f *confluence) webURL(link string) string {
	if link == "" {
		return ""
	}
	u, err := resolve(f.web, link)
	if err != nil {
		return ""
	}
	return u
}

func (f *confluence) health(ctx context.Context) (connector.Health, error) {
	spaces, err := f.spaces(ctx)
	switch {
	case errors.Is(err, errSpaceMissing):
		return connector.Health{Status: connector.StatusDegraded, Message: fmt.Sprintf("%s answers, but: %v", f.deployment(), err)}, nil
	case err != nil:
		return connector.Health{}, err
	}
	return connector.Health{Status: connector.StatusOK, Message: fmt.Sprintf("%s answers; spaces readable: %d", f.deployment(), len(spaces))}, nil
}

// sync lists every page (and attachment) of the configured spaces. There
// is no change feed that also reports deletions and restriction changes, so
// every run is a full listing (Snapshot): the host skips what it holds by
// version, and a cursor is neither sent nor used.
func (f *confluence) sync(ctx context.Context, _ []byte, emit emitFunc) error {
	spaces, err := f.spaces(ctx)
	if err != nil {
		return err
	}
	if err := emit(connector.Snapshot()); err != nil {
		return err
	}
	for _, sp := range spaces {
		if err := f.syncSpace(ctx, sp, emit); err != nil {
			return fmt.Errorf("space %s: %w", sp.Key, err)
		}
	}
	return nil
}

func (f *confluence) syncSpace(ctx context.Context, sp space, emit emitFunc) error {
	pages, err := f.listPages(ctx, sp)
	if err != nil {
		return err
	}
	byID := make(map[string]*page, len(pages))
	for _, p := range pages {
		byID[p.ID] = p
	}
	for _, p := range pages {
		if p.gone {
			continue
		}
		eff := effective(p, byID)
		item := connector.Item{
			ID:          p.ID,
			Version:     eff.version(p.Version),
			Name:        fileName(p.Title, ".html"),
			Path:        sp.Key + "/" + pagePath(p, byID),
			URL:         p.URL,
			ContentType: htmlType,
			ModifiedAt:  p.Modified,
			Metadata: map[string]any{
				"flavor":     FlavorConfluence,
				"kind":       "page",
				"title":      p.Title,
				"url":        p.URL,
				"pageId":     p.ID,
				"version":    p.Version,
				"spaceKey":   sp.Key,
				"spaceName":  sp.Name,
				"restricted": eff != nil,
			},
			Access: eff.access(),
		}
		if p.ParentID != "" {
			item.Metadata["parentId"] = p.ParentID
		}
		if err := emit(connector.Upsert(item)); err != nil {
			return err
		}
	}
	if !f.cfg.IncludeAttachments {
		return nil
	}
	for _, p := range pages {
		if p.gone {
			continue
		}
		if err := f.syncAttachments(ctx, sp, p, effective(p, byID), byID, emit); err != nil {
			return err
		}
	}
	return nil
}

// effective is the read restriction that applies to p: its own and every
// ancestor's, since Confluence restrictions are inherited.
func effective(p *page, byID map[string]*page) *acl {
	var eff *acl
	seen := map[string]bool{}
	for cur := p; cur != nil && !seen[cur.ID]; cur = byID[cur.ParentID] {
		seen[cur.ID] = true
		eff = intersect(eff, cur.own)
	}
	return eff
}

// pagePath is the titles from the space's root page down to p.
func pagePath(p *page, byID map[string]*page) string {
	var titles []string
	seen := map[string]bool{}
	for cur := p; cur != nil && !seen[cur.ID]; cur = byID[cur.ParentID] {
		seen[cur.ID] = true
		titles = append(titles, strings.ReplaceAll(cur.Title, "/", "_"))
	}
	for i, j := 0, len(titles)-1; i < j; i, j = i+1, j-1 {
		titles[i], titles[j] = titles[j], titles[i]
	}
	return strings.Join(titles, "/")
}

// listPages lists the current pages of a space with their own read
// restrictions.
func (f *confluence) listPages(ctx context.Context, sp space) ([]*page, error) {
	var pages []*page
	if f.cloud {
		q := url.Values{"limit": {strconv.Itoa(f.c.limit(cloudLimit))}, "status": {"current"}}
		u := f.rest + "/spaces/" + url.PathEscape(sp.ID) + "/pages?" + q.Encode()
		err := list(ctx, f, u, func(cp cloudPage) error {
			if cp.Status != "" && cp.Status != "current" {
				return nil
			}
			pages = append(pages, &page{
				ID:       string(cp.ID),
				Title:    cp.Title,
				ParentID: string(cp.ParentID),
				Version:  cp.Version.Number,
				Modified: parseTime(cp.Version.CreatedAt),
				URL:      f.webURL(cp.Links.WebUI),
			})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list pages: %w", err)
		}
		// REST v2 has no restrictions; v1 gives them one page at a time.
		if err := f.cloudRestrictions(ctx, pages); err != nil {
			return nil, err
		}
		return pages, nil
	}
	q := url.Values{
		"spaceKey": {sp.Key},
		"type":     {"page"},
		"status":   {"current"},
		"limit":    {strconv.Itoa(f.c.limit(dcLimit))},
		"expand":   {dcExpand},
	}
	err := list(ctx, f, f.rest+"/content?"+q.Encode(), func(c dcContent) error {
		if c.Type != "" && c.Type != "page" || c.Status != "" && c.Status != "current" {
			return nil
		}
		p := &page{
			ID:       string(c.ID),
			Title:    c.Title,
			Version:  c.Version.Number,
			Modified: parseTime(c.Version.When),
			URL:      f.webURL(c.Links.WebUI),
			own:      newACL(c.Restrictions.Read.lists()),
		}
		if n := len(c.Ancestors); n > 0 {
			p.ParentID = string(c.Ancestors[n-1].ID)
		}
		pages = append(pages, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list pages: %w", err)
	}
	return pages, nil
}

// cloudRestrictions reads the read restriction of every page, a few at a
// time.
func (f *confluence) cloudRestrictions(ctx context.Context, pages []*page) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, f.c.concurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, p := range pages {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			a, err := f.cloudRestriction(ctx, p.ID)
			switch {
			case errors.Is(err, plugins.ErrNotFound):
				p.gone = true // deleted since the listing
			case err != nil:
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("read restrictions of page %s: %w", p.ID, err)
				}
				mu.Unlock()
				cancel()
			default:
				p.own = a
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

// cloudRestriction reads one page's read restriction, following the
// start/limit paging of its user and group lists.
func (f *confluence) cloudRestriction(ctx context.Context, id string) (*acl, error) {
	const limit = 100
	var users, groups []string
	step := limit
	for start := 0; ; start += step {
		q := url.Values{
			"expand": {"restrictions.user,restrictions.group"},
			"limit":  {strconv.Itoa(limit)},
			"start":  {strconv.Itoa(start)},
		}
		var r restriction
		u := f.v1 + "/content/" + url.PathEscape(id) + "/restriction/byOperation/read?" + q.Encode()
		if err := f.a.getJSON(ctx, u, &r); err != nil {
			return nil, err
		}
		us, gs := r.lists()
		users, groups = append(users, us...), append(groups, gs...)
		// The server may cap the lists below the limit asked for and says
		// so in each list's limit: a full list may have a successor.
		full := func(n, served int) bool {
			if served <= 0 {
				served = limit
			}
			return n > 0 && n >= served
		}
		if !full(len(us), r.Restrictions.User.Limit) && !full(len(gs), r.Restrictions.Group.Limit) || start > 1000*limit {
			break
		}
		step = max(len(us), len(gs))
	}
	return newACL(users, groups), nil
}

// attachment is an attachment's metadata from a listing.
type attachment struct {
	ID, Title, MediaType, URL string
	Size                      int64
	Version                   int
	Modified                  time.Time
}

func (f *confluence) syncAttachments(ctx context.Context, sp space, p *page, eff *acl, byID map[string]*page, emit emitFunc) error {
	var atts []attachment
	var err error
	if f.cloud {
		u := f.rest + "/pages/" + url.PathEscape(p.ID) + "/attachments?limit=" + strconv.Itoa(f.c.limit(cloudLimit))
		err = list(ctx, f, u, func(a cloudAttachment) error {
			if a.Status != "" && a.Status != "current" {
				return nil
			}
			web := a.WebuiLink
			if web == "" {
				web = a.Links.WebUI
			}
			atts = append(atts, attachment{
				ID: string(a.ID), Title: a.Title, MediaType: a.MediaType, URL: f.webURL(web),
				Size: a.FileSize, Version: a.Version.Number, Modified: parseTime(a.Version.CreatedAt),
			})
			return nil
		})
	} else {
		q := url.Values{"limit": {strconv.Itoa(f.c.limit(dcLimit))}, "expand": {"version"}}
		u := f.rest + "/content/" + url.PathEscape(p.ID) + "/child/attachment?" + q.Encode()
		err = list(ctx, f, u, func(c dcContent) error {
			if c.Status != "" && c.Status != "current" {
				return nil
			}
			mt := c.Extensions.MediaType
			if mt == "" {
				mt = c.Metadata.MediaType
			}
			atts = append(atts, attachment{
				ID: string(c.ID), Title: c.Title, MediaType: mt, URL: f.webURL(c.Links.WebUI),
				Size: c.Extensions.FileSize, Version: c.Version.Number, Modified: parseTime(c.Version.When),
			})
			return nil
		})
	}
	switch {
	case errors.Is(err, plugins.ErrNotFound):
		return nil // the page went away since the listing
	case err != nil:
		return fmt.Errorf("list attachments of page %s: %w", p.ID, err)
	}
	for _, a := range atts {
		item := connector.Item{
			ID:          a.ID,
			Version:     eff.version(a.Version),
			Name:        fileName(a.Title, ""),
			Path:        sp.Key + "/" + pagePath(p, byID) + "/" + strings.ReplaceAll(a.Title, "/", "_"),
			URL:         a.URL,
			ContentType: a.MediaType,
			Size:        a.Size,
			ModifiedAt:  a.Modified,
			Metadata: map[string]any{
				"flavor":     FlavorConfluence,
				"kind":       "attachment",
				"title":      a.Title,
				"url":        a.URL,
				"pageId":     p.ID,
				"pageTitle":  p.Title,
				"version":    a.Version,
				"spaceKey":   sp.Key,
				"spaceName":  sp.Name,
				"restricted": eff != nil,
			},
			Access: eff.access(),
		}
		if err := emit(connector.Upsert(item)); err != nil {
			return err
		}
	}
	return nil
}

// isPageID and isAttachmentID tell the two kinds of item apart: page ids
// are numbers, attachment ids "att" and a number.
func isPageID(id string) bool {
	if id == "" || len(id) > 20 {
		return false
	}
	for _, r := range id {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func isAttachmentID(id string) bool {
	return strings.HasPrefix(id, "att") && isPageID(id[3:])
}

func (f *confluence) fetch(ctx context.Context, item connector.Item) (*connector.Content, error) {
	switch {
	case isPageID(item.ID):
		return f.fetchPage(ctx, item.ID)
	case isAttachmentID(item.ID):
		return f.fetchAttachment(ctx, item)
	default:
		return nil, fmt.Errorf("%q is neither a page nor an attachment id: %w", item.ID, plugins.ErrNotFound)
	}
}

// fetchPage serves a page's storage format as an HTML document. The body
// arrives inside a JSON answer, so it is read whole; Confluence caps pages
// at a few MB.
func (f *confluence) fetchPage(ctx context.Context, id string) (*connector.Content, error) {
	var title, storage, status string
	if f.cloud {
		var p cloudPage
		if err := f.a.getJSON(ctx, f.rest+"/pages/"+url.PathEscape(id)+"?body-format=storage", &p); err != nil {
			return nil, err
		}
		title, storage, status = p.Title, p.Body.Storage.Value, p.Status
	} else {
		var c dcContent
		if err := f.a.getJSON(ctx, f.rest+"/content/"+url.PathEscape(id)+"?expand=body.storage,version", &c); err != nil {
			return nil, err
		}
		if c.Type != "" && c.Type != "page" {
			return nil, fmt.Errorf("content %s is a %s, not a page: %w", id, c.Type, plugins.ErrNotFound)
		}
		title, storage, status = c.Title, c.Body.Storage.Value, c.Status
	}
	if status != "" && status != "current" {
		return nil, fmt.Errorf("page %s is %s: %w", id, status, plugins.ErrNotFound)
	}
	doc := pageDocument(title, storageToHTML(storage))
	// No Content.Version: item versions carry a restriction digest that a
	// page body cannot tell.
	return htmlContent(fileName(title, ".html"), doc, ""), nil
}

// fetchAttachment streams an attachment's file.
func (f *confluence) fetchAttachment(ctx context.Context, item connector.Item) (*connector.Content, error) {
	var link, mediaType, title string
	if f.cloud {
		var a cloudAttachment
		if err := f.a.getJSON(ctx, f.rest+"/attachments/"+url.PathEscape(item.ID), &a); err != nil {
			return nil, err
		}
		if a.Status != "" && a.Status != "current" {
			return nil, fmt.Errorf("attachment is %s: %w", a.Status, plugins.ErrNotFound)
		}
		link, mediaType, title = a.DownloadLink, a.MediaType, a.Title
		if link == "" {
			link = a.Links.Download
		}
	} else {
		var c dcContent
		if err := f.a.getJSON(ctx, f.rest+"/content/"+url.PathEscape(item.ID)+"?expand=version", &c); err != nil {
			return nil, err
		}
		if c.Type != "" && c.Type != "attachment" || c.Status != "" && c.Status != "current" {
			return nil, fmt.Errorf("content %s is not a current attachment: %w", item.ID, plugins.ErrNotFound)
		}
		link, mediaType, title = c.Links.Download, c.Extensions.MediaType, c.Title
		if mediaType == "" {
			mediaType = c.Metadata.MediaType
		}
	}
	if link == "" {
		return nil, fmt.Errorf("attachment %s has no download link", item.ID)
	}
	u, err := resolve(f.web, link)
	if err != nil {
		return nil, fmt.Errorf("download link: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("download request: %w", err)
	}
	resp, err := f.a.do(req)
	if err != nil {
		return nil, err
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" || strings.HasPrefix(ct, "application/octet-stream") && mediaType != "" {
		ct = mediaType
	}
	return &connector.Content{
		ContentType: ct,
		Name:        fileName(title, ""),
		Size:        resp.ContentLength, // -1 when the server does not say
		Body:        resp.Body,
	}, nil
}

// parseTime reads the timestamps of both suites (ISO 8601 with or without
// fractions); zero when absent or unreadable.
func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000-0700", "2006-01-02T15:04:05-0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
