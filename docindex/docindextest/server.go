package docindextest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bunrouter"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/auth"
	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/httpapi"
	"github.com/docindex/docindex/docindex/store"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/connector"
)

// Secret is the HS256 secret of servers made by NewServer.
const Secret = "docindextest-secret"

// SecretKey is the key that seals the secret settings of data sources on servers made by
// NewServer (pass docindex.WithSecretKey("") for a server without one).
const SecretKey = "docindextest-secret-key"

// Connectors is a fixed set of source connectors by type, for docindex.WithConnectors:
//
//	docindextest.NewServer(t, docindex.WithConnectors(docindextest.Connectors{"git": c}))
type Connectors map[string]connector.Connector

// Connector returns the connector of a source type.
func (c Connectors) Connector(typ string) (connector.Connector, bool) {
	conn, ok := c[typ]
	return conn, ok
}

// ConnectorTypes lists the types, sorted.
func (c Connectors) ConnectorTypes() []string {
	out := make([]string, 0, len(c))
	for t := range c {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Server is a docindex HTTP server on a fresh database, for tests.
type Server struct {
	t   testing.TB
	URL string
	DB  *bun.DB
	Svc *docindex.Service
	// BlobDir is the directory of the default blob store (unused when the caller passes its own
	// docindex.WithBlobStore).
	BlobDir string
	// Check, when set, is called with every exchange Do sees (the contract test sets it).
	Check func(req *http.Request, status int, header http.Header, body []byte) error
}

// NewServer starts a server with HS256 tokens (Secret), a secret key for source settings
// (SecretKey) and a blob store in a temporary directory (BlobDir) on a new database. Extra service
// options (embedders, connectors, another blob store, upload limit, ...) come after the defaults
// and override them. No workers run until StartWorkers.
func NewServer(t testing.TB, opts ...docindex.Option) *Server {
	t.Helper()
	db := NewDB(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("DOCINDEX_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	blobDir := t.TempDir()
	blobs, err := blob.NewDir(blobDir)
	if err != nil {
		t.Fatalf("docindextest: blob store: %v", err)
	}
	t.Cleanup(func() { blobs.Close() })
	base := []docindex.Option{docindex.WithLogger(log), docindex.WithVerifier(auth.NewHS256([]byte(Secret))),
		docindex.WithBlobStore(blobs), docindex.WithSecretKey(SecretKey)}
	svc, err := docindex.New(db, append(base, opts...)...)
	if err != nil {
		t.Fatalf("docindextest: new service: %v", err)
	}
	router := bunrouter.New()
	httpapi.Mount(router.NewGroup(""), svc, httpapi.WithLogger(log))
	ts := httptest.NewServer(router)
	t.Cleanup(ts.Close)
	return &Server{t: t, URL: ts.URL, DB: db, Svc: svc, BlobDir: blobDir}
}

// StartWorkers runs a worker pool on the service's queue until stop is called or the test ends
// (whichever comes first; stop waits for the pool to return). h runs the jobs: nil means the
// service itself, the real indexing pipeline; tests wrap it to hold a job while they look at it.
// The pool polls every 50ms (notifications wake it sooner) and lets running jobs finish for 5s
// on stop; opts come after these defaults. The service's index merge runs beside it, as in the
// server, so chunks move into the HNSW index while tests search them.
func (s *Server) StartWorkers(h worker.Handler, opts ...worker.Option) (stop func()) {
	s.t.Helper()
	if h == nil {
		h = s.Svc
	}
	base := []worker.Option{worker.WithWorkers(2), worker.WithPoll(50 * time.Millisecond), worker.WithGrace(5 * time.Second)}
	pool := worker.New(s.Svc.Queue(), h, append(base, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pool.Run(ctx) }()
	merged := make(chan struct{})
	go func() {
		defer close(merged)
		s.Svc.RunIndexMerge(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					s.t.Errorf("docindextest: worker pool: %v", err)
				}
			case <-time.After(30 * time.Second):
				s.t.Errorf("docindextest: worker pool did not stop within 30s")
			}
			<-merged
		})
	}
	// Registered after the database's cleanup, so it runs before the database is dropped.
	s.t.Cleanup(stop)
	return stop
}

// WaitIdle waits until the job queue holds no queued or running job (the jobs a sync or an
// upload queued have run), failing the test after timeout. Workers must run (StartWorkers).
func (s *Server) WaitIdle(timeout time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var busy int
		err := s.DB.QueryRowContext(context.Background(),
			"SELECT count(*) FROM docindex.jobs WHERE status IN ('queued', 'running')").Scan(&busy)
		if err != nil {
			s.t.Fatalf("docindextest: count busy jobs: %v", err)
		}
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("docindextest: %d jobs still queued or running after %s", busy, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FileUpload is a multipart body for POST /files. Parts are written in the order the server
// needs them: collectionId, metadata, then the file; an empty field is left out, and so is the
// file part when Body is nil.
type FileUpload struct {
	CollectionID string
	Metadata     string // a JSON object, sent as is
	Name         string // the file name of the file part
	ContentType  string // of the file part; none is sent when empty (the server sniffs)
	Body         io.Reader
}

// Upload sends u to POST /files with the token.
func (s *Server) Upload(token string, u FileUpload) *Response {
	s.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	field := func(name, value string) {
		if value == "" {
			return
		}
		if err := mw.WriteField(name, value); err != nil {
			s.t.Fatalf("docindextest: multipart field %s: %v", name, err)
		}
	}
	field("collectionId", u.CollectionID)
	field("metadata", u.Metadata)
	if u.Body != nil {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", multipart.FileContentDisposition("file", u.Name))
		if u.ContentType != "" {
			h.Set("Content-Type", u.ContentType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			s.t.Fatalf("docindextest: multipart file part: %v", err)
		}
		if _, err := io.Copy(w, u.Body); err != nil {
			s.t.Fatalf("docindextest: multipart file part: %v", err)
		}
	}
	if err := mw.Close(); err != nil {
		s.t.Fatalf("docindextest: multipart: %v", err)
	}
	req, err := http.NewRequest("POST", s.URL+"/files", &buf)
	if err != nil {
		s.t.Fatalf("docindextest: %v", err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return s.Send(req)
}

// User is a test identity: a JWT for it is minted on demand.
type User struct {
	Email  string
	Name   string
	Groups []string
	Admin  bool
}

// Token mints an HS256 JWT for u, valid for an hour.
func (s *Server) Token(u User) string {
	s.t.Helper()
	c := auth.Claims{Subject: "sub-" + strings.ToLower(u.Email), Email: u.Email, Name: u.Name, Groups: u.Groups}
	if u.Admin {
		c.Roles = []string{auth.AdminRole}
	}
	tok, err := auth.MintHS256([]byte(Secret), c, time.Hour)
	if err != nil {
		s.t.Fatalf("docindextest: mint token: %v", err)
	}
	return tok
}

// Key creates an API key with the given permissions for u (created when missing) and returns it.
func (s *Server) Key(u User, perms ...string) string {
	s.t.Helper()
	ctx := context.Background()
	usr, err := s.Svc.EnsureUser(ctx, u.Email, u.Name, u.Admin)
	if err != nil {
		s.t.Fatalf("docindextest: ensure user: %v", err)
	}
	k, err := s.Svc.IssueAPIKey(ctx, usr.ID, "test", perms)
	if err != nil {
		s.t.Fatalf("docindextest: issue key: %v", err)
	}
	return k.Key
}

// UserRow returns the stored user with this e-mail.
func (s *Server) UserRow(email string) *store.User {
	s.t.Helper()
	u := &store.User{}
	if err := s.DB.NewSelect().Model(u).Where("lower(email) = lower(?)", email).Scan(context.Background()); err != nil {
		s.t.Fatalf("docindextest: user %s: %v", email, err)
	}
	return u
}

// Response is an answered request.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it is not JSON of that shape.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode response %q: %v", r.Body, err)
	}
}

// Map decodes the body as a JSON object.
func (r *Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Do sends a request with an optional bearer token; body is JSON-encoded unless it is an
// io.Reader or a string (sent as is).
func (s *Server) Do(method, path, token string, body any) *Response {
	s.t.Helper()
	var rd io.Reader
	ctype := "application/json"
	switch b := body.(type) {
	case nil:
	case io.Reader:
		rd = b
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			s.t.Fatalf("docindextest: encode body: %v", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		s.t.Fatalf("docindextest: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return s.Send(req)
}

// Send sends a prepared request (multipart uploads and the like).
func (s *Server) Send(req *http.Request) *Response {
	s.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("docindextest: %s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatalf("docindextest: read body: %v", err)
	}
	if s.Check != nil {
		if err := s.Check(req, res.StatusCode, res.Header, raw); err != nil {
			s.t.Errorf("contract: %s %s -> %d: %v", req.Method, req.URL.Path, res.StatusCode, err)
		}
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: raw}
}
