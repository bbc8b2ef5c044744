package docsuite_test

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/connectors/docsuite"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/plugintest"
)

var (
	alice = fakeUser{AccountID: "557058:alice", Email: "Alice@Example.com", Username: "alice"}
	bob   = fakeUser{AccountID: "557058:bob", Username: "bob"} // hides their e-mail address
	carol = fakeUser{AccountID: "557058:carol", Email: "carol@example.com", Username: "carol"}
)

// principal is how the connector should list u: the e-mail address where
// the API tells it (Cloud), else the account id (Cloud) or user name (Data
// Center, whose API gives no addresses).
func principal(cloud bool, u fakeUser) string {
	switch {
	case cloud && u.Email != "":
		return strings.ToLower(u.Email)
	case cloud:
		return u.AccountID
	default:
		return u.Username
	}
}

const guideBody = `<h2>Install</h2><p>Run the installer.</p>` +
	`<ac:structured-macro ac:name="code" ac:schema-version="1"><ac:parameter ac:name="language">go</ac:parameter>` +
	`<ac:plain-text-body><![CDATA[fmt.Println("a < b")]]></ac:plain-text-body></ac:structured-macro>` +
	`<p>See <ac:link><ri:page ri:content-title="Home" /></ac:link> for more.</p><h2>Configure</h2><p>Edit the settings.</p>`

// fixture fills a fake Confluence with two spaces; DOCS has a page tree
// with read restrictions and attachments, more pages than one listing page
// holds.
type fixture struct {
	home, guide, secret, child, deep, extra1, extra2, elsewhere string
	diagram, plan                                               string
	pdf                                                         []byte
}

func seed(f *fakeConfluence) fixture {
	var x fixture
	f.addSpace("DOCS", "Documentation")
	f.addSpace("OTHER", "Other things")
	x.home = f.addPage("DOCS", "", "Home", `<h2>Welcome</h2><p>Start here.</p>`)
	x.guide = f.addPage("DOCS", x.home, "Guide", guideBody)
	x.secret = f.addPage("DOCS", x.home, "Secret", `<p>Only for some.</p>`)
	x.child = f.addPage("DOCS", x.secret, "Secret child", `<p>Fewer still.</p>`)
	x.deep = f.addPage("DOCS", x.child, "Deep", `<p>Inherits.</p>`)
	x.extra1 = f.addPage("DOCS", x.home, "Extra 1", `<p>One.</p>`)
	x.extra2 = f.addPage("DOCS", x.home, "Extra/2", `<p>Two.</p>`)
	x.elsewhere = f.addPage("OTHER", "", "Elsewhere", `<p>Not in DOCS.</p>`)
	f.restrict(x.secret, []fakeUser{alice, bob, carol}, []string{"eng"}) // more than one answer holds
	f.restrict(x.child, []fakeUser{alice, carol}, []string{"eng", "ops"})
	x.pdf = []byte("%PDF-1.4 pretend pdf bytes " + strings.Repeat("x", 3000))
	x.diagram = f.addAttachment(x.guide, "diagram.pdf", "application/pdf", x.pdf)
	x.plan = f.addAttachment(x.secret, "plan.txt", "text/plain", []byte("the secret plan"))
	return x
}

func editions() map[string]bool { return map[string]bool{"cloud": true, "datacenter": false} }

func TestConfluenceConformance(t *testing.T) {
	for name, cloud := range editions() {
		t.Run(name, func(t *testing.T) {
			f := newFakeConfluence(t, cloud)
			seed(f)
			c := plugintest.StartConnector(t, docsuite.New())
			plugintest.RunConnectorSuite(t, c,
				plugintest.WithConfig(f.config(map[string]any{"spaces": []string{"DOCS"}, "includeAttachments": true})),
				plugintest.WithMinItems(9),
				plugintest.WithInvalidConfigs(
					f.config(map[string]any{"flavor": "sharepoint"}),
					f.config(map[string]any{"baseUrl": nil}),
					f.config(map[string]any{"namespaces": []int{0}}),
				),
			)
		})
	}
}

