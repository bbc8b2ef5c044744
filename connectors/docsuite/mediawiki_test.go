package docsuite_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/connectors/docsuite"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/plugintest"
)

func TestMediaWikiConformance(t *testing.T) {
	t.Parallel()
	w := startWiki(t, wikiOptions{})
	w.editor.edit("Alpha", "== Overview ==\nAlpha text.")
	w.editor.edit("Beta", "Beta text.")
	c := plugintest.StartConnector(t, docsuite.New())
	plugintest.RunConnectorSuite(t, c,
		plugintest.WithConfig(w.config(nil)),
		plugintest.WithMinItems(3),
		plugintest.WithInvalidConfigs(
			w.config(map[string]any{"namespaces": []int{-1}}),
			w.config(map[string]any{"spaces": []string{"DOCS"}}),
			w.config(map[string]any{"includeAttachments": true}),
		),
	)
}

func TestMediaWikiSync(t *testing.T) {
	t.Parallel()
	w := startWiki(t, wikiOptions{})
	alpha, alphaRev := w.editor.edit("Alpha", "Intro.\n\n== Overview ==\nAlpha text.\n\n== Details ==\n* one\n* two")
	beta, _ := w.editor.edit("Beta", "Beta text.")
	gamma, _ := w.editor.edit("Gamma/Sub", "Gamma text.")
	notes, _ := w.editor.edit("User:Admin/Notes", "Notes in the user namespace.")
	redirect, _ := w.editor.edit("Redirect to Alpha", "#REDIRECT [[Alpha]]")

	var logs logBuffer
	// Two results per answer: listings and recent changes must follow
	// MediaWiki's continuation.
	c := docsuite.New(docsuite.WithLogger(logs.logger()), docsuite.WithPageSize(2))
	cfg := w.config(nil)

	// First sync: everything in the main namespace except the redirect.
	first := mustSync(t, c, cfg, nil)
	if !first.snapshot || first.cursor == nil {
		t.Fatalf("a first sync must be a snapshot ending in a checkpoint (snapshot %v, cursor %q)", first.snapshot, first.cursor)
	}
	if last := first.events[len(first.events)-1]; last.Kind != connector.EventCheckpoint {
		t.Errorf("last event %v, want the checkpoint", last.Kind)
	}
	mainPage := byTitle(t, first, "Main Page").ID
	want := []string{mainPage, alpha, beta, gamma}
	slices.Sort(want)
	if got := first.ids(); !slices.Equal(got, want) {
		t.Fatalf("first sync listed %v (%v), want %v", got, titles(first), want)
	}
	if _, ok := first.items[redirect]; ok {
		t.Error("a redirect page was listed")
	}
	for _, it := range first.items {
		if it.ModifiedAt.IsZero() || it.Version == "" || it.URL == "" {
			t.Errorf("%s: modified %v, version %q, URL %q (properties lost across continuation?)", it.Path, it.ModifiedAt, it.Version, it.URL)
		}
	}
	a := first.items[alpha]
	if a.Version != alphaRev || a.Name != "Alpha.html" || a.Path != "Alpha" || a.ContentType != "text/html; charset=utf-8" {
		t.Errorf("alpha: version %q (want %s), name %q, path %q, type %q", a.Version, alphaRev, a.Name, a.Path, a.ContentType)
	}
	if a.URL != w.url+"/index.php/Alpha" || a.Metadata["url"] != a.URL {
		t.Errorf("alpha: web URL %q, metadata url %v", a.URL, a.Metadata["url"])
	}
	if a.Access == nil || !a.Access.Public {
		t.Errorf("a page of a wiki anyone may read: access %+v, want public", a.Access)
	}
	if a.ModifiedAt.IsZero() || time.Since(a.ModifiedAt) > time.Hour {
		t.Errorf("alpha: modified %v", a.ModifiedAt)
	}
	if g := first.items[gamma]; g.Name != "Gamma_Sub.html" || g.Path != "Gamma/Sub" {
		t.Errorf("subpage: name %q, path %q", g.Name, g.Path)
	}

	// Content: rendered HTML with the page's headings.
	content, body := mustFetch(t, c, cfg, a)
	if content.ContentType != "text/html; charset=utf-8" || content.Version != alphaRev {
		t.Errorf("alpha content: type %q, version %q", content.ContentType, content.Version)
	}
	for _, want := range []string{"<title>Alpha</title>", "<h1>Alpha</h1>", "<h2>", "Overview", "Alpha text.", "Details", "<li>one"} {
		if !strings.Contains(body, want) {
			t.Errorf("alpha content lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "== Overview ==") || strings.Contains(body, `class="mw-editsection"`) {
		t.Errorf("alpha content is not clean rendered HTML:\n%s", body)
	}

	// A second full sync without changes: same items and versions.
	second := mustSync(t, c, cfg, nil)
	for id, it := range first.items {
		if second.items[id].Version != it.Version {
			t.Errorf("%s: version %q, then %q without a change", it.Path, it.Version, second.items[id].Version)
		}
	}
	if len(second.items) != len(first.items) {
		t.Errorf("second sync listed %d items, the first %d", len(second.items), len(first.items))
	}

	// An incremental sync without changes reports nothing new. Changes
	// in the second of the cursor are reported again (MediaWiki's clock
	// has whole seconds), unchanged.
	quiet := mustSync(t, c, cfg, second.cursor)
	if quiet.snapshot || quiet.cursor == nil {
		t.Errorf("incremental sync without changes: snapshot %v, cursor %q", quiet.snapshot, quiet.cursor)
	}
	for _, id := range quiet.deleted {
		if id != redirect { // a redirect created in the cursor's second is no item
			t.Errorf("incremental sync without changes deleted %s", id)
		}
	}
	for id, it := range quiet.items {
		if first.items[id].Version != it.Version {
			t.Errorf("incremental sync without changes reported %s with version %q (was %q)", it.Path, it.Version, first.items[id].Version)
		}
	}

	// Changes: an edit, a deletion, a move out of the namespace, a new page.
	time.Sleep(1100 * time.Millisecond) // past the cursor's second
	_, alphaRev2 := w.editor.edit("Alpha", "Intro.\n\n== Overview ==\nAlpha text, revised.")
	w.editor.delete("Beta")
	w.editor.move("Gamma/Sub", "User:Admin/Gamma")
	delta, _ := w.editor.edit("Delta", "A new page.")

	inc := mustSync(t, c, cfg, quiet.cursor)
	if inc.snapshot {
		t.Error("a sync from a cursor sent a snapshot")
	}
	if it, ok := inc.items[alpha]; !ok || it.Version != alphaRev2 {
		t.Errorf("edited page: %+v, want version %s", inc.items[alpha], alphaRev2)
	}
	if _, ok := inc.items[delta]; !ok {
		t.Errorf("new page not reported: %v", titles(inc))
	}
	for _, gone := range []string{beta, gamma} {
		if !slices.Contains(inc.deleted, gone) {
			t.Errorf("page %s (deleted or moved out) not reported deleted: deletes %v", gone, inc.deleted)
		}
		if _, ok := inc.items[gone]; ok {
			t.Errorf("page %s upserted though gone", gone)
		}
	}
	if _, ok := inc.items[mainPage]; ok {
		t.Error("the unchanged main page was reported by an incremental sync after its second")
	}
	if _, body := mustFetch(t, c, cfg, inc.items[alpha]); !strings.Contains(body, "Alpha text, revised.") {
		t.Errorf("edited page serves old content:\n%s", body)
	}
	if _, _, err := fetch(t, c, cfg, first.items[beta]); !errors.Is(err, plugins.ErrNotFound) {
		t.Errorf("fetching a deleted page: %v, want ErrNotFound", err)
	}

	// A full listing agrees.
	full := mustSync(t, c, cfg, nil)
	want = []string{mainPage, alpha, delta}
	slices.Sort(want)
	if got := full.ids(); !slices.Equal(got, want) {
		t.Errorf("full sync after the changes listed %v (%v), want %v", got, titles(full), want)
	}

	// Namespaces select pages; a cursor written for other namespaces
	// leads to a full listing.
	userNS := w.config(map[string]any{"namespaces": []int{2}})
	user := mustSync(t, c, userNS, inc.cursor)
	if !user.snapshot {
		t.Error("a cursor of other namespaces was used for an incremental sync")
	}
	want = []string{notes, gamma}
	slices.Sort(want)
	if got := user.ids(); !slices.Equal(got, want) {
		t.Errorf("namespace 2 listed %v (%v), want %v", got, titles(user), want)
	}
	both := mustSync(t, c, w.config(map[string]any{"namespaces": []int{0, 2}}), nil)
	if len(both.items) != 5 {
		t.Errorf("namespaces 0 and 2 listed %v", titles(both))
	}
	if !strings.Contains(logs.String(), "docsuite: sync done") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("log:\n%s", logs.String())
	}
}

func TestMediaWikiPrivate(t *testing.T) {
	t.Parallel()
	w := startWiki(t, wikiOptions{private: true})
	page, _ := w.editor.edit("Internal", "== Plans ==\nOnly for staff.")
	ctx := context.Background()
	var logs logBuffer
	c := docsuite.New(docsuite.WithLogger(logs.logger()))

	// Anonymous: refused, and the error says what to set.
	anon := w.config(nil)
	r := syncOnce(t, c, anon, nil)
	if !errors.Is(r.err, plugins.ErrUnauthenticated) || !strings.Contains(r.err.Error(), "apiToken") || r.snapshot {
		t.Errorf("anonymous sync of a private wiki: %v (snapshot %v)", r.err, r.snapshot)
	}
	if h, err := c.CheckHealth(ctx, anon); err != nil || h.Status != connector.StatusDown {
		t.Errorf("anonymous health of a private wiki: %+v, %v", h, err)
	}

	// A bot password: everything readable, but no access list, since the
	// wiki's read right does not tell who may read a page.
	cfg := w.config(map[string]any{"username": readerLogin, "apiToken": readerPass})
	if h, err := c.CheckHealth(ctx, cfg); err != nil || h.Status != connector.StatusOK || !strings.Contains(h.Message, "MediaWiki 1.") {
		t.Errorf("health with a bot password: %+v, %v", h, err)
	}
	first := mustSync(t, c, cfg, nil)
	it, ok := first.items[page]
	if !ok {
		t.Fatalf("private page not listed: %v", titles(first))
	}
	if it.Access != nil {
		t.Errorf("a private wiki's page has access %+v; the connector cannot know who may read it", *it.Access)
	}
	if _, body := mustFetch(t, c, cfg, it); !strings.Contains(body, "Only for staff.") {
		t.Errorf("private page content:\n%s", body)
	}
	w.editor.edit("Internal", "== Plans ==\nOnly for staff, revised.")
	inc := mustSync(t, c, cfg, first.cursor)
	if inc.items[page].Version == it.Version {
		t.Errorf("incremental sync with a bot password missed an edit: %v", titles(inc))
	}

	// A wrong password: refused, and the password appears nowhere.
	wrong := "wrong-bot-password-" + strconv.Itoa(int(time.Now().UnixNano()%1e6)) + "xyz"
	bad := w.config(map[string]any{"username": readerLogin, "apiToken": wrong})
	r = syncOnce(t, c, bad, nil)
	if !errors.Is(r.err, plugins.ErrUnauthenticated) {
		t.Errorf("sync with a wrong bot password: %v, want ErrUnauthenticated", r.err)
	} else {
		assertNoSecret(t, "sync error", r.err.Error(), wrong)
	}
	h, err := c.CheckHealth(ctx, bad)
	if err != nil || h.Status != connector.StatusDown {
		t.Errorf("health with a wrong bot password: %+v, %v", h, err)
	}
	assertNoSecret(t, "health message", h.Message, wrong)
	if _, _, err := fetch(t, c, bad, it); err == nil {
		t.Error("fetch with a wrong bot password succeeded")
	} else {
		assertNoSecret(t, "fetch error", err.Error(), wrong)
	}
	assertNoSecret(t, "log", logs.String(), wrong, readerPass)
}

func TestMediaWikiUnreachable(t *testing.T) {
	t.Parallel()
	c := docsuite.New()
	cfg := (&wiki{url: "http://" + closedPort(t) + "/w"}).config(nil)
	h, err := c.CheckHealth(context.Background(), cfg)
	if err != nil || h.Status != connector.StatusDown || h.Message == "" {
		t.Errorf("health of an unreachable wiki: %+v, %v", h, err)
	}
	if r := syncOnce(t, c, cfg, nil); r.err == nil || r.snapshot {
		t.Errorf("sync of an unreachable wiki: err %v, snapshot %v", r.err, r.snapshot)
	}
}
