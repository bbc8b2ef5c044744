package docsuite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

// maxCursorAge is how old a cursor may be for an incremental sync.
// MediaWiki forgets recent changes after $wgRCMaxAge (90 days by default,
// less on some wikis); past this age a sync lists everything instead.
const maxCursorAge = 30 * 24 * time.Hour

// idsPerQuery is how many page ids one query may name (MediaWiki's limit
// for clients without the apihighlimits right).
const idsPerQuery = 50

// mediawiki reads a MediaWiki site through its action API (api.php).
type mediawiki struct {
	c        *Connector
	cfg      Config
	endpoint string
	a        *api
	loggedIn bool
}

func newMediaWiki(c *Connector, cfg Config) *mediawiki {
	// A cookie jar per operation: a bot password login lives in session
	// cookies, and operations share nothing.
	hc := *c.hc
	hc.Jar, _ = cookiejar.New(nil)
	var auth func(*http.Request)
	if cfg.Username == "" && cfg.APIToken != "" {
		// An OAuth 2 access token (an owner-only consumer).
		auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+cfg.APIToken) }
	}
	return &mediawiki{
		c:        c,
		cfg:      cfg,
		endpoint: cfg.BaseURL + "/api.php",
		a:        c.newAPI(cfg, &hc, auth),
	}
}

// mwEnvelope is what every action API answer may carry besides its data.
type mwEnvelope struct {
	Error *struct {
		Code string `json:"code"`
		Info string `json:"info"`
	} `json:"error"`
	Continue      map[string]any `json:"continue"`
	BatchComplete bool           `json:"batchcomplete"`
	CurTimestamp  string         `json:"curtimestamp"`
}

type mwPage struct {
	PageID       int64  `json:"pageid"`
	NS           int    `json:"ns"`
	Title        string `json:"title"`
	Missing      bool   `json:"missing"`
	Invalid      bool   `json:"invalid"`
	Redirect     bool   `json:"redirect"`
	LastRevID    int64  `json:"lastrevid"`
	FullURL      string `json:"fullurl"`
	ContentModel string `json:"contentmodel"`
	Revisions    []struct {
		RevID     int64  `json:"revid"`
		Timestamp string `json:"timestamp"`
	} `json:"revisions"`
}