func TestConfluenceSync(t *testing.T) {
	for name, cloud := range editions() {
		t.Run(name, func(t *testing.T) {
			f := newFakeConfluence(t, cloud)
			x := seed(f)
			var logs logBuffer
			c := docsuite.New(docsuite.WithLogger(logs.logger()))
			cfg := f.config(map[string]any{"spaces": []string{"DOCS"}, "includeAttachments": true})

			first := mustSync(t, c, cfg, nil)
			if !first.snapshot {
				t.Error("a Confluence sync is a full listing and must start with a snapshot")
			}
			want := []string{x.home, x.guide, x.secret, x.child, x.deep, x.extra1, x.extra2, x.diagram, x.plan}
			slices.Sort(want)
			if got := first.ids(); !slices.Equal(got, want) {
				t.Fatalf("first sync listed %v (%v), want %v", got, titles(first), want)
			}
			if cloud {
				if n := f.count("GET /wiki/api/v2/spaces/{id}/pages"); n < 4 {
					t.Errorf("%d page listing requests for 7 pages at 2 per answer: next links not followed", n)
				}
			} else if n := f.count("GET /confluence/rest/api/content"); n < 4 {
				t.Errorf("%d page listing requests for 7 pages at 2 per answer: next links not followed", n)
			}

			// Metadata of a page.
			guide := first.items[x.guide]
			if guide.Version != "1" || guide.Name != "Guide.html" || guide.ContentType != "text/html; charset=utf-8" {
				t.Errorf("guide: version %q, name %q, type %q", guide.Version, guide.Name, guide.ContentType)
			}
			if !strings.HasPrefix(guide.URL, f.srv.URL+"/") || guide.Metadata["url"] != guide.URL {
				t.Errorf("guide: web URL %q, metadata url %v", guide.URL, guide.Metadata["url"])
			}
			if guide.Path != "DOCS/Home/Guide" || guide.Metadata["spaceKey"] != "DOCS" {
				t.Errorf("guide: path %q, space %v", guide.Path, guide.Metadata["spaceKey"])
			}
			if guide.ModifiedAt.IsZero() || time.Since(guide.ModifiedAt) > time.Hour {
				t.Errorf("guide: modified %v", guide.ModifiedAt)
			}
			if got := first.items[x.extra2].Name; got != "Extra_2.html" {
				t.Errorf("a title with a slash gives the file name %q", got)
			}

			// Access lists: unrestricted pages are public; restrictions are
			// inherited and intersected down the tree.
			p := func(u fakeUser) string { return principal(cloud, u) }
			checkAccess := func(id string, public bool, users, groups []string) {
				t.Helper()
				a := first.items[id].Access
				if a == nil {
					t.Errorf("%s: no access list", first.items[id].Path)
					return
				}
				slices.Sort(users)
				if a.Public != public || !slices.Equal(a.Users, users) || !slices.Equal(a.Groups, groups) {
					t.Errorf("%s: access %+v, want public=%v users=%v groups=%v", first.items[id].Path, *a, public, users, groups)
				}
			}
			checkAccess(x.home, true, nil, nil)
			checkAccess(x.guide, true, nil, nil)
			checkAccess(x.secret, false, []string{p(alice), p(bob), p(carol)}, []string{"eng"})
			checkAccess(x.child, false, []string{p(alice), p(carol)}, []string{"eng"})
			checkAccess(x.deep, false, []string{p(alice), p(carol)}, []string{"eng"})
			checkAccess(x.plan, false, []string{p(alice), p(bob), p(carol)}, []string{"eng"})
			checkAccess(x.diagram, true, nil, nil)
			if d := first.items[x.deep]; d.Path != "DOCS/Home/Secret/Secret child/Deep" || !strings.HasPrefix(d.Version, "1-r") {
				t.Errorf("deep: path %q, version %q (a restricted page's version carries a digest)", d.Path, d.Version)
			}

			// Content: storage format served as HTML with the title on top;
			// code blocks kept, macro parameters dropped.
			content, body := mustFetch(t, c, cfg, guide)
			if content.ContentType != "text/html; charset=utf-8" {
				t.Errorf("page content type %q", content.ContentType)
			}
			for _, want := range []string{"<title>Guide</title>", "<h1>Guide</h1>", "<h2>Install</h2>", "Run the installer.", `fmt.Println(&#34;a &lt; b&#34;)`, "<h2>Configure</h2>", `<ri:page ri:content-title="Home"></ri:page>`} {
				if !strings.Contains(body, want) {
					t.Errorf("page body lacks %q:\n%s", want, body)
				}
			}
			for _, unwanted := range []string{"CDATA", ">go<"} {
				if strings.Contains(body, unwanted) {
					t.Errorf("page body still has %q:\n%s", unwanted, body)
				}
			}
			att, data := mustFetch(t, c, cfg, first.items[x.diagram])
			if data != string(x.pdf) || att.ContentType != "application/pdf" {
				t.Errorf("attachment: %d bytes of type %q, want %d of application/pdf", len(data), att.ContentType, len(x.pdf))
			}
			if it := first.items[x.diagram]; it.Size != int64(len(x.pdf)) || it.Name != "diagram.pdf" || it.ContentType != "application/pdf" || it.Path != "DOCS/Home/Guide/diagram.pdf" {
				t.Errorf("attachment item: %+v", it)
			}

			// No change: the same items and versions.
			second := mustSync(t, c, cfg, nil)
			for id, it := range first.items {
				if second.items[id].Version != it.Version {
					t.Errorf("%s: version %q, then %q without a change", it.Path, it.Version, second.items[id].Version)
				}
			}
			if len(second.items) != len(first.items) {
				t.Errorf("second sync listed %d items, the first %d", len(second.items), len(first.items))
			}

			// An edit, a new restriction, a page moved to the trash.
			f.edit(x.guide, `<h2>Install</h2><p>Run the new installer.</p>`)
			f.restrict(x.extra1, []fakeUser{carol}, nil)
			f.trash(x.extra2)
			third := mustSync(t, c, cfg, nil)
			if v := third.items[x.guide].Version; v != "2" {
				t.Errorf("edited page: version %q, want 2", v)
			}
			if _, body := mustFetch(t, c, cfg, third.items[x.guide]); !strings.Contains(body, "Run the new installer.") {
				t.Errorf("edited page serves the old text:\n%s", body)
			}
			e1 := third.items[x.extra1]
			if e1.Version == first.items[x.extra1].Version || e1.Access.Public || !slices.Equal(e1.Access.Users, []string{p(carol)}) {
				t.Errorf("newly restricted page: version %q (was %q), access %+v", e1.Version, first.items[x.extra1].Version, *e1.Access)
			}
			if _, ok := third.items[x.extra2]; ok {
				t.Error("a trashed page is still listed")
			}
			if _, _, err := fetch(t, c, cfg, first.items[x.extra2]); !errors.Is(err, plugins.ErrNotFound) {
				t.Errorf("fetching a trashed page: %v, want ErrNotFound", err)
			}
			for _, id := range []string{x.home, x.secret, x.deep, x.diagram} {
				if third.items[id].Version != first.items[id].Version {
					t.Errorf("%s changed version without a change", first.items[id].Path)
				}
			}

			// Every space when none is configured; no attachments unless asked.
			all := mustSync(t, c, f.config(nil), nil)
			if _, ok := all.items[x.elsewhere]; !ok {
				t.Errorf("without spaces, the OTHER space's page is missing: %v", titles(all))
			}
			if _, ok := all.items[x.diagram]; ok {
				t.Error("attachments listed without includeAttachments")
			}
			assertNoSecret(t, "log", logs.String(), f.token)
		})
	}
}

