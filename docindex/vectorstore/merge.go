package vectorstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Merge moves the chunks of up to maxFiles files from delta tables into their collections'
// indexed tables, oldest first, one file per transaction, and returns the number of files moved.
// Rows keep their ids, so a chunk id a search returned stays valid. Many processes may merge at
// once: a file whose advisory lock is taken (a Replace or another merge is at it) is left for
// later. A file's rows are moved in one INSERT ... SELECT, so the HNSW insert of every row, the
// cost that Replace no longer pays, is paid here.
func (s *Store) Merge(ctx context.Context, maxFiles int) (int, error) {
	return s.mergeOver(ctx, maxFiles, 0)
}

// mergeOver is Merge limited to the collections with more than minPending unmerged chunks.
func (s *Store) mergeOver(ctx context.Context, maxFiles, minPending int) (int, error) {
	type pendingFile struct {
		CollectionID uuid.UUID `bun:"collection_id"`
		FileID       uuid.UUID `bun:"file_id"`
	}
	q := s.db.NewRaw("SELECT collection_id, file_id FROM "+pendingTable+" ORDER BY queued_at LIMIT ?", maxFiles)
	if minPending > 0 {
		q = s.db.NewRaw("SELECT collection_id, file_id FROM "+pendingTable+" WHERE collection_id IN (SELECT collection_id FROM "+
			pendingTable+" GROUP BY collection_id HAVING sum(chunks) > ?) ORDER BY queued_at LIMIT ?", minPending, maxFiles)
	}
	var files []pendingFile
	if err := q.Scan(ctx, &files); err != nil {
		return 0, fmt.Errorf("vectorstore: merge: list pending files: %w", err)
	}
	moved := 0
	for _, f := range files {
		ok, err := s.mergeFile(ctx, f.CollectionID, f.FileID)
		if err != nil {
			return moved, fmt.Errorf("vectorstore: merge chunks of file %s into %s: %w", f.FileID, Table(f.CollectionID), err)
		}
		if ok {
			moved++
		}
	}
	return moved, nil
}

// mergeFile moves one file's delta rows. ok is false when the file was busy or no longer pending.
func (s *Store) mergeFile(ctx context.Context, collectionID, fileID uuid.UUID) (ok bool, err error) {
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var locked bool
		if err := tx.QueryRowContext(ctx, "SELECT pg_try_advisory_xact_lock(?)", lockKey(collectionID, fileID)).Scan(&locked); err != nil || !locked {
			return err
		}
		// Under the lock no Replace of the file is in flight; the row may be gone all the same
		// (DeleteFile, a Replace that went to the indexed table, another merge).
		res, err := tx.ExecContext(ctx, "DELETE FROM "+pendingTable+" WHERE collection_id = ? AND file_id = ?", collectionID, fileID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		_, err = tx.ExecContext(ctx, moveSQL(collectionID, "?"), fileID)
		ok = err == nil
		return err
	})
	if isUndefinedTable(err) {
		// The collection was dropped with the file still pending (Drop removes its rows, so only
		// a race with Drop gets here): nothing is left to merge.
		_, err = s.db.ExecContext(ctx, "DELETE FROM "+pendingTable+" WHERE collection_id = ? AND file_id = ?", collectionID, fileID)
		return false, err
	}
	return ok, err
}

// moveSQL moves the rows of the file whose id is the placeholder arg from the delta into the
// indexed table, ids and tsvectors included (the tsvector is computed once, by the delta's
// generated column).
func moveSQL(collectionID uuid.UUID, arg string) string {
	return fmt.Sprintf(`WITH moved AS (
			DELETE FROM %s WHERE file_id = %s RETURNING id, file_id, ordinal, text, pages, metadata, embedding, tsv)
		INSERT INTO %s (id, file_id, ordinal, text, pages, metadata, embedding, tsv)
		SELECT id, file_id, ordinal, text, pages, metadata, embedding, tsv FROM moved`,
		qualifiedDelta(collectionID), arg, qualified(collectionID))
}

// Pending is the number of chunks waiting in delta tables, of one collection or, when
// collectionID is the zero UUID, of all.
func (s *Store) Pending(ctx context.Context, collectionID uuid.UUID) (int, error) {
	q := s.db.NewRaw("SELECT coalesce(sum(chunks), 0) FROM " + pendingTable)
	if collectionID != uuid.Nil {
		q = s.db.NewRaw("SELECT coalesce(sum(chunks), 0) FROM "+pendingTable+" WHERE collection_id = ?", collectionID)
	}
	var n int
	if err := q.Scan(ctx, &n); err != nil {
		return 0, fmt.Errorf("vectorstore: pending chunks: %w", err)
	}
	return n, nil
}

