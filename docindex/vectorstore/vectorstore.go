package vectorstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
)

// Schema holds every chunk table, next to the library's own tables.
const Schema = "docindex"

const (
	// maxVectorIndexDims is pgvector's limit for an HNSW index on vector; past it the index is
	// built on a halfvec cast, whose limit is maxHalfvecIndexDims.
	maxVectorIndexDims  = 2000
	maxHalfvecIndexDims = 4000
)

// Table is the chunk table of a collection, in schema "docindex": "chunks_" + the collection
// id's 32 hex digits without dashes. It holds the chunks that are in the HNSW index.
func Table(collectionID uuid.UUID) string {
	return "chunks_" + strings.ReplaceAll(collectionID.String(), "-", "")
}

// DeltaTable is the collection's table of chunks written but not yet merged into the HNSW index:
// Table + "_delta", same columns, no vector index (see the package documentation).
func DeltaTable(collectionID uuid.UUID) string { return Table(collectionID) + "_delta" }

// Relation is a FROM item, to be given an alias, holding every chunk of a collection: the indexed
// table and the delta, UNION ALL. Both tables must exist.
func Relation(collectionID uuid.UUID) string {
	return fmt.Sprintf("(SELECT * FROM %s UNION ALL SELECT * FROM %s)", qualified(collectionID), qualifiedDelta(collectionID))
}

// qualified is the schema-qualified table name. Table yields only [a-z0-9_], so the name needs
// no quoting; it is quoted anyway so the SQL reads the same as bun's identifiers.
func qualified(collectionID uuid.UUID) bun.Safe {
	return bun.Safe(`"` + Schema + `"."` + Table(collectionID) + `"`)
}

func qualifiedDelta(collectionID uuid.UUID) bun.Safe {
	return bun.Safe(`"` + Schema + `"."` + DeltaTable(collectionID) + `"`)
}

// pendingTable records the files whose chunks are in a delta table (migration chunk_pending).
const pendingTable = "docindex.chunk_pending"

// Store reads and writes the chunk tables of one database.
type Store struct {
	db         *bun.DB
	maxPending int
	bulkMin    int
	// merge is poked (without blocking) when Replace wrote into a delta, so that a Run loop of
	// the same process merges at once instead of at its next poll.
	merge chan struct{}
}

// DefaultMaxPending is the default bound on the chunks of one collection waiting in its delta
// table. Search scans the delta exactly (no index), so the bound keeps that scan to tens of
// milliseconds; past it Replace writes into the indexed table directly, at the indexed speed.
const DefaultMaxPending = 20_000

// Option configures a Store.
type Option func(*Store)

// WithMaxPending sets the bound on the unmerged chunks of a collection (DefaultMaxPending). 0
// turns deferred indexing off: every Replace writes into the indexed table.
func WithMaxPending(n int) Option {
	return func(s *Store) { s.maxPending = max(n, 0) }
}

// DefaultBulkMerge is the default number of unmerged chunks from which Run rebuilds a
// collection's HNSW index instead of inserting them one by one (see WithBulkMerge).
const DefaultBulkMerge = 1000

// WithBulkMerge sets when Run merges a collection by rebuilding its HNSW index: when at least n
// chunks wait in its delta and no more than that many are indexed already (DefaultBulkMerge). A
// bulk build costs a fraction of inserting the same rows one by one (measured: about 0.6 ms per
// chunk against 2 to 5 ms), so the first upload into a collection, or one that doubles it, is
// merged that way. 0 turns it off.
func WithBulkMerge(n int) Option {
	return func(s *Store) { s.bulkMin = max(n, 0) }
}