func TestConfluenceFailures(t *testing.T) {
	for name, cloud := range editions() {
		t.Run(name, func(t *testing.T) {
			f := newFakeConfluence(t, cloud)
			seed(f)
			var logs logBuffer
			c := docsuite.New(docsuite.WithLogger(logs.logger()), docsuite.WithRetries(1, 10*time.Millisecond))
			ctx := context.Background()
			secrets := []string{f.token, base64.StdEncoding.EncodeToString([]byte(f.user + ":" + f.token))}

			t.Run("MissingSpace", func(t *testing.T) {
				cfg := f.config(map[string]any{"spaces": []string{"DOCS", "NOPE"}})
				r := syncOnce(t, c, cfg, nil)
				if !errors.Is(r.err, plugins.ErrNotFound) || !strings.Contains(r.err.Error(), "NOPE") {
					t.Errorf("sync with a missing space: %v", r.err)
				}
				if r.snapshot || len(r.items) > 0 {
					t.Error("a sync with a missing space sent a snapshot: the host would delete that space's items")
				}
				h, err := c.CheckHealth(ctx, cfg)
				if err != nil || h.Status != connector.StatusDegraded || !strings.Contains(h.Message, "NOPE") {
					t.Errorf("health with a missing space: %+v, %v", h, err)
				}
			})
			t.Run("WrongToken", func(t *testing.T) {
				wrong := "wrong-token-" + strings.Repeat("z", 20)
				cfg := f.config(map[string]any{"apiToken": wrong})
				r := syncOnce(t, c, cfg, nil)
				if !errors.Is(r.err, plugins.ErrUnauthenticated) {
					t.Errorf("sync with a wrong token: %v, want ErrUnauthenticated", r.err)
				} else {
					assertNoSecret(t, "sync error", r.err.Error(), wrong)
				}
				h, err := c.CheckHealth(ctx, cfg)
				if err != nil || h.Status != connector.StatusDown {
					t.Errorf("health with a wrong token: %+v, %v", h, err)
				}
				assertNoSecret(t, "health message", h.Message, wrong)
			})
			t.Run("Unreachable", func(t *testing.T) {
				cfg := f.config(map[string]any{"baseUrl": "http://" + closedPort(t) + "/confluence"})
				h, err := c.CheckHealth(ctx, cfg)
				if err != nil || h.Status != connector.StatusDown {
					t.Errorf("health of an unreachable server: %+v, %v", h, err)
				}
				if r := syncOnce(t, c, cfg, nil); r.err == nil || r.snapshot {
					t.Errorf("sync of an unreachable server: err %v, snapshot %v", r.err, r.snapshot)
				}
			})
			t.Run("EchoingServer", func(t *testing.T) {
				f.setFail500(true)
				defer f.setFail500(false)
				cfg := f.config(nil)
				r := syncOnce(t, c, cfg, nil)
				if r.err == nil || !strings.Contains(r.err.Error(), "500") {
					t.Fatalf("sync against a failing server: %v", r.err)
				}
				assertNoSecret(t, "sync error", r.err.Error(), secrets...)
				h, _ := c.CheckHealth(ctx, cfg)
				assertNoSecret(t, "health message", h.Message, secrets...)
				_, _, err := fetch(t, c, cfg, connector.Item{ID: "1001", Name: "x.html"})
				if err == nil {
					t.Fatal("fetch from a failing server succeeded")
				}
				assertNoSecret(t, "fetch error", err.Error(), secrets...)
			})
			if !cloud {
				t.Run("PersonalAccessToken", func(t *testing.T) {
					cfg := f.config(map[string]any{"username": nil, "apiToken": f.pat})
					if r := mustSync(t, c, cfg, nil); len(r.items) < 7 {
						t.Errorf("with a personal access token: %d items", len(r.items))
					}
				})
			}
			assertNoSecret(t, "log", logs.String(), secrets...)
		})
	}
}

// TestConfluenceCloudSiteWithWiki checks that a Cloud site given with its
// /wiki path is the same site.
func TestConfluenceCloudSiteWithWiki(t *testing.T) {
	f := newFakeConfluence(t, true)
	seed(f)
	c := docsuite.New()
	cfg := f.config(map[string]any{"baseUrl": f.srv.URL + "/wiki", "spaces": []string{"DOCS"}})
	if r := mustSync(t, c, cfg, nil); len(r.items) != 7 {
		t.Errorf("with /wiki in baseUrl: %d items, want 7", len(r.items))
	}
	h, err := c.CheckHealth(context.Background(), cfg)
	if err != nil || h.Status != connector.StatusOK {
		t.Errorf("health: %+v, %v", h, err)
	}
	if !strings.Contains(h.Message, "spaces readable: 1") {
		t.Errorf("health message %q does not say what it checked", h.Message)
	}
}