// poke wakes this process's Run loop, if any, without waiting.
func (s *Store) poke() {
	select {
	case s.merge <- struct{}{}:
	default:
	}
}

// Wake makes a Run loop of this Store look for work now rather than at its next poll: for a
// caller whose busy function (WithYield) just turned false.
func (s *Store) Wake() { s.poke() }

const (
	// mergeBatch is the number of files Run merges between two checks of its context.
	mergeBatch = 16
	// minRound is the least time between two of Run's looks for work.
	minRound = 50 * time.Millisecond
)

// RunOption configures Run.
type RunOption func(*runConfig)

type runConfig struct {
	poll  time.Duration
	onErr func(error)
	busy  func() bool
}

// WithPoll sets how often Run looks for chunks that other processes deferred (default 2s).
func WithPoll(d time.Duration) RunOption {
	return func(c *runConfig) {
		if d > 0 {
			c.poll = d
		}
	}
}

// WithErrorHandler receives the errors of Run's merges, which are retried at the next poll.
func WithErrorHandler(f func(error)) RunOption { return func(c *runConfig) { c.onErr = f } }

// WithYield makes the merge give way to indexing: while busy reports true, Run merges only the
// collections whose unmerged chunks passed half the store's bound, so that the graph inserts do not
// take the CPU and I/O that the jobs writing chunks are waiting for, yet no delta reaches its
// bound while jobs keep coming. Call Wake when busy turns false.
func WithYield(busy func() bool) RunOption { return func(c *runConfig) { c.busy = busy } }

// Run merges delta tables into the indexed tables until ctx ends: at once after a Replace of this
// Store deferred rows (or Wake), and every poll otherwise (for Replaces of other processes). Every
// process that writes chunks should run it; several may.
func (s *Store) Run(ctx context.Context, opts ...RunOption) {
	c := runConfig{poll: 2 * time.Second}
	for _, o := range opts {
		o(&c)
	}
	report := func(err error) {
		if c.onErr != nil && !errors.Is(err, context.Canceled) {
			c.onErr(err)
		}
	}
	t := time.NewTimer(0)
	defer t.Stop()
	var lastRound, lastRepair time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.merge:
		case <-t.C:
		}
		// Every Replace pokes: under a stream of writes, look at most every minRound, and for
		// broken indexes (a catalog scan) at most every poll.
		if wait := minRound - time.Since(lastRound); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		lastRound = time.Now()
		if time.Since(lastRepair) >= c.poll {
			lastRepair = time.Now()
			if err := s.repair(ctx); err != nil {
				report(err)
			}
		}
		for ctx.Err() == nil {
			minPending := 0
			if c.busy != nil && c.busy() {
				minPending = max(s.maxPending/2, 1)
			}
			if _, err := s.bulkMerge(ctx, minPending); err != nil {
				report(err)
				break
			}
			n, err := s.mergeOver(ctx, mergeBatch, minPending)
			if err != nil {
				report(err)
				break
			}
			if n == 0 {
				break
			}
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(c.poll)
	}
}

// bulkKey is the session advisory lock of one collection's index rebuild: one process at a time.
func bulkKey(collectionID uuid.UUID) int64 { return lockKey(collectionID, uuid.Nil) ^ 0x62756c6b }

// indexName is the name of a collection's HNSW index.
func indexName(collectionID uuid.UUID) string { return Table(collectionID) + "_embedding_idx" }

// bulkMerge merges, by rebuilding their HNSW index, the collections with at least bulkMin (and
// more than minPending) unmerged chunks and no more chunks indexed than waiting, and returns how
// many it rebuilt.
func (s *Store) bulkMerge(ctx context.Context, minPending int) (int, error) {
	if s.bulkMin == 0 {
		return 0, nil
	}
	type candidate struct {
		CollectionID uuid.UUID `bun:"collection_id"`
		Pending      int       `bun:"pending"`
	}
	var cs []candidate
	if err := s.db.NewRaw("SELECT collection_id, sum(chunks) AS pending FROM "+pendingTable+
		" GROUP BY collection_id HAVING sum(chunks) >= ? AND sum(chunks) > ?", s.bulkMin, minPending).Scan(ctx, &cs); err != nil {
		return 0, fmt.Errorf("vectorstore: merge: list collections: %w", err)
	}
	rebuilt := 0
	for _, c := range cs {
		// Counting stops past the pending count, so a large table costs no full count.
		var indexed int
		err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM ? LIMIT ?) k", qualified(c.CollectionID), c.Pending+1).Scan(&indexed)
		if isUndefinedTable(err) {
			continue // dropped meanwhile; mergeFile cleans up its pending rows
		}
		if err != nil {
			return rebuilt, fmt.Errorf("vectorstore: merge: size of %s: %w", Table(c.CollectionID), err)
		}
		if indexed > c.Pending {
			continue
		}
		ok, err := s.rebuild(ctx, c.CollectionID, true)
		if err != nil {
			return rebuilt, err
		}
		if ok {
			rebuilt++
		}
	}
	return rebuilt, nil
}

