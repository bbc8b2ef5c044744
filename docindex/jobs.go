package docindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/store"
)

var (
	errJobNotFound  = Errorf(ErrNotFound, "Job not found")
	errJobRunning   = Errorf(ErrConflict, "Cannot delete a running job")
	errNoAdminColls = Errorf(ErrForbidden, "Access denied: no collection where you have the admin role")
)

// JobItem is a job as listed: with its file and collection names and its place in the queue.
type JobItem struct {
	queue.Job      `bun:",extend"`
	FileName       *string `bun:"file_name,scanonly"`
	CollectionName *string `bun:"collection_name,scanonly"`
	QueuePosition  *int    `bun:"-"`
}

// JobDetail is a job with its file, when the file still exists.
type JobDetail struct {
	Job  *queue.Job
	File *store.File
}

// jobRole loads a job and the caller's role on its collection.
func (s *Service) jobRole(ctx context.Context, p *access.Principal, id uuid.UUID) (*queue.Job, access.Role, error) {
	j := &queue.Job{}
	err := s.db.NewSelect().Model(j).Where("j.id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, access.None, errJobNotFound
	}
	if err != nil {
		return nil, access.None, fmt.Errorf("load job: %w", err)
	}
	if !j.CollectionID.Valid {
		if p.GlobalAdmin {
			return j, access.Admin, nil
		}
		return j, access.None, nil
	}
	_, role, err := s.collectionRole(ctx, s.db, p, j.CollectionID.UUID)
	if errors.Is(err, ErrNotFound) {
		// The collection is gone: only global admins still see the job.
		if p.GlobalAdmin {
			return j, access.Admin, nil
		}
		return j, access.None, nil
	}
	return j, role, err
}

// GetJob returns a job of a collection the caller may see, with its file when it still exists.
func (s *Service) GetJob(ctx context.Context, p *access.Principal, id uuid.UUID) (*JobDetail, error) {
	j, role, err := s.jobRole(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if role == access.None {
		return nil, errAccessDenied
	}
	d := &JobDetail{Job: j}
	if j.FileID.Valid {
		f := &store.File{}
		err := s.db.NewSelect().Model(f).ColumnExpr("f.*").ColumnExpr("c.name AS collection_name").
			Join("LEFT JOIN docindex.collections c ON c.id = f.collection_id").
			Where("f.id = ?", j.FileID.UUID).Scan(ctx)
		switch {
		case err == nil:
			d.File = f
		case !errors.Is(err, sql.ErrNoRows):
			return nil, fmt.Errorf("load job file: %w", err)
		}
	}
	return d, nil
}

// DeleteJob removes a job that is not running; the caller needs the admin role on its collection.
func (s *Service) DeleteJob(ctx context.Context, p *access.Principal, id uuid.UUID) error {
	j, role, err := s.jobRole(ctx, p, id)
	if err != nil {
		return err
	}
	if role == access.None {
		return errJobNotFound
	}
	if !role.AtLeast(access.Admin) || !p.CanWrite() {
		return errAccessDenied
	}
	if j.Status == queue.StatusRunning {
		return errJobRunning
	}
	err = s.queue.Delete(ctx, s.db, id)
	switch {
	case errors.Is(err, queue.ErrRunning):
		return errJobRunning
	case errors.Is(err, queue.ErrNotFound):
		return errJobNotFound
	}
	return err
}

// adminCollections returns the ids of collections where the caller is owner or admin; a caller
// with none is denied.
func (s *Service) adminCollections(ctx context.Context, db bun.IDB, p *access.Principal) ([]uuid.UUID, error) {
	if !p.CanWrite() {
		return nil, errAccessDenied
	}
	expr, args := access.RoleSQL(p)
	var ids []uuid.UUID
	if err := db.NewSelect().TableExpr("docindex.collections AS c").Column("c.id").
		Where(expr+" IN ('owner', 'admin')", args...).Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("admin collections: %w", err)
	}
	if len(ids) == 0 {
		return nil, errNoAdminColls
	}
	return ids, nil
}

// RetryFailedJobs requeues, at the tail of the queue, every failed job of the collections the
// caller administers.
func (s *Service) RetryFailedJobs(ctx context.Context, p *access.Principal) (int, error) {
	var n int
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		colls, err := s.adminCollections(ctx, tx, p)
		if err != nil {
			return err
		}
		var ids []uuid.UUID
		if err := tx.NewSelect().Model((*queue.Job)(nil)).Column("j.id").
			Where("j.status = 'failed' AND j.collection_id = ANY(?::uuid[])", uuidArray(colls)).
			OrderExpr("j.seq").Scan(ctx, &ids); err != nil {
			return fmt.Errorf("failed jobs: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		n, err = s.queue.Retry(ctx, tx, ids)
		if err != nil {
			return err
		}
		// Their files are pending again.
		_, err = tx.ExecContext(ctx, `UPDATE docindex.files SET status = 'pending', updated_at = now()
			WHERE id IN (SELECT file_id FROM docindex.jobs WHERE id = ANY(?::uuid[]) AND file_id IS NOT NULL)`, uuidArray(ids))
		return err
	})
	return n, err
}

