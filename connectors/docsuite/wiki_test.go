package docsuite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests run a real MediaWiki (Debian's mediawiki package, 1.39) under
// PHP's built-in web server, on SQLite. Installing takes a few seconds, so
// one installation is made per test run and copied for each wiki.

const (
	mwRoot    = "/usr/share/mediawiki"
	mwInstall = "scripts/docsuite-deps.sh"

	adminPass = "Admin-pass-0123456789"
	// The connector's bot password may only read; the tests edit through
	// another one.
	readerLogin = "Admin@docindex"
	readerPass  = "readerbotpassword0123456789abcdef"
	editorLogin = "Admin@tester"
	editorPass  = "editorbotpassword0123456789abcdef"
)

// wikiTemplate is the installed wiki every test wiki starts from.
var wikiTemplate struct {
	once     sync.Once
	dir      string // holds LocalSettings.php and data/
	settings string
	err      error
}

// templateRoot is removed by TestMain.
var templateRoot string

func installTemplate() (string, string, error) {
	wikiTemplate.once.Do(func() {
		wikiTemplate.dir, wikiTemplate.settings, wikiTemplate.err = install()
	})
	return wikiTemplate.dir, wikiTemplate.settings, wikiTemplate.err
}

func install() (string, string, error) {
	if _, err := os.Stat(filepath.Join(mwRoot, "maintenance", "install.php")); err != nil {
		return "", "", fmt.Errorf("MediaWiki is not installed (%v): run %s as root (apt-get install --no-install-recommends mediawiki php-cli php-sqlite3)", err, mwInstall)
	}
	if _, err := exec.LookPath("php"); err != nil {
		return "", "", fmt.Errorf("php is not on PATH: run %s as root", mwInstall)
	}
	dir, err := os.MkdirTemp(fastTemp(), "docsuite-wiki-template-")
	if err != nil {
		return "", "", err
	}
	templateRoot = dir
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		return "", "", err
	}
	// PHP's opcode cache in files, shared by every PHP process of the
	// run: a fresh php -S then starts in well under a second instead of
	// compiling MediaWiki again for several.
	opcache := filepath.Join(dir, "opcache")
	if err := os.Mkdir(opcache, 0o755); err != nil {
		return "", "", err
	}
	phpFlags = []string{"-d", "opcache.enable_cli=1", "-d", "opcache.file_cache=" + opcache}
	run := func(args ...string) error {
		cmd := exec.Command("php", append(slices.Clone(phpFlags), args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("php %s: %v\n%s", strings.Join(args[:1], " "), err, out)
		}
		return nil
	}
	err = run(filepath.Join(mwRoot, "maintenance", "install.php"),
		"--confpath", dir, "--dbtype", "sqlite", "--dbpath", data, "--dbname", "wiki",
		"--server", "http://127.0.0.1:1", "--scriptpath", "", "--lang", "en",
		"--pass", adminPass, "TestWiki", "Admin")
	if err != nil {
		return "", "", fmt.Errorf("install MediaWiki: %w", err)
	}
	conf := filepath.Join(dir, "LocalSettings.php")
	// Salted MD5 instead of PBKDF2 for the test wikis' passwords: every
	// bot password login would otherwise cost most of a second of CPU.
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return "", "", err
	}
	_, err = f.WriteString("\n$wgPasswordDefault = 'B';\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", "", err
	}
	for _, bot := range []struct{ app, pass, grants string }{
		{"docindex", readerPass, "basic,highvolume"},
		{"tester", editorPass, "basic,highvolume,editpage,createeditmovepage,delete"},
	} {
		err := run(filepath.Join(mwRoot, "maintenance", "createBotPassword.php"), "--conf", conf,
			"--appid", bot.app, "--grants", bot.grants, "Admin", bot.pass)
		if err != nil {
			return "", "", fmt.Errorf("create bot password: %w", err)
		}
	}
	settings, err := os.ReadFile(conf)
	if err != nil {
		return "", "", err
	}
	if err := warm(dir, conf); err != nil {
		return "", "", fmt.Errorf("warm up MediaWiki: %w", err)
	}
	return dir, string(settings), nil
}

// fastTemp is where wikis keep their SQLite files: memory (/dev/shm) where
// the machine has it, since every edit syncs the database to disk.
func fastTemp() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", "docsuite-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return os.TempDir()
}

// phpFlags are the php options of every PHP process; install sets them.
var phpFlags []string