// rebuild (re)builds a collection's HNSW index in bulk under the collection's rebuild lock; with
// move, it first drops the index and moves every file pending at that moment into the indexed
// table, without graph inserts. The index is built with CREATE INDEX CONCURRENTLY, so Replace,
// the merge and searches go on meanwhile (searches of the indexed table scan it exactly until
// the index is ready). ok is false when another process holds the lock.
//
// A process that dies between the drop and the build leaves the table without its index, or with
// an invalid one (a CREATE INDEX CONCURRENTLY that failed); repair finds such tables and rebuilds.
func (s *Store) rebuild(ctx context.Context, collectionID uuid.UUID, move bool) (ok bool, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	wrap := func(err error) error {
		return fmt.Errorf("vectorstore: rebuild the vector index of %s: %w", Table(collectionID), err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock(?)", bulkKey(collectionID)).Scan(&ok); err != nil || !ok {
		return false, err
	}
	// A session lock outlives a cancelled context: release it whatever happens.
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", bulkKey(collectionID)) //nolint:errcheck
	idx := bun.Ident(Schema + "." + indexName(collectionID))
	var dims int
	err = conn.QueryRowContext(ctx, "SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass(?) AND attname = 'embedding'",
		Schema+"."+Table(collectionID)).Scan(&dims)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // dropped meanwhile
	}
	if err != nil {
		return false, wrap(err)
	}
	if move {
		if _, err := conn.ExecContext(ctx, "DROP INDEX CONCURRENTLY IF EXISTS ?", idx); err != nil {
			return false, wrap(err)
		}
		var files []uuid.UUID
		if err := conn.NewRaw("SELECT file_id FROM "+pendingTable+" WHERE collection_id = ?", collectionID).Scan(ctx, &files); err != nil {
			return false, wrap(err)
		}
		for _, f := range files {
			if _, err := s.mergeFile(ctx, collectionID, f); err != nil {
				return false, wrap(err)
			}
		}
	} else {
		// Repair: an invalid index is dropped first, since CREATE INDEX ... IF NOT EXISTS
		// would keep it.
		var valid sql.NullBool
		err := conn.QueryRowContext(ctx, "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(?)", Schema+"."+indexName(collectionID)).Scan(&valid)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, wrap(err)
		}
		if valid.Valid && valid.Bool {
			return true, nil
		}
		if valid.Valid {
			if _, err := conn.ExecContext(ctx, "DROP INDEX CONCURRENTLY IF EXISTS ?", idx); err != nil {
				return false, wrap(err)
			}
		}
	}
	// Room for the graph in memory: a build that spills is many times slower.
	if _, err := conn.ExecContext(ctx, "SET maintenance_work_mem = '"+rebuildWorkMem+"'"); err != nil {
		return false, wrap(err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "RESET maintenance_work_mem") //nolint:errcheck
	if _, err := conn.ExecContext(ctx, "CREATE INDEX CONCURRENTLY IF NOT EXISTS ? ON ? USING hnsw (?)",
		bun.Ident(indexName(collectionID)), qualified(collectionID), indexedEmbedding(dims)); err != nil {
		// A failed concurrent build leaves an invalid index behind; drop it so that repair
		// starts clean.
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "DROP INDEX CONCURRENTLY IF EXISTS ?", idx)
		return false, wrap(err)
	}
	return true, nil
}

// repair rebuilds the HNSW index of every chunk table that lacks a valid one: the trace of a
// rebuild that did not finish. Tables being rebuilt right now are skipped (their lock is held).
func (s *Store) repair(ctx context.Context) error {
	var tables []string
	err := s.db.NewRaw(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = ? AND c.relkind = 'r' AND c.relname ~ '^chunks_[0-9a-f]{32}$'
		AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisvalid
			AND i.indexrelid = to_regclass(quote_ident(n.nspname) || '.' || quote_ident(c.relname || '_embedding_idx')))`, Schema).
		Scan(ctx, &tables)
	if err != nil {
		return fmt.Errorf("vectorstore: look for chunk tables without their vector index: %w", err)
	}
	for _, t := range tables {
		id, err := uuid.Parse(t[len("chunks_"):])
		if err != nil {
			continue
		}
		if _, err := s.rebuild(ctx, id, false); err != nil {
			return err
		}
	}
	return nil
}
