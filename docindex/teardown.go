package docindex

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/store"
)

// teardownCollection deletes a collection with its files, jobs and provisioned tables.
func (s *Service) teardownCollection(ctx context.Context, c *store.Collection) error {
	var blobs []string
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewSelect().Model((*store.File)(nil)).Column("blob_path").
			Where("collection_id = ?", c.ID).Scan(ctx, &blobs); err != nil {
			return fmt.Errorf("list files: %w", err)
		}
		if err := dataset.Drop(ctx, tx, c.ID); err != nil {
			return err
		}
		if err := s.vectors.Drop(ctx, tx, c.ID); err != nil {
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
	if err != nil {
		return err
	}
	// Blobs go after the commit: a failed delete leaves an orphan blob, never a file without one.
	for _, b := range blobs {
		if s.blobs == nil {
			break
		}
		if err := s.blobs.Delete(ctx, b); err != nil {
			s.log.WarnContext(ctx, "delete blob of a deleted collection", "blob", b, "err", err)
		}
	}
	return nil
}

// enqueueCollectionJob queues a job that concerns a whole collection (rebuild_fts) in tx.
func (s *Service) enqueueCollectionJob(ctx context.Context, tx bun.IDB, collectionID uuid.UUID, typ string) error {
	_, err := s.queue.Enqueue(ctx, tx, queue.NewJob{Type: typ, CollectionID: uuid.NullUUID{UUID: collectionID, Valid: true}})
	return err
}