// call sends one action API request and decodes its answer into v (which
// may be nil); an API error becomes an error wrapping the plugins error
// that fits.
func (m *mediawiki) call(ctx context.Context, method string, params url.Values, v any) (mwEnvelope, error) {
	params.Set("format", "json")
	params.Set("formatversion", "2")
	var req *http.Request
	var err error
	if method == http.MethodPost {
		req, err = http.NewRequestWithContext(ctx, method, m.endpoint, strings.NewReader(params.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	} else {
		req, err = http.NewRequestWithContext(ctx, method, m.endpoint+"?"+params.Encode(), nil)
	}
	if err != nil {
		return mwEnvelope{}, fmt.Errorf("mediawiki: request: %w", err)
	}
	resp, err := m.a.do(req)
	if err != nil {
		return mwEnvelope{}, err
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := m.a.decode(resp, &raw); err != nil {
		return mwEnvelope{}, err
	}
	var env mwEnvelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return mwEnvelope{}, fmt.Errorf("mediawiki: answer is not an API object: %w", err)
	}
	if env.Error != nil {
		return env, m.apiError(params.Get("action"), env.Error.Code, env.Error.Info)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			return env, fmt.Errorf("mediawiki: %s: unexpected answer: %w", params.Get("action"), err)
		}
	}
	return env, nil
}

func (m *mediawiki) apiError(action, code, info string) error {
	info = m.a.scrub(info)
	var kind error
	switch {
	case code == "nosuchpageid" || code == "missingtitle" || code == "nosuchrevid":
		kind = plugins.ErrNotFound
	case code == "readapidenied" || code == "permissiondenied":
		if m.cfg.APIToken == "" {
			return fmt.Errorf("mediawiki: %s: the wiki is not readable anonymously (%s): set username and apiToken: %w", action, code, plugins.ErrUnauthenticated)
		}
		kind = plugins.ErrPermissionDenied
	case strings.Contains(code, "oauth") || code == "assertuserfailed" || code == "assertnameduserfailed":
		kind = plugins.ErrUnauthenticated
	case code == "ratelimited" || code == "maxlag":
		kind = plugins.ErrRateLimited
	}
	if kind == nil {
		return fmt.Errorf("mediawiki: %s: %s: %s", action, code, info)
	}
	return fmt.Errorf("mediawiki: %s: %s: %s: %w", action, code, info, kind)
}

// login signs in with a bot password, once per operation.
func (m *mediawiki) login(ctx context.Context) error {
	if m.cfg.Username == "" || m.loggedIn {
		return nil
	}
	var tok struct {
		Query struct {
			Tokens struct {
				LoginToken string `json:"logintoken"`
			} `json:"tokens"`
		} `json:"query"`
	}
	if _, err := m.call(ctx, http.MethodGet, url.Values{"action": {"query"}, "meta": {"tokens"}, "type": {"login"}}, &tok); err != nil {
		return fmt.Errorf("mediawiki: login: %w", err)
	}
	var res struct {
		Login struct {
			Result string `json:"result"`
			Reason string `json:"reason"`
		} `json:"login"`
	}
	params := url.Values{
		"action":     {"login"},
		"lgname":     {m.cfg.Username},
		"lgpassword": {m.cfg.APIToken},
		"lgtoken":    {tok.Query.Tokens.LoginToken},
	}
	if _, err := m.call(ctx, http.MethodPost, params, &res); err != nil {
		return fmt.Errorf("mediawiki: login: %w", err)
	}
	if res.Login.Result != "Success" {
		reason := m.a.scrub(res.Login.Reason)
		if reason == "" {
			reason = "no reason given"
		}
		return fmt.Errorf("mediawiki: login as %q refused (%s: %s); username must be a bot password's login name (User@appid) and apiToken its password: %w",
			m.cfg.Username, res.Login.Result, reason, plugins.ErrUnauthenticated)
	}
	m.loggedIn = true
	return nil
}

// siteInfo is what the wiki says about itself.
type siteInfo struct {
	now        string // the server's clock, as MediaWiki writes timestamps
	generator  string
	name       string
	namespaces map[int]string
}

// site reads the server's time and what it says about the wiki and the
// account, checking that the account may read.
func (m *mediawiki) site(ctx context.Context) (siteInfo, error) {
	var r struct {
		Query struct {
			General struct {
				Generator string `json:"generator"`
				SiteName  string `json:"sitename"`
			} `json:"general"`
			Namespaces map[string]struct {
				ID   int    `json:"id"`
				Name string `json:"name"`
			} `json:"namespaces"`
			UserInfo struct {
				Anon   bool     `json:"anon"`
				Rights []string `json:"rights"`
			} `json:"userinfo"`
		} `json:"query"`
	}
	params := url.Values{
		"action":       {"query"},
		"meta":         {"siteinfo|userinfo"},
		"siprop":       {"general|namespaces"},
		"uiprop":       {"rights"},
		"curtimestamp": {"1"},
	}
	env, err := m.call(ctx, http.MethodGet, params, &r)
	if err != nil {
		return siteInfo{}, err
	}
	if !slices.Contains(r.Query.UserInfo.Rights, "read") {
		if r.Query.UserInfo.Anon {
			return siteInfo{}, fmt.Errorf("mediawiki: the wiki is not readable anonymously: set username and apiToken: %w", plugins.ErrUnauthenticated)
		}
		return siteInfo{}, fmt.Errorf("mediawiki: the account may not read the wiki: %w", plugins.ErrPermissionDenied)
	}
	info := siteInfo{now: env.CurTimestamp, generator: r.Query.General.Generator, name: r.Query.General.SiteName, namespaces: map[int]string{}}
	for _, ns := range r.Query.Namespaces {
		info.namespaces[ns.ID] = ns.Name
	}
	if info.now == "" {
		info.now = time.Now().UTC().Format(time.RFC3339)
	}
	return info, nil
}

// anonymousRead reports whether anyone may read the wiki: its pages are
// then public. MediaWiki's read right is wiki-wide, so this holds for every
// page; when it does not, the connector cannot tell who may read a page
// and reports no access list.
func (m *mediawiki) anonymousRead(ctx context.Context) bool {
	anon := &mediawiki{c: m.c, cfg: m.cfg, endpoint: m.endpoint, a: m.c.newAPI(m.cfg, m.c.hc, nil)}
	var r struct {
		Query struct {
			UserInfo struct {
				Rights []string `json:"rights"`
			} `json:"userinfo"`
		} `json:"query"`
	}
	_, err := anon.call(ctx, http.MethodGet, url.Values{"action": {"query"}, "meta": {"userinfo"}, "uiprop": {"rights"}}, &r)
	return err == nil && slices.Contains(r.Query.UserInfo.Rights, "read")
}

func (m *mediawiki) health(ctx context.Context) (connector.Health, error) {
	if err := m.login(ctx); err != nil {
		return connector.Health{}, err
	}
	info, err := m.site(ctx)
	if err != nil {
		return connector.Health{}, err
	}
	var missing []string
	for _, ns := range m.cfg.Namespaces {
		if _, ok := info.namespaces[ns]; !ok {
			missing = append(missing, strconv.Itoa(ns))
		}
	}
	if len(missing) > 0 {
		return connector.Health{Status: connector.StatusDegraded,
			Message: fmt.Sprintf("%s (%s) answers, but has no namespace %s", info.name, info.generator, strings.Join(missing, ", "))}, nil
	}
	return connector.Health{Status: connector.StatusOK, Message: fmt.Sprintf("%s (%s)", info.name, info.generator)}, nil
}

// mwCursor is what a MediaWiki checkpoint remembers.
type mwCursor struct {
	// Since is the server time at which the run that wrote the cursor
	// started: the next run asks for changes from then on.
	Since string `json:"since"`
	// Scope identifies the site and namespaces: with other ones the cursor
	// says nothing about what the host holds.
	Scope string `json:"scope"`
}

func (m *mediawiki) scope() string {
	ns := slices.Clone(m.cfg.Namespaces)
	slices.Sort(ns)
	h := sha256.Sum256(fmt.Appendf(nil, "%s|%v", m.cfg.BaseURL, ns))
	return hex.EncodeToString(h[:8])
}

// usableCursor reports whether cursor allows an incremental sync now.
func (m *mediawiki) usableCursor(cursor []byte, now string) (mwCursor, bool) {
	if len(cursor) == 0 {
		return mwCursor{}, false
	}
	var c mwCursor
	if err := json.Unmarshal(cursor, &c); err != nil || c.Scope != m.scope() {
		m.c.log.Info("docsuite: cursor from another configuration; listing everything")
		return mwCursor{}, false
	}
	since, serverNow := parseTime(c.Since), parseTime(now)
	if since.IsZero() || serverNow.Sub(since) > maxCursorAge {
		m.c.log.Info("docsuite: cursor too old for recent changes; listing everything", "since", c.Since)
		return mwCursor{}, false
	}
	return c, true
}

// sync lists every page of the configured namespaces (Snapshot first), or,
// given a usable cursor, only what recent changes name since it: edited and
// created pages as upserts, deleted pages and pages moved out of the
// namespaces as deletes. Either ends with a checkpoint.
func (m *mediawiki) sync(ctx context.Context, cursor []byte, emit emitFunc) error {
	if err := m.login(ctx); err != nil {
		return err
	}
	info, err := m.site(ctx)
	if err != nil {
		return err
	}
	public := m.anonymousRead(ctx)
	if c, ok := m.usableCursor(cursor, info.now); ok {
		if err := m.changes(ctx, c.Since, public, emit); err != nil {
			return err
		}
	} else {
		if err := emit(connector.Snapshot()); err != nil {
			return err
		}
		for _, ns := range m.cfg.Namespaces {
			if err := m.listNamespace(ctx, ns, public, emit); err != nil {
				return fmt.Errorf("namespace %d: %w", ns, err)
			}
		}
	}
	next, err := json.Marshal(mwCursor{Since: info.now, Scope: m.scope()})
	if err != nil {
		return fmt.Errorf("cursor: %w", err)
	}
	return emit(connector.Checkpoint(next))
}

// listNamespace upserts every page of namespace ns that is no redirect.
func (m *mediawiki) listNamespace(ctx context.Context, ns int, public bool, emit emitFunc) error {
	params := url.Values{
		"action":         {"query"},
		"generator":      {"allpages"},
		"gapnamespace":   {strconv.Itoa(ns)},
		"gapfilterredir": {"nonredirects"},
		"gaplimit":       {m.limit()},
		"prop":           {"info|revisions"},
		"inprop":         {"url"},
		"rvprop":         {"ids|timestamp"},
	}
	return m.pages(ctx, params, func(p mwPage) error {
		return emit(connector.Upsert(m.item(p, public)))
	})
}

// pages runs a page query to its end, following continuation, and hands
// each page to each once its batch is complete (a batch's properties may
// arrive over several answers).
func (m *mediawiki) pages(ctx context.Context, params url.Values, each func(mwPage) error) error {
	var order []int64
	batch := map[int64]*mwPage{}
	cont := map[string]any{}
	for round := 0; ; round++ {
		p := url.Values{}
		for k, v := range params {
			p[k] = slices.Clone(v)
		}
		for k, v := range cont {
			p.Set(k, fmt.Sprint(v))
		}
		var r struct {
			Query struct {
				Pages []mwPage `json:"pages"`
			} `json:"query"`
		}
		env, err := m.call(ctx, http.MethodGet, p, &r)
		if err != nil {
			return err
		}
		for _, pg := range r.Query.Pages {
			key := pg.PageID
			if key == 0 { // missing titles have no id; keep them apart
				key = -int64(len(order) + 1)
			}
			if have, ok := batch[key]; ok {
				if len(pg.Revisions) > 0 {
					have.Revisions = pg.Revisions
				}
				continue
			}
			cp := pg
			batch[key] = &cp
			order = append(order, key)
		}
		if env.BatchComplete || env.Continue == nil {
			for _, k := range order {
				if err := each(*batch[k]); err != nil {
					return err
				}
			}
			order, batch = order[:0], map[int64]*mwPage{}
		}
		if env.Continue == nil {
			return nil
		}
		if round > 1_000_000 {
			return fmt.Errorf("mediawiki: continuation does not end")
		}
		cont = env.Continue
	}
}

func (m *mediawiki) item(p mwPage, public bool) connector.Item {
	id := strconv.FormatInt(p.PageID, 10)
	it := connector.Item{
		ID:          id,
		Version:     strconv.FormatInt(p.LastRevID, 10),
		Name:        fileName(p.Title, ".html"),
		Path:        p.Title,
		URL:         p.FullURL,
		ContentType: htmlType,
		Metadata: map[string]any{
			"flavor":       FlavorMediaWiki,
			"kind":         "page",
			"title":        p.Title,
			"url":          p.FullURL,
			"pageId":       p.PageID,
			"revisionId":   p.LastRevID,
			"namespace":    p.NS,
			"contentModel": p.ContentModel,
		},
	}
	if len(p.Revisions) > 0 {
		it.ModifiedAt = parseTime(p.Revisions[0].Timestamp)
	}
	if public {
		it.Access = &connector.Access{Public: true}
	}
	return it
}

// recentChange is one entry of list=recentchanges.
type recentChange struct {
	Type      string `json:"type"`
	NS        int    `json:"ns"`
	Title     string `json:"title"`
	PageID    int64  `json:"pageid"`
	LogType   string `json:"logtype"`
	LogAction string `json:"logaction"`
}

// changes sends what changed since: every page an edit, creation, move,
// deletion, restore or import touched is looked up again, and is upserted
// if it now exists in a configured namespace, deleted otherwise.
func (m *mediawiki) changes(ctx context.Context, since string, public bool, emit emitFunc) error {
	var ids []int64
	var titles []string
	seenID, seenTitle := map[int64]bool{}, map[string]bool{}
	params := url.Values{
		"action":  {"query"},
		"list":    {"recentchanges"},
		"rcstart": {since},
		"rcdir":   {"newer"},
		"rcprop":  {"title|ids|timestamp|loginfo"},
		"rctype":  {"edit|new|log"},
		"rclimit": {m.limit()},
	}
	cont := map[string]any{}
	for {
		p := url.Values{}
		for k, v := range params {
			p[k] = v
		}
		for k, v := range cont {
			p.Set(k, fmt.Sprint(v))
		}
		var r struct {
			Query struct {
				RecentChanges []recentChange `json:"recentchanges"`
			} `json:"query"`
		}
		env, err := m.call(ctx, http.MethodGet, p, &r)
		if err != nil {
			return fmt.Errorf("recent changes: %w", err)
		}
		for _, rc := range r.Query.RecentChanges {
			relevant := false
			switch rc.Type {
			case "edit", "new":
				relevant = slices.Contains(m.cfg.Namespaces, rc.NS)
			case "log":
				// Not filtered by namespace: a move into or out of a
				// configured namespace is logged under the other one.
				switch rc.LogType {
				case "delete", "move", "import", "merge", "upload", "contentmodel":
					relevant = true
				}
			}
			switch {
			case !relevant:
			case rc.PageID > 0:
				if !seenID[rc.PageID] {
					seenID[rc.PageID] = true
					ids = append(ids, rc.PageID)
				}
			case rc.Title != "":
				if !seenTitle[rc.Title] {
					seenTitle[rc.Title] = true
					titles = append(titles, rc.Title)
				}
			}
		}
		if env.Continue == nil {
			break
		}
		cont = env.Continue
	}

	lookup := url.Values{
		"action": {"query"},
		"prop":   {"info|revisions"},
		"inprop": {"url"},
		"rvprop": {"ids|timestamp"},
	}
	handle := func(p mwPage, askedID int64) error {
		id := p.PageID
		if id == 0 {
			id = askedID
		}
		switch {
		case p.Missing || p.Invalid || p.PageID == 0:
			if id > 0 {
				return emit(connector.Delete(strconv.FormatInt(id, 10)))
			}
			return nil
		case p.Redirect || !slices.Contains(m.cfg.Namespaces, p.NS):
			return emit(connector.Delete(strconv.FormatInt(id, 10)))
		default:
			return emit(connector.Upsert(m.item(p, public)))
		}
	}
	for chunk := range slices.Chunk(ids, idsPerQuery) {
		q := cloneValues(lookup)
		q.Set("pageids", joinIDs(chunk))
		err := m.pages(ctx, q, func(p mwPage) error {
			// A missing page id comes back with its id and "missing".
			return handle(p, p.PageID)
		})
		if err != nil {
			return fmt.Errorf("look up changed pages: %w", err)
		}
	}
	for chunk := range slices.Chunk(titles, idsPerQuery) {
		q := cloneValues(lookup)
		q.Set("titles", strings.Join(chunk, "|"))
		err := m.pages(ctx, q, func(p mwPage) error {
			if p.Missing || p.Invalid {
				return nil // no id to delete by
			}
			return handle(p, 0)
		})
		if err != nil {
			return fmt.Errorf("look up changed pages: %w", err)
		}
	}
	return nil
}

// limit is the page size of listings: MediaWiki's "max" unless set.
func (m *mediawiki) limit() string {
	if m.c.pageSize > 0 {
		return strconv.Itoa(m.c.pageSize)
	}
	return "max"
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, "|")
}

