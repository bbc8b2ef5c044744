package docindextest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ory/dockertest/v3"
	"github.com/ory/dockertest/v3/docker"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/migrations"
)

// EnvURL names the variable holding the URL of a PostgreSQL server (with pgvector installed) that
// tests may create databases on.
const EnvURL = "DOCINDEX_TEST_DATABASE_URL"

// The container, when one is needed, is shared by every test of the process: starting one per
// test would cost seconds each. It expires by itself in case the process dies.
var container struct {
	once sync.Once
	url  string
	err  error
}

// ServerURL returns the URL of the test server: the environment's, or a container's.
func ServerURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	container.once.Do(func() { container.url, container.err = startContainer() })
	if container.err != nil {
		t.Fatalf("docindextest: no PostgreSQL for tests: set %s to a server with pgvector "+
			"(`make test` starts one and sets it), or run a Docker engine: %v", EnvURL, container.err)
	}
	return container.url
}

func startContainer() (string, error) {
	pool, err := dockertest.NewPool("")
	if err != nil {
		return "", err
	}
	if err := pool.Client.Ping(); err != nil {
		return "", fmt.Errorf("docker engine: %w", err)
	}
	res, err := pool.RunWithOptions(&dockertest.RunOptions{
		Repository: "pgvector/pgvector", Tag: "pg16",
		Env: []string{"POSTGRES_PASSWORD=docindex", "POSTGRES_DB=docindex"},
	}, func(hc *docker.HostConfig) { hc.AutoRemove = true })
	if err != nil {
		return "", err
	}
	_ = res.Expire(1800)
	u := fmt.Sprintf("postgres://postgres:docindex@%s/docindex?sslmode=disable", res.GetHostPort("5432/tcp"))
	pool.MaxWait = 60 * time.Second
	err = pool.Retry(func() error {
		db, err := docindex.OpenDB(context.Background(), u)
		if err != nil {
			return err
		}
		return db.Close()
	})
	return u, err
}

// NewDB returns a new migrated database on the test server, closed and dropped when t ends.
// Databases are cloned from a template migrated once per schema version, so a call takes tens
// of milliseconds.
func NewDB(t testing.TB) *bun.DB {
	t.Helper()
	ctx := context.Background()
	server := ServerURL(t)
	name, u, err := createDB(ctx, server)
	if err != nil {
		t.Fatalf("docindextest: %v", err)
	}
	db, err := docindex.OpenDB(ctx, u)
	if err != nil {
		t.Fatalf("docindextest: %v", err)
	}
	t.Cleanup(func() {
		db.Close()
		dropDB(server, name)
	})
	return db
}

// URL returns the URL of a new migrated database, for tests that start a server process.
// The database is dropped when t ends.
func URL(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	server := ServerURL(t)
	name, u, err := createDB(ctx, server)
	if err != nil {
		t.Fatalf("docindextest: %v", err)
	}
	t.Cleanup(func() { dropDB(server, name) })
	return u
}

// EmptyURL returns the URL of a new database with nothing migrated (the pgvector extension is
// available), for tests of migrations themselves. It is dropped when t ends.
func EmptyURL(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	server := ServerURL(t)
	admin, err := docindex.OpenDB(ctx, server)
	if err != nil {
		t.Fatalf("docindextest: %v", err)
	}
	defer admin.Close()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "docindex_test_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE ?", bun.Ident(name)); err != nil {
		t.Fatalf("docindextest: create database: %v", err)
	}
	t.Cleanup(func() { dropDB(server, name) })
	return withDB(server, name)
}

// dropDB removes a test database at the end of its test; a failure leaves a stray database, not
// a failed test.
func dropDB(server, name string) {
	ctx := context.Background()
	admin, err := docindex.OpenDB(ctx, server)
	if err != nil {
		return
	}
	defer admin.Close()
	_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS ? WITH (FORCE)", bun.Ident(name))
}

const templateLock = 0x646978746d706c // "dixtmpl"

func createDB(ctx context.Context, server string) (name, dbURL string, err error) {
	admin, err := docindex.OpenDB(ctx, server)
	if err != nil {
		return "", "", err
	}
	defer admin.Close()
	tmpl := "docindex_tmpl_" + migrations.Digest()
	if err := ensureTemplate(ctx, admin, server, tmpl); err != nil {
		return "", "", err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name = "docindex_test_" + hex.EncodeToString(b[:])
	// CREATE DATABASE ... TEMPLATE fails while another session is connected to the template;
	// only ensureTemplate connects to it, under the same lock.
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", templateLock); err != nil {
		return "", "", err
	}
	_, err = conn.ExecContext(ctx, "CREATE DATABASE ? TEMPLATE ?", bun.Ident(name), bun.Ident(tmpl))
	_, _ = conn.ExecContext(ctx, "SELECT pg_advisory_unlock(?)", templateLock)
	if err != nil {
		return "", "", fmt.Errorf("create test database: %w", err)
	}
	return name, withDB(server, name), nil
}

func ensureTemplate(ctx context.Context, admin *bun.DB, server, tmpl string) error {
	conn, err := admin.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", templateLock); err != nil {
		return err
	}
	defer conn.ExecContext(ctx, "SELECT pg_advisory_unlock(?)", templateLock) //nolint:errcheck
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = ?", tmpl).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	building := tmpl + "_build"
	_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS ? WITH (FORCE)", bun.Ident(building))
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE ?", bun.Ident(building)); err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	db, err := docindex.OpenDB(ctx, withDB(server, building))
	if err != nil {
		return err
	}
	err = docindex.Migrate(ctx, db)
	db.Close()
	if err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	// Renamed only once complete, so a test run that died half-way never leaves a broken template.
	if _, err := conn.ExecContext(ctx, "ALTER DATABASE ? RENAME TO ?", bun.Ident(building), bun.Ident(tmpl)); err != nil {
		return fmt.Errorf("finish template: %w", err)
	}
	return nil
}

func withDB(server, name string) string {
	u, err := url.Parse(server)
	if err != nil {
		return server
	}
	u.Path = "/" + strings.TrimPrefix(name, "/")
	return u.String()
}
