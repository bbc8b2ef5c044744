package sources_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The servers the tests sync from, each on loopback and each the real thing: git's own
// git-http-backend, rclone's WebDAV server, the versitygw S3 gateway, MediaWiki under PHP, and a
// static file server over Debian's PostgreSQL manual. Their set-up follows the connectors' own
// tests (connectors/*), reduced to what these tests need.

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// lockedBuffer collects a server's output for failure messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startProcess runs a server until the test ends and waits until addr accepts connections.
func startProcess(t *testing.T, addr string, env []string, bin string, args ...string) {
	t.Helper()
	out := &lockedBuffer{}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	// Its own process group, so that the kill reaches anything it starts.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(bin), tail(out.String(), 4000))
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			t.Fatalf("%s exited before listening on %s (%v):\n%s", filepath.Base(bin), addr, err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s within 20s:\n%s", filepath.Base(bin), addr, out.String())
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// writeFile writes a file below dir, creating its folders. A rewrite gets a modification time
// after the old one whatever the file system's timestamp granularity: rclone's ETags and the
// file server's Last-Modified derive from it.
func writeFile(t *testing.T, dir, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	mtime := time.Now()
	if old, err := os.Stat(p); err == nil && !mtime.After(old.ModTime().Add(time.Second)) {
		mtime = old.ModTime().Add(2 * time.Second)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// moduleRoot is the directory of go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("module root (go.mod) not found above the test directory")
		}
		dir = parent
	}
}

// --- git: git-http-backend as CGI ---

// gitServer serves the bare repositories under root over smart HTTP with git's own
// git-http-backend, behind HTTP basic authentication.
type gitServer struct {
	root string
	url  string
}

func gitEnv(home string) []string {
	return append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+filepath.Join(home, "gitconfig"),
		"HOME="+home,
		"GIT_AUTHOR_NAME=Doc Index", "GIT_AUTHOR_EMAIL=docindex@example.com",
		"GIT_COMMITTER_NAME=Doc Index", "GIT_COMMITTER_EMAIL=docindex@example.com",
		"GIT_TERMINAL_PROMPT=0",
	)
}

func startGitServer(t *testing.T, user, pass string) *gitServer {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is not installed: run scripts/git-deps.sh as root (apt-get install git)")
	}
	out, err := exec.Command(gitBin, "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("git-http-backend not found (%v): run scripts/git-deps.sh as root", err)
	}
	root := t.TempDir()
	cgiHandler := &cgi.Handler{
		Path: backend,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + root},
		InheritEnv: []string{"PATH"},
		Stderr:     io.Discard,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		cgiHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &gitServer{root: root, url: srv.URL}
}

// repo is a bare repository on the server and a working copy that pushes to it through the
// file system.
type repo struct {
	t    *testing.T
	bare string
	work string
	home string
	url  string
}

func (s *gitServer) newRepo(t *testing.T, name string) *repo {
	t.Helper()
	r := &repo{t: t, bare: filepath.Join(s.root, name+".git"), work: t.TempDir(), home: t.TempDir(), url: s.url + "/" + name + ".git"}
	r.run("", "init", "--quiet", "--bare", "--initial-branch=main", r.bare)
	r.run(r.work, "init", "--quiet", "--initial-branch=main")
	r.run(r.work, "remote", "add", "origin", r.bare)
	return r
}

func (r *repo) run(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(r.home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(p, content string) { r.t.Helper(); writeFile(r.t, r.work, p, []byte(content)) }

func (r *repo) remove(p string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.work, filepath.FromSlash(p))); err != nil {
		r.t.Fatal(err)
	}
}

// commit commits everything and pushes the branch.
func (r *repo) commit(msg string) {
	r.t.Helper()
	r.run(r.work, "add", "-A")
	r.run(r.work, "commit", "--quiet", "-m", msg)
	r.run(r.work, "push", "--quiet", "origin", "HEAD")
}

// --- filecloud: rclone serve webdav, versitygw ---