// New returns a Store over db. Replace uses COPY when db runs over pgx's stdlib driver (as
// docindex.OpenDB opens it) and falls back to batched INSERTs over any other driver.
func New(db *bun.DB, opts ...Option) *Store {
	s := &Store{db: db, maxPending: DefaultMaxPending, bulkMin: DefaultBulkMerge, merge: make(chan struct{}, 1)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Provision creates the chunk table of a collection and its delta table with their indexes,
// unless they exist. The language is a text search configuration (regconfig) the caller has
// checked against pg_ts_config; it is passed as a quoted literal, never spliced. An existing table
// is left as it is, whatever its dimension or language: RebuildFTS changes the language. A
// collection provisioned before delta tables existed gets its delta here.
func (s *Store) Provision(ctx context.Context, tx bun.IDB, collectionID uuid.UUID, dims int, language string) error {
	if dims < 1 || dims > maxHalfvecIndexDims {
		return fmt.Errorf("vectorstore: provision: %d dimensions: want 1 to %d", dims, maxHalfvecIndexDims)
	}
	if language == "" {
		return errors.New("vectorstore: provision: no search language")
	}
	t, name := qualified(collectionID), Table(collectionID)
	d, dname := qualifiedDelta(collectionID), DeltaTable(collectionID)
	// The two tables differ in tsv only: every row enters through the delta, where the server
	// computes the tsvector, and moves to the indexed table with it (see the package
	// documentation), so the language is part of the delta's definition alone.
	const columns = `(
			id        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
			file_id   uuid NOT NULL,
			ordinal   integer NOT NULL DEFAULT 0,
			text      text NOT NULL DEFAULT '',
			pages     integer[],
			metadata  jsonb NOT NULL DEFAULT '{}',
			embedding vector(?),
			tsv       tsvector `
	stmts := []struct {
		query string
		args  []any
	}{
		{`CREATE TABLE IF NOT EXISTS ? ` + columns + `)`, []any{t, dims}},
		{`CREATE INDEX IF NOT EXISTS ? ON ? (file_id)`, []any{bun.Ident(name + "_file_idx"), t}},
		{`CREATE INDEX IF NOT EXISTS ? ON ? USING hnsw (?)`, []any{bun.Ident(name + "_embedding_idx"), t, indexedEmbedding(dims)}},
		{`CREATE INDEX IF NOT EXISTS ? ON ? USING gin (tsv)`, []any{bun.Ident(name + "_tsv_idx"), t}},
		// Every row of the delta is deleted again by the merge: vacuum it after a thousand dead
		// rows rather than after a fifth of the table, so the exact scans of Search stay short.
		{`CREATE TABLE IF NOT EXISTS ? ` + columns + `GENERATED ALWAYS AS (to_tsvector(?::regconfig, text)) STORED)
			WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
			autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000)`, []any{d, dims, language}},
		{`CREATE INDEX IF NOT EXISTS ? ON ? (file_id)`, []any{bun.Ident(dname + "_file_idx"), d}},
		{`CREATE INDEX IF NOT EXISTS ? ON ? USING gin (tsv)`, []any{bun.Ident(dname + "_tsv_idx"), d}},
	}
	for _, st := range stmts {
		if _, err := tx.ExecContext(ctx, st.query, st.args...); err != nil {
			return fmt.Errorf("vectorstore: provision %s: %w", name, err)
		}
	}
	return nil
}

// indexedEmbedding is the HNSW index element for a dimension: the column itself, or its
// halfvec cast past pgvector's limit for vector.
func indexedEmbedding(dims int) bun.Safe {
	if dims > maxVectorIndexDims {
		return bun.Safe(fmt.Sprintf("(embedding::halfvec(%d)) halfvec_cosine_ops", dims))
	}
	return "embedding vector_cosine_ops"
}

// Drop removes the chunk tables of a collection and its merge bookkeeping, if there are any.
func (s *Store) Drop(ctx context.Context, tx bun.IDB, collectionID uuid.UUID) error {
	if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS ?, ?", qualified(collectionID), qualifiedDelta(collectionID)); err != nil {
		return fmt.Errorf("vectorstore: drop %s: %w", Table(collectionID), err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+pendingTable+" WHERE collection_id = ?", collectionID); err != nil {
		return fmt.Errorf("vectorstore: drop %s: %w", Table(collectionID), err)
	}
	return nil
}

// DeleteFile removes the chunks of one file, merged or not. A collection without a table has no
// chunks, so that is no error. The existence is checked first rather than the error caught,
// because a failed statement would abort the caller's transaction. It takes the file's advisory
// lock, as Replace and the merge do, so it never runs between a merge's two steps.
func (s *Store) DeleteFile(ctx context.Context, tx bun.IDB, collectionID, fileID uuid.UUID) error {
	ok, err := exists(ctx, tx, collectionID)
	if err != nil || !ok {
		return err
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", lockKey(collectionID, fileID)); err != nil {
		return fmt.Errorf("vectorstore: delete chunks of file %s: %w", fileID, err)
	}
	// The delta first: see Replace.
	if _, err := tx.ExecContext(ctx, "DELETE FROM ? WHERE file_id = ?", qualifiedDelta(collectionID), fileID); err != nil {
		return fmt.Errorf("vectorstore: delete chunks of file %s: %w", fileID, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM ? WHERE file_id = ?", qualified(collectionID), fileID); err != nil {
		return fmt.Errorf("vectorstore: delete chunks of file %s: %w", fileID, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+pendingTable+" WHERE collection_id = ? AND file_id = ?", collectionID, fileID); err != nil {
		return fmt.Errorf("vectorstore: delete chunks of file %s: %w", fileID, err)
	}
	return nil
}

// exists reports whether the collection has its chunk tables. Provision creates both in one
// transaction (and the chunk_pending migration gave older tables their delta), so one stands for
// both.
func exists(ctx context.Context, db bun.IDB, collectionID uuid.UUID) (bool, error) {
	var ok bool
	err := db.QueryRowContext(ctx, "SELECT to_regclass(?) IS NOT NULL", Schema+"."+Table(collectionID)).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("vectorstore: look up %s: %w", Table(collectionID), err)
	}
	return ok, nil
}

// RebuildFTS recomputes the tsvector of every chunk with a new language (a regconfig the caller
// has validated), after a collection's searchLanguage changed. The generated column is dropped
// and added again with the new expression in one ALTER TABLE and one transaction, which rewrites
// the table and rebuilds its indexes; see the package documentation for why. A collection without
// a table has nothing to rebuild.
func (s *Store) RebuildFTS(ctx context.Context, collectionID uuid.UUID, language string) error {
	if language == "" {
		return errors.New("vectorstore: rebuild full-text index: no search language")
	}
	t, name := qualified(collectionID), Table(collectionID)
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		ok, err := exists(ctx, tx, collectionID)
		if err != nil || !ok {
			return err
		}
		// The rewrite rebuilds the HNSW index in bulk; a graph that does not fit in
		// maintenance_work_mem builds many times slower, so give this transaction room.
		if _, err := tx.ExecContext(ctx, "SELECT set_config('maintenance_work_mem', ?, true)", rebuildWorkMem); err != nil {
			return err
		}
		// The indexed table's tsv is a plain column: recompute it in one rewrite, which also
		// rebuilds the indexes. The delta's is generated: its expression names the language.
		if _, err := tx.ExecContext(ctx, `ALTER TABLE ? ALTER COLUMN tsv TYPE tsvector USING to_tsvector(?::regconfig, text)`,
			t, language); err != nil {
			return err
		}
		d := qualifiedDelta(collectionID)
		if _, err := tx.ExecContext(ctx, `ALTER TABLE ? DROP COLUMN tsv,
			ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector(?::regconfig, text)) STORED`, d, language); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "CREATE INDEX ? ON ? USING gin (tsv)", bun.Ident(DeltaTable(collectionID)+"_tsv_idx"), d)
		return err
	})
	if err != nil {
		return fmt.Errorf("vectorstore: rebuild full-text index of %s as %q: %w", name, language, err)
	}
	return nil
}

