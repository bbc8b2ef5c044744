package vectorstore

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// InsertReplace is the INSERT path of Replace (drivers other than pgx), exported for tests.
func (s *Store) InsertReplace(ctx context.Context, tx bun.Tx, collectionID, fileID uuid.UUID, chunks []Chunk) error {
	rows, err := prepare(fileID, chunks)
	if err != nil {
		return err
	}
	_, err = s.insertReplace(ctx, tx, collectionID, fileID, rows)
	return err
}