// startWebDAV serves dir with `rclone serve webdav` behind user and pass and returns its URL.
func startWebDAV(t *testing.T, dir, user, pass string) string {
	t.Helper()
	bin, err := exec.LookPath("rclone")
	if err != nil {
		t.Fatal("rclone is not installed: run scripts/filecloud-deps.sh as root (or apt-get install rclone)")
	}
	addr := freeAddr(t)
	// No directory cache: the tests change files on disk and sync at once.
	startProcess(t, addr, []string{"RCLONE_CONFIG=" + filepath.Join(t.TempDir(), "rclone.conf")}, bin,
		"serve", "webdav", "--addr", addr, "--user", user, "--pass", pass,
		"--dir-cache-time", "0s", "--log-level", "ERROR", dir)
	return "http://" + addr + "/"
}

// versitygw finds the S3 gateway: $DOCINDEX_VERSITYGW, else .tools/bin at the module root,
// where scripts/s3gw.sh installs it.
func versitygw(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DOCINDEX_VERSITYGW"); p != "" {
		return p
	}
	p := filepath.Join(moduleRoot(t), ".tools", "bin", "versitygw")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the S3 gateway versitygw is not installed at %s: run scripts/filecloud-deps.sh (or scripts/s3gw.sh)", p)
	}
	return p
}

// s3Server is a versitygw gateway with a client for arranging objects.
type s3Server struct {
	endpoint string
	client   *s3.Client
}

func startS3(t *testing.T, access, secret string) *s3Server {
	t.Helper()
	addr := freeAddr(t)
	startProcess(t, addr, nil, versitygw(t), "--access", access, "--secret", secret, "--port", addr, "posix", t.TempDir())
	endpoint := "http://" + addr
	return &s3Server{endpoint: endpoint, client: s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(access, secret, ""),
	})}
}

func (g *s3Server) createBucket(t *testing.T, name string) {
	t.Helper()
	if _, err := g.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
}

func (g *s3Server) put(t *testing.T, bucket, key, data string) {
	t.Helper()
	_, err := g.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: strings.NewReader(data), ContentType: aws.String("text/markdown")})
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
}

func (g *s3Server) remove(t *testing.T, bucket, key string) {
	t.Helper()
	if _, err := g.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		t.Fatalf("delete %s/%s: %v", bucket, key, err)
	}
}

// --- webcrawl: a static copy of part of the PostgreSQL manual ---

// pgManual is the directory of Debian's PostgreSQL HTML manual.
const pgManual = "/usr/share/doc/postgresql-doc-15/html"

// copyManual copies the pages of the manual whose names start with prefix into a directory the
// test may change, keeping their modification times (the file server's Last-Modified, which the
// crawler takes as the pages' versions). It returns the directory and the number of pages.
func copyManual(t *testing.T, prefix string) (string, int) {
	t.Helper()
	entries, err := os.ReadDir(pgManual)
	if err != nil {
		t.Fatalf("the PostgreSQL manual is not installed (%v): run scripts/webcrawl-deps.sh as root "+
			"(apt-get install postgresql-doc-15)", err)
	}
	dir := t.TempDir()
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !strings.HasSuffix(e.Name(), ".html") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(pgManual, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, e.Name())
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("no page %s*.html in %s: reinstall postgresql-doc-15 (scripts/webcrawl-deps.sh)", prefix, pgManual)
	}
	return dir, n
}

// --- docsuite: MediaWiki (Debian's package) under php -S, on SQLite ---

const (
	mwRoot = "/usr/share/mediawiki"
	// The connector reads with one bot password; the test edits with another. MediaWiki takes a
	// login for a bot password only when the password looks like one it makes: 32 or more of [0-9a-w].
	wikiAdminPass   = "Admin-pass-0123456789"
	wikiReaderLogin = "Admin@docindex"
	wikiReaderPass  = "readerbotpasswordintegration7f3a"
	wikiEditorLogin = "Admin@tester"
	wikiEditorPass  = "editorbotpasswordintegration41b2"
)

