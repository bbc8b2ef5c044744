package docindex

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/store"
)

// teardownCollection deletes a collection with its files, jobs and provisioned tables.
func (s *Service) teardownCollection(ctx context.Context, c *store.Collection) error {
	return s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := dataset.Drop(ctx, tx, c.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS docindex.?", bun.Ident(chunkTable(c.ID))); err != nil {
			return fmt.Errorf("drop chunk table: %w", err)
		}
		if _, err := tx.NewDelete().Model((*store.File)(nil)).Where("collection_id = ?", c.ID).Exec(ctx); err != nil {
			return fmt.Errorf("delete files: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM docindex.jobs WHERE collection_id = ?", c.ID); err != nil {
			return fmt.Errorf("delete jobs: %w", err)
		}
		if _, err := tx.NewDelete().Model(c).WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("delete collection: %w", err)
		}
		return nil
	})
}

// chunkTable names the chunk table of a rag collection, in the docindex schema.
func chunkTable(id uuid.UUID) string {
	return "chunks_" + dataset.Schema(id)[len("dix_"):]
}

// enqueueCollectionJob queues a job that concerns a whole collection (rebuild_fts) in tx.
func (s *Service) enqueueCollectionJob(ctx context.Context, tx bun.IDB, collectionID uuid.UUID, typ string) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO docindex.jobs (collection_id, type) VALUES (?, ?)", collectionID, typ)
	if err != nil {
		return fmt.Errorf("queue %s job: %w", typ, err)
	}
	return nil
}
