package docindex

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/store"
)

// teardownFile deletes a file: its jobs are cancelled, its row, chunks and extraction rows deleted
// in one transaction, then its blob removed.
func (s *Service) teardownFile(ctx context.Context, f *store.File) error {
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := s.queue.CancelFileJobs(ctx, tx, f.ID); err != nil {
			return err
		}
		// The row goes first: a job indexing the file meanwhile ends with an UPDATE of the row,
		// which waits for this transaction and, finding no row, removes the chunks it wrote too
		// late for the delete below to see them (see indexFile).
		if _, err := tx.NewDelete().Model(f).WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("delete file row: %w", err)
		}
		if f.CollectionID.Valid {
			if err := s.deleteFileRows(ctx, tx, f.CollectionID.UUID, f.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete file %s: %w", f.ID, err)
	}
	if err := s.blobs.Delete(ctx, f.BlobPath); err != nil {
		return fmt.Errorf("delete blob of file %s: %w", f.ID, err)
	}
	return nil
}

// deleteFileRows removes what indexing wrote for a file: chunks, structured-extraction rows, the
// tables it imported into a dataset.
func (s *Service) deleteFileRows(ctx context.Context, tx bun.IDB, collectionID, fileID uuid.UUID) error {
	if err := s.vectors.DeleteFile(ctx, tx, collectionID, fileID); err != nil {
		return fmt.Errorf("delete chunks: %w", err)
	}
	c := &store.Collection{}
	if err := tx.NewSelect().Model(c).Column("type", "dataset_mode", "structured_extraction_enabled", "live_schema").
		Where("id = ?", collectionID).Scan(ctx); err != nil {
		return fmt.Errorf("load collection: %w", err)
	}
	if c.Type == "dataset" && c.DatasetMode == "imported" {
		return s.dropImported(ctx, tx, collectionID, fileID)
	}
	if !c.StructuredExtractionEnabled {
		return nil
	}
	tables, err := dataset.Parse(c.LiveSchema)
	if err != nil {
		return err
	}
	for _, name := range tables.Names() {
		if _, err := tx.ExecContext(ctx, "DELETE FROM ?.? WHERE _file_id = ?",
			bun.Ident(dataset.Schema(collectionID)), bun.Ident(name), fileID); err != nil {
			return fmt.Errorf("delete extraction rows of %s: %w", name, err)
		}
	}
	return nil
}

// BulkDelete is the body of POST /files/bulk-delete: exactly one of FileIDs or Status.
type BulkDelete struct {
	FileIDs       []string `json:"fileIds"`
	Status        string   `json:"status"`
	CollectionIDs []string `json:"collectionIds"`
	Search        string   `json:"search"`
}

// BulkDeleteResult counts deleted files and files whose teardown failed.
type BulkDeleteResult struct {
	Status      string `json:"status"`
	Count       int    `json:"count"`
	FailedCount int    `json:"failedCount"`
}

// Limits of a bulk delete.
const (
	MaxBulkFileIDs = 100
	MaxBulkFilter  = 500
)

// BulkDeleteFiles deletes many files. A file is deleted only when the caller owns or administers
// its collection with write access (a file without a collection needs a global admin); others are
// skipped silently. A teardown failure does not stop the rest and is counted in FailedCount.
func (s *Service) BulkDeleteFiles(ctx context.Context, p *access.Principal, in BulkDelete) (*BulkDeleteResult, error) {
	explicit := in.FileIDs != nil
	filter := in.Status != ""
	if explicit == filter {
		return nil, invalid("Invalid body: give either fileIds or status (with optional collectionIds and search)")
	}
	if explicit && (len(in.CollectionIDs) > 0 || in.Search != "") {
		return nil, invalid("Invalid body: collectionIds and search apply to the status mode only")
	}
	if len(in.FileIDs) > MaxBulkFileIDs {
		return nil, invalid("Invalid body: at most %d fileIds", MaxBulkFileIDs)
	}
	ids, err := parseIDs(in.FileIDs, "fileIds")
	if err != nil {
		return nil, err
	}
	colls, err := parseIDs(in.CollectionIDs, "collectionIds")
	if err != nil {
		return nil, err
	}
	if filter {
		if err := oneOf("status", in.Status, fileStatuses...); err != nil {
			return nil, err
		}
	}
	if !p.CanWrite() {
		return nil, errAccessDenied
	}
	// Which collections may the caller delete in? Owner or admin role.
	expr, args := access.RoleSQL(p)
	var allowed []uuid.UUID
	if err := s.db.NewSelect().TableExpr("docindex.collections AS c").
		Column("c.id").Where(expr+" IN ('owner', 'admin')", args...).Scan(ctx, &allowed); err != nil {
		return nil, fmt.Errorf("bulk delete: %w", err)
	}
	if len(allowed) == 0 && !p.GlobalAdmin {
		return nil, errAccessDenied
	}
	var files []store.File
	q := s.db.NewSelect().Model(&files).
		Where("(f.collection_id = ANY(?::uuid[]) OR (f.collection_id IS NULL AND ?))", uuidArray(allowed), p.GlobalAdmin)
	if explicit {
		q = q.Where("f.id = ANY(?::uuid[])", uuidArray(ids))
	} else {
		q = q.Where("f.status = ?", in.Status).OrderExpr("f.created_at, f.id").Limit(MaxBulkFilter)
		if len(colls) > 0 {
			q = q.Where("f.collection_id = ANY(?::uuid[])", uuidArray(colls))
		}
		if in.Search != "" {
			q = q.Where("f.name ILIKE ?", "%"+likeEscape(in.Search)+"%")
		}
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("bulk delete: %w", err)
	}
	res := &BulkDeleteResult{Status: "completed"}
	for i := range files {
		if err := s.teardownFile(ctx, &files[i]); err != nil {
			s.log.WarnContext(ctx, "bulk delete: teardown failed", "file", files[i].ID, "err", err)
			res.FailedCount++
			continue
		}
		res.Count++
	}
	if res.FailedCount > 0 {
		res.Status = "partial"
	}
	return res, nil
}

func parseIDs(raw []string, field string) ([]uuid.UUID, error) {
	out := make([]uuid.UUID, 0, len(raw))
	for _, r := range raw {
		id, err := uuid.Parse(r)
		if err != nil {
			return nil, invalid("Invalid body: %s holds a malformed id %q", field, r)
		}
		out = append(out, id)
	}
	return out, nil
}

func uuidArray(ids []uuid.UUID) any {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return pgdialect.Array(s)
}