// startWiki installs a fresh MediaWiki with an SQLite database and serves it with php -S on a
// free loopback port until the test ends. It returns the script path URL (the directory of
// api.php).
func startWiki(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(mwRoot, "maintenance", "install.php")); err != nil {
		t.Fatalf("MediaWiki is not installed (%v): run scripts/docsuite-deps.sh as root "+
			"(apt-get install --no-install-recommends mediawiki php-cli php-sqlite3)", err)
	}
	if _, err := exec.LookPath("php"); err != nil {
		t.Fatal("php is not on PATH: run scripts/docsuite-deps.sh as root")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	opcache := filepath.Join(dir, "opcache")
	for _, d := range []string{data, opcache} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// PHP's opcode cache, so that php -S compiles MediaWiki once rather than on every request.
	flags := []string{"-d", "opcache.enable_cli=1", "-d", "opcache.file_cache=" + opcache}
	php := func(args ...string) {
		t.Helper()
		cmd := exec.Command("php", append(append([]string(nil), flags...), args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("php %s: %v\n%s", filepath.Base(args[0]), err, tail(string(out), 4000))
		}
	}
	addr := freeAddr(t)
	server := "http://" + addr
	php(filepath.Join(mwRoot, "maintenance", "install.php"),
		"--confpath", dir, "--dbtype", "sqlite", "--dbpath", data, "--dbname", "wiki",
		"--server", server, "--scriptpath", "", "--lang", "en",
		"--pass", wikiAdminPass, "TestWiki", "Admin")
	conf := filepath.Join(dir, "LocalSettings.php")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Salted MD5 for the test wiki's passwords: PBKDF2 costs most of a second of CPU per bot
	// password login.
	_, err = f.WriteString("\n$wgPasswordDefault = 'B';\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, bot := range []struct{ app, pass, grants string }{
		{"docindex", wikiReaderPass, "basic,highvolume"},
		{"tester", wikiEditorPass, "basic,highvolume,editpage,createeditmovepage,delete"},
	} {
		php(filepath.Join(mwRoot, "maintenance", "createBotPassword.php"), "--conf", conf,
			"--appid", bot.app, "--grants", bot.grants, "Admin", bot.pass)
	}
	startProcess(t, addr, []string{"MW_CONFIG_FILE=" + conf}, "php", append(flags, "-S", addr, "-t", mwRoot)...)
	// The port answers before MediaWiki does: wait for the API.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(server + "/api.php?action=query&meta=siteinfo&format=json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return server
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("MediaWiki did not answer on %s within 30s: %v", server, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wikiClient edits a wiki through its action API, logged in with a bot password.
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
		t.Fatalf("wiki login: %s", res.Login.Result)
	}
	c.call(url.Values{"action": {"query"}, "meta": {"tokens"}}, &tok)
	c.csrf = tok.Query.Tokens["csrftoken"]
	return c
}

func (c *wikiClient) call(params url.Values, v any) {
	c.t.Helper()
	params.Set("format", "json")
	params.Set("formatversion", "2")
	resp, err := c.hc.PostForm(c.api, params)
	if err != nil {
		c.t.Fatalf("wiki %s: %v", params.Get("action"), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("wiki %s: %v", params.Get("action"), err)
	}
	var e struct {
		Error *struct{ Code, Info string } `json:"error"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		c.t.Fatalf("wiki %s: %v: %s", params.Get("action"), err, tail(string(raw), 500))
	}
	if e.Error != nil {
		c.t.Fatalf("wiki %s: %s: %s", params.Get("action"), e.Error.Code, e.Error.Info)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			c.t.Fatalf("wiki %s: %v", params.Get("action"), err)
		}
	}
}

// edit creates or changes a page and returns its page id.
func (c *wikiClient) edit(title, text string) string {
	c.t.Helper()
	var r struct {
		Edit struct {
			Result string `json:"result"`
			PageID int64  `json:"pageid"`
		} `json:"edit"`
	}
	c.call(url.Values{"action": {"edit"}, "title": {title}, "text": {text}, "token": {c.csrf}, "bot": {"1"}}, &r)
	if r.Edit.Result != "Success" {
		c.t.Fatalf("edit %s: %s", title, r.Edit.Result)
	}
	return strconv.FormatInt(r.Edit.PageID, 10)
}

func (c *wikiClient) delete(title string) {
	c.t.Helper()
	c.call(url.Values{"action": {"delete"}, "title": {title}, "token": {c.csrf}, "reason": {"test"}}, nil)
}
