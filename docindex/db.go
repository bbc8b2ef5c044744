package docindex

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/migrate"

	"github.com/docindex/docindex/migrations"
)

// maxConns bounds the pool of OpenDB.
const maxConns = 32

// OpenDB opens a connection pool to PostgreSQL through pgx and wraps it in bun.
// Library users who already have a *bun.DB over pgdialect pass theirs to New instead.
func OpenDB(ctx context.Context, url string) (*bun.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	sqldb := stdlib.OpenDB(*cfg)
	// As many idle connections as open ones: under load (dozens of workers, uploads, the
	// merge) a smaller idle pool closes connections that are needed again a moment later, and
	// each new one is a PostgreSQL process to fork, set up and tear down. Idle ones go after
	// ConnMaxIdleTime.
	sqldb.SetMaxOpenConns(maxConns)
	sqldb.SetMaxIdleConns(maxConns)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	db := bun.NewDB(sqldb, pgdialect.New())
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return db, nil
}

// migrationLock is the advisory-lock key that serializes migrations of servers starting together.
const migrationLock = 0x646f63696e646578 // "docindex"

// Migrate applies the pending migrations of the docindex schema. Two processes that migrate at
// once are serialized by a session advisory lock; a migration is marked applied only when it
// succeeded, so a failed one runs again on the next start.
func Migrate(ctx context.Context, db *bun.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", migrationLock); err != nil {
		return fmt.Errorf("migrate: take lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", migrationLock) //nolint:errcheck
	if _, err := conn.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
		return fmt.Errorf("migrate: the pgvector extension is required: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS docindex"); err != nil {
		return fmt.Errorf("migrate: create schema: %w", err)
	}
	m := migrate.NewMigrator(db, migrations.Migrations,
		migrate.WithTableName("docindex.migrations"),
		migrate.WithLocksTableName("docindex.migration_locks"),
		migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("migrate: init: %w", err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