// warm serves the template once and reads a page through the API, so that
// the opcode cache holds what the API needs.
func warm(dir, conf string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command("php", append(slices.Clone(phpFlags), "-S", addr, "-t", mwRoot)...)
	cmd.Env = append(os.Environ(), "MW_CONFIG_FILE="+conf)
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	deadline := time.Now().Add(60 * time.Second)
	for _, q := range []string{"action=query&meta=siteinfo|userinfo|tokens", "action=parse&pageid=1", "action=query&generator=allpages&prop=info|revisions"} {
		for {
			resp, err := http.Get("http://" + addr + "/api.php?format=json&" + q)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no answer from php -S within 60s: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// wiki is a running MediaWiki.
type wiki struct {
	url    string // the script path: http://127.0.0.1:port
	editor *wikiClient
}

type wikiOptions struct {
	// private withholds reading from anonymous users.
	private bool
}

// startWiki copies the template and serves it on a free loopback port
// until the test ends.
func startWiki(t *testing.T, opts wikiOptions) *wiki {
	t.Helper()
	tmpl, settings, err := installTemplate()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(fastTemp(), "docsuite-wiki-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	if err := os.CopyFS(data, os.DirFS(filepath.Join(tmpl, "data"))); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	server := "http://127.0.0.1:" + strconv.Itoa(port)
	s := strings.ReplaceAll(settings, filepath.Join(tmpl, "data"), data)
	s = strings.Replace(s, `$wgServer = "http://127.0.0.1:1";`, `$wgServer = "`+server+`";`, 1)
	if opts.private {
		s += "$wgGroupPermissions['*']['read'] = false;\n$wgGroupPermissions['*']['edit'] = false;\n$wgGroupPermissions['*']['createaccount'] = false;\n"
	}
	conf := filepath.Join(dir, "LocalSettings.php")
	if err := os.WriteFile(conf, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("php", append(slices.Clone(phpFlags), "-S", "127.0.0.1:"+strconv.Itoa(port), "-t", mwRoot)...)
	cmd.Env = append(os.Environ(), "MW_CONFIG_FILE="+conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start php -S: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Join(dir, "server.log")); err == nil && len(log) > 0 {
				tail := string(log)
				if len(tail) > 4000 {
					tail = tail[len(tail)-4000:]
				}
				t.Logf("MediaWiki server log (tail):\n%s", tail)
			}
		}
	})
	w := &wiki{url: server}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(server + "/api.php?action=query&meta=siteinfo&format=json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("MediaWiki did not answer on %s within 20s: %v", server, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.editor = newWikiClient(t, server, editorLogin, editorPass)
	return w
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// config returns a source configuration for this wiki.
func (w *wiki) config(extra map[string]any) json.RawMessage {
	cfg := map[string]any{"flavor": "mediawiki", "baseUrl": w.url}
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

// wikiClient edits a wiki through its API, logged in with a bot password.
type wikiClient struct {
	t    *testing.T
	api  string
	hc   *http.Client
	csrf string
}

func newWikiClient(t *testing.T, server, login, pass string) *wikiClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &wikiClient{t: t, api: server + "/api.php", hc: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	var tok struct {
		Query struct {
			Tokens map[string]string `json:"tokens"`
		} `json:"query"`
	}
	c.call(url.Values{"action": {"query"}, "meta": {"tokens"}, "type": {"login"}}, &tok)
	var res struct {
		Login struct {
			Result string `json:"result"`
		} `json:"login"`
	}
	c.call(url.Values{"action": {"login"}, "lgname": {login}, "lgpassword": {pass}, "lgtoken": {tok.Query.Tokens["logintoken"]}}, &res)
	if res.Login.Result != "Success" {
		t.Fatalf("test client login: %s", res.Login.Result)
	}
	c.call(url.Values{"action": {"query"}, "meta": {"tokens"}}, &tok)
	c.csrf = tok.Query.Tokens["csrftoken"]
	return c
}

func (c *wikiClient) call(params url.Values, v any) {
	c.t.Helper()
	params.Set("format", "json")
	params.Set("formatversion", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.api, strings.NewReader(params.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("wiki %s: %v", params.Get("action"), err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		c.t.Fatalf("wiki %s: %v", params.Get("action"), err)
	}
	var e struct {
		Error *struct{ Code, Info string } `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	if e.Error != nil {
		c.t.Fatalf("wiki %s: %s: %s", params.Get("action"), e.Error.Code, e.Error.Info)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			c.t.Fatalf("wiki %s: %v: %s", params.Get("action"), err, raw)
		}
	}
}

// edit creates or changes a page and returns its page id and new
// revision id.
func (c *wikiClient) edit(title, text string) (pageID, revID string) {
	c.t.Helper()
	var r struct {
		Edit struct {
			Result   string `json:"result"`
			PageID   int64  `json:"pageid"`
			NewRevID int64  `json:"newrevid"`
		} `json:"edit"`
	}
	c.call(url.Values{"action": {"edit"}, "title": {title}, "text": {text}, "token": {c.csrf}, "bot": {"1"}}, &r)
	if r.Edit.Result != "Success" {
		c.t.Fatalf("edit %s: %s", title, r.Edit.Result)
	}
	return strconv.FormatInt(r.Edit.PageID, 10), strconv.FormatInt(r.Edit.NewRevID, 10)
}

func (c *wikiClient) delete(title string) {
	c.t.Helper()
	c.call(url.Values{"action": {"delete"}, "title": {title}, "token": {c.csrf}, "reason": {"test"}}, nil)
}

func (c *wikiClient) move(from, to string) {
	c.t.Helper()
	c.call(url.Values{"action": {"move"}, "from": {from}, "to": {to}, "token": {c.csrf}, "noredirect": {"1"}}, nil)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if templateRoot != "" {
		os.RemoveAll(templateRoot)
	}
	os.Exit(code)
}
