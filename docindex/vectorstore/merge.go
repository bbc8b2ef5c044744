package vectorstore

import (
	"context"
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
		_, err = tx.ExecContext(ctx, `WITH moved AS (
				DELETE FROM ? WHERE file_id = ? RETURNING id, file_id, ordinal, text, pages, metadata, embedding)
			INSERT INTO ? (id, file_id, ordinal, text, pages, metadata, embedding)
			SELECT id, file_id, ordinal, text, pages, metadata, embedding FROM moved`,
			qualifiedDelta(collectionID), fileID, qualified(collectionID))
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

// mergeBatch is the number of files Run merges between two checks of its context.
const mergeBatch = 16

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
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.merge:
		case <-t.C:
		}
		for ctx.Err() == nil {
			minPending := 0
			if c.busy != nil && c.busy() {
				minPending = max(s.maxPending/2, 1)
			}
			n, err := s.mergeOver(ctx, mergeBatch, minPending)
			if err != nil {
				if c.onErr != nil && !errors.Is(err, context.Canceled) {
					c.onErr(err)
				}
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