// rebuildWorkMem is the maintenance_work_mem of the RebuildFTS transaction: enough for the HNSW
// graph of a few hundred thousand chunks of 1536 dimensions, and only for as long as it runs.
const rebuildWorkMem = "512MB"

// Size is the pg_total_relation_size (heap, TOAST and indexes) of the collection's chunk table
// and delta table in bytes, 0 when the collection has no table.
func (s *Store) Size(ctx context.Context, collectionID uuid.UUID) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, "SELECT "+SizeSQL("?", "?"),
		Schema+"."+Table(collectionID), Schema+"."+DeltaTable(collectionID)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("vectorstore: size of %s: %w", Table(collectionID), err)
	}
	return n, nil
}

// SizeSQL is the SQL expression of the bytes a collection's chunks take, given SQL expressions
// of the qualified names of its two tables (as text): for listings that compute it per row.
func SizeSQL(table, delta string) string {
	return fmt.Sprintf("coalesce(pg_total_relation_size(to_regclass(%s)), 0) + coalesce(pg_total_relation_size(to_regclass(%s)), 0)", table, delta)
}

// Count is the number of chunks of the collection, or of one file when fileID is valid, merged
// or not; 0 when the collection has no table.
func (s *Store) Count(ctx context.Context, collectionID uuid.UUID, fileID uuid.NullUUID) (int, error) {
	var n int
	var err error
	all := bun.Safe(Relation(collectionID))
	if fileID.Valid {
		err = s.db.QueryRowContext(ctx, "SELECT count(*) FROM ? k WHERE file_id = ?", all, fileID.UUID).Scan(&n)
	} else {
		err = s.db.QueryRowContext(ctx, "SELECT count(*) FROM ? k", all).Scan(&n)
	}
	if isUndefinedTable(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("vectorstore: count chunks in %s: %w", Table(collectionID), err)
	}
	return n, nil
}

// isUndefinedTable reports PostgreSQL's undefined_table (42P01), by which a read of a collection
// that has no table yet (or no longer) is answered as empty.
func isUndefinedTable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "42P01"
	}
	// Other drivers (bun's pgdriver) put the SQLSTATE in the message.
	return err != nil && strings.Contains(err.Error(), "42P01")
}