// fetch serves a page rendered to HTML by the wiki (action=parse), so that
// headings, lists and tables survive; the HTML arrives inside a JSON answer
// and is read whole (MediaWiki caps pages at 2 MB of wikitext by default).
func (m *mediawiki) fetch(ctx context.Context, item connector.Item) (*connector.Content, error) {
	id, err := strconv.ParseInt(item.ID, 10, 64)
	if err != nil || id <= 0 {
		return nil, fmt.Errorf("%q is not a MediaWiki page id: %w", item.ID, plugins.ErrNotFound)
	}
	if err := m.login(ctx); err != nil {
		return nil, err
	}
	var r struct {
		Parse struct {
			Title string `json:"title"`
			RevID int64  `json:"revid"`
			Text  string `json:"text"`
		} `json:"parse"`
	}
	params := url.Values{
		"action":             {"parse"},
		"pageid":             {item.ID},
		"prop":               {"text|revid"},
		"disableeditsection": {"1"},
		"disablelimitreport": {"1"},
		"disabletoc":         {"1"},
	}
	if _, err := m.call(ctx, http.MethodGet, params, &r); err != nil {
		return nil, err
	}
	doc := pageDocument(r.Parse.Title, r.Parse.Text)
	return htmlContent(fileName(r.Parse.Title, ".html"), doc, strconv.FormatInt(r.Parse.RevID, 10)), nil
}