// DeleteFailedJobs removes every failed job of the collections the caller administers.
func (s *Service) DeleteFailedJobs(ctx context.Context, p *access.Principal) (int, error) {
	colls, err := s.adminCollections(ctx, s.db, p)
	if err != nil {
		return 0, err
	}
	res, err := s.db.NewDelete().Model((*queue.Job)(nil)).
		Where("status = 'failed' AND collection_id = ANY(?::uuid[])", uuidArray(colls)).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete failed jobs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// ReindexAllResult lists the jobs queued by ReindexAll.
type ReindexAllResult struct {
	Status    string      `json:"status"`
	FileCount int         `json:"fileCount"`
	JobIDs    []uuid.UUID `json:"jobIds"`
}

// ReindexAll queues a reindex job for every file in the collections the caller administers; a
// file whose blob is gone fails its job with that reason.
func (s *Service) ReindexAll(ctx context.Context, p *access.Principal) (*ReindexAllResult, error) {
	res := &ReindexAllResult{Status: "no_files", JobIDs: []uuid.UUID{}}
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		colls, err := s.adminCollections(ctx, tx, p)
		if err != nil {
			return err
		}
		var files []store.File
		if err := tx.NewSelect().Model(&files).Column("f.id", "f.collection_id").
			Where("f.collection_id = ANY(?::uuid[])", uuidArray(colls)).OrderExpr("f.created_at, f.id").
			Scan(ctx); err != nil {
			return fmt.Errorf("files to reindex: %w", err)
		}
		if len(files) == 0 {
			return nil
		}
		jobs := make([]queue.NewJob, len(files))
		for i, f := range files {
			jobs[i] = queue.NewJob{Type: queue.TypeReindex, FileID: uuid.NullUUID{UUID: f.ID, Valid: true}, CollectionID: f.CollectionID}
		}
		queued, err := s.queue.Enqueue(ctx, tx, jobs...)
		if err != nil {
			return err
		}
		for _, j := range queued {
			res.JobIDs = append(res.JobIDs, j.ID)
		}
		res.Status, res.FileCount = "queued", len(files)
		_, err = tx.ExecContext(ctx, `UPDATE docindex.files SET status = 'pending', updated_at = now()
			WHERE collection_id = ANY(?::uuid[])`, uuidArray(colls))
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// JobFilter narrows ListJobs.
type JobFilter struct {
	Status       string
	CollectionID uuid.NullUUID
	FileID       uuid.NullUUID
	Limit        int // default 100, at most 1000
	Offset       int
}

var jobStatuses = []string{"queued", "running", "completed", "failed", "cancelled"}

// ListJobs lists jobs of collections the caller may see, newest first, with queue positions of
// queued jobs.
func (s *Service) ListJobs(ctx context.Context, p *access.Principal, f JobFilter) ([]JobItem, error) {
	if f.Status != "" {
		if err := oneOf("status", f.Status, jobStatuses...); err != nil {
			return nil, err
		}
	}
	var err error
	if f.Limit, err = pageLimit(f.Limit, f.Offset); err != nil {
		return nil, err
	}
	expr, args := access.RoleSQL(p)
	items := []JobItem{}
	q := s.db.NewSelect().Model(&items).ColumnExpr("j.*").
		ColumnExpr("f.name AS file_name, c.name AS collection_name").
		Join("LEFT JOIN docindex.files f ON f.id = j.file_id").
		Join("LEFT JOIN docindex.collections c ON c.id = j.collection_id").
		OrderExpr("j.seq DESC").Limit(int64(f.Limit)).Offset(int64(f.Offset))
	if !p.GlobalAdmin {
		q = q.Where("c.id IS NOT NULL AND "+expr+" IS NOT NULL", args...)
	}
	if f.Status != "" {
		q = q.Where("j.status = ?", f.Status)
	}
	if f.CollectionID.Valid {
		q = q.Where("j.collection_id = ?", f.CollectionID.UUID)
	}
	if f.FileID.Valid {
		q = q.Where("j.file_id = ?", f.FileID.UUID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	var queued []uuid.UUID
	for _, it := range items {
		if it.Status == queue.StatusQueued {
			queued = append(queued, it.ID)
		}
	}
	if len(queued) > 0 {
		pos, err := s.queue.Positions(ctx, queued)
		if err != nil {
			return nil, err
		}
		for i := range items {
			if n, ok := pos[items[i].ID]; ok {
				items[i].QueuePosition = &n
			}
		}
	}
	return items, nil
}
