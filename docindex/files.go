package docindex

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"unicode"

	"github.com/gabriel-vasile/mimetype"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/store"
)

// DefaultMaxUploadBytes bounds an upload unless WithMaxUploadBytes says otherwise.
const DefaultMaxUploadBytes = 100 << 20

var (
	errFileNotFound = Errorf(ErrNotFound, "File not found")
	errNoBlobStore  = errors.New("no blob store configured")
)

// Upload describes one uploaded file; Body is streamed to the blob store, never held in memory.
type Upload struct {
	CollectionID uuid.UUID
	Name         string
	ContentType  string
	Metadata     json.RawMessage // a JSON object merged into sourceMetadata; may be empty
	Body         io.Reader
}

// UploadResult is the stored file and the id of its indexing job.
type UploadResult struct {
	File  *store.File
	JobID uuid.UUID
}

// countingReader fails once more than limit bytes went through it.
type countingReader struct {
	r     io.Reader
	n     int64
	limit int64
}

var errTooLarge = Errorf(ErrTooLarge, "File too large")

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.limit {
		return n, errTooLarge
	}
	if err != nil && err != io.EOF {
		return n, &bodyError{err: err}
	}
	return n, err
}

// bodyError is a failure to read the uploaded file itself (a broken or malformed request), told
// apart from a failure of the blob store that the file is copied into.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "read the upload: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// safeName keeps a file name usable as the last segment of a blob key.
func safeName(name string) string {
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." || name == "/" {
		name = "file"
	}
	if len(name) > 200 {
		name = name[len(name)-200:]
	}
	if strings.HasSuffix(name, ".attrs") {
		name += "_"
	}
	return name
}

// UploadFile stores a file in a collection and queues its indexing job, in one transaction with
// the file row. Only the owner or a collection admin may upload; others get Not found.
func (s *Service) UploadFile(ctx context.Context, p *access.Principal, up Upload) (*UploadResult, error) {
	if s.blobs == nil {
		return nil, errNoBlobStore
	}
	if !p.CanWrite() {
		return nil, errKeyReadOnly
	}
	meta := json.RawMessage("{}")
	if len(up.Metadata) > 0 {
		var m map[string]any
		if err := json.Unmarshal(up.Metadata, &m); err != nil || m == nil {
			return nil, invalid("metadata must be a JSON object")
		}
		meta = up.Metadata
	}
	c, role, err := s.collectionRole(ctx, s.db, p, up.CollectionID)
	if err != nil {
		return nil, err
	}
	if !role.AtLeast(access.Admin) {
		return nil, errCollectionNotFound
	}
	if c.Type == "dataset" && c.DatasetMode == "live" {
		return nil, invalid("a live dataset takes rows through ingest, not files")
	}
	f := &store.File{ID: uuid.New(), CollectionID: uuid.NullUUID{UUID: c.ID, Valid: true},
		Name: strings.TrimSpace(up.Name), Status: "pending", SourceMetadata: meta,
		CreatedBy: uuid.NullUUID{UUID: p.UserID, Valid: true}}
	if f.Name == "" {
		f.Name = "file"
	}
	f.BlobPath = "files/" + f.ID.String() + "/" + safeName(f.Name)

	// Sniff the type from the first bytes when the client sent none (or a meaningless one).
	br := bufio.NewReaderSize(&countingReader{r: up.Body, limit: s.maxUpload}, 4096)
	ctype := strings.TrimSpace(up.ContentType)
	if ctype == "" || ctype == "application/octet-stream" {
		head, _ := br.Peek(3072)
		ctype = mimetype.Detect(head).String()
	}
	f.ContentType = &ctype
	size, err := s.blobs.Put(ctx, f.BlobPath, br, ctype)
	if err != nil {
		_ = s.blobs.Delete(context.WithoutCancel(ctx), f.BlobPath)
		var be *bodyError
		var mbe *http.MaxBytesError
		switch {
		case errors.Is(err, errTooLarge), errors.As(err, &mbe):
			return nil, errTooLarge
		case ctx.Err() != nil:
			return nil, fmt.Errorf("store upload: %w", err) // the client went away
		case errors.As(err, &be):
			return nil, invalid("Invalid request: the file could not be read (%v)", be.err)
		}
		s.log.WarnContext(ctx, "upload: store the file", "err", err)
		return nil, Errorf(ErrUnavailable, "File storage is unavailable; nothing was stored, try again")
	}
	f.SizeBytes = &size

	var jobID uuid.UUID
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(f).Returning("*").Exec(ctx); err != nil {
			return fmt.Errorf("insert file: %w", err)
		}
		jobs, err := s.queue.Enqueue(ctx, tx, queue.NewJob{Type: queue.TypeIndex,
			FileID: uuid.NullUUID{UUID: f.ID, Valid: true}, CollectionID: f.CollectionID})
		if err != nil {
			return err
		}
		jobID = jobs[0].ID
		return nil
	})
	if err != nil {
		_ = s.blobs.Delete(context.WithoutCancel(ctx), f.BlobPath)
		return nil, err
	}
	name := c.Name
	f.CollectionName = &name
	return &UploadResult{File: f, JobID: jobID}, nil
}

// fileRole loads a file with its collection name and the caller's role on its collection. A file
// without a collection is visible to global admins only (as admin).
func (s *Service) fileRole(ctx context.Context, db bun.IDB, p *access.Principal, id uuid.UUID) (*store.File, access.Role, error) {
	f := &store.File{}
	err := db.NewSelect().Model(f).ColumnExpr("f.*").ColumnExpr("c.name AS collection_name").
		Join("LEFT JOIN docindex.collections c ON c.id = f.collection_id").
		Where("f.id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, access.None, errFileNotFound
	}
	if err != nil {
		return nil, access.None, fmt.Errorf("load file: %w", err)
	}
	if !f.CollectionID.Valid {
		if p.GlobalAdmin {
			return f, access.Admin, nil
		}
		return f, access.None, nil
	}
	_, role, err := s.collectionRole(ctx, db, p, f.CollectionID.UUID)
	if errors.Is(err, ErrNotFound) {
		return f, access.None, nil
	}
	return f, role, err
}

// FileDetail is a file with its jobs, newest first.
type FileDetail struct {
	File *store.File
	Jobs []queue.Job
}

// GetFile returns a file the caller may see, with its job history.
func (s *Service) GetFile(ctx context.Context, p *access.Principal, id uuid.UUID) (*FileDetail, error) {
	f, role, err := s.fileRole(ctx, s.db, p, id)
	if err != nil {
		return nil, err
	}
	if role == access.None {
		return nil, errAccessDenied
	}
	jobs := []queue.Job{}
	if err := s.db.NewSelect().Model(&jobs).Where("file_id = ?", id).
		OrderExpr("j.created_at DESC, j.seq DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load jobs: %w", err)
	}
	return &FileDetail{File: f, Jobs: jobs}, nil
}

// FileFilter narrows ListFiles.
type FileFilter struct {
	CollectionID uuid.NullUUID
	Status       string
	Search       string // case-insensitive substring of the name
	Limit        int    // default 100, at most 1000
	Offset       int
}

var fileStatuses = []string{"pending", "indexed", "indexed_with_warning", "failed"}

// ListFiles lists the files of collections the caller may see, newest first.
func (s *Service) ListFiles(ctx context.Context, p *access.Principal, f FileFilter) ([]store.File, error) {
	if f.Status != "" {
		if err := oneOf("status", f.Status, fileStatuses...); err != nil {
			return nil, err
		}
	}
	var err error
	if f.Limit, err = pageLimit(f.Limit, f.Offset); err != nil {
		return nil, err
	}
	expr, args := access.RoleSQL(p)
	files := []store.File{}
	q := s.db.NewSelect().Model(&files).ColumnExpr("f.*").ColumnExpr("c.name AS collection_name").
		Join("LEFT JOIN docindex.collections c ON c.id = f.collection_id").
		OrderExpr("f.created_at DESC, f.id").Limit(int64(f.Limit)).Offset(int64(f.Offset))
	if p.GlobalAdmin {
		// Global admins see every file, those without a collection too.
	} else {
		q = q.Where("c.id IS NOT NULL AND "+expr+" IS NOT NULL", args...)
	}
	if f.CollectionID.Valid {
		q = q.Where("f.collection_id = ?", f.CollectionID.UUID)
	}
	if f.Status != "" {
		q = q.Where("f.status = ?", f.Status)
	}
	if f.Search != "" {
		q = q.Where("f.name ILIKE ?", "%"+likeEscape(f.Search)+"%")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list files: %w", err)
	}
	return files, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ReindexResult is the answer to a file reindex.
type ReindexResult struct {
	JobID uuid.UUID
	File  *store.File
}

// ReindexFile queues a reindex job; write access to the file's collection is needed, and the
// blob must still be stored (otherwise the file must be uploaded again).
func (s *Service) ReindexFile(ctx context.Context, p *access.Principal, id uuid.UUID) (*ReindexResult, error) {
	f, role, err := s.fileRole(ctx, s.db, p, id)
	if err != nil {
		return nil, err
	}
	if !role.AtLeast(access.Admin) || !p.CanWrite() {
		return nil, errAccessDenied
	}
	ok, err := s.blobs.Exists(ctx, f.BlobPath)
	if err != nil {
		return nil, fmt.Errorf("check blob: %w", err)
	}
	if !ok {
		return nil, invalid("The file's content is no longer stored: upload it again")
	}
	var jobID uuid.UUID
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		jobs, err := s.queue.Enqueue(ctx, tx, queue.NewJob{Type: queue.TypeReindex,
			FileID: uuid.NullUUID{UUID: f.ID, Valid: true}, CollectionID: f.CollectionID})
		if err != nil {
			return err
		}
		jobID = jobs[0].ID
		_, err = tx.NewUpdate().Model(f).Set("status = 'pending', updated_at = now()").WherePK().Returning("*").Exec(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reindex file: %w", err)
	}
	return &ReindexResult{JobID: jobID, File: f}, nil
}

// DeleteFile removes a file with its chunks, extraction rows, blob and queued jobs.
func (s *Service) DeleteFile(ctx context.Context, p *access.Principal, id uuid.UUID) error {
	f, role, err := s.fileRole(ctx, s.db, p, id)
	if err != nil {
		return err
	}
	if role == access.None {
		return errFileNotFound
	}
	if !role.AtLeast(access.Admin) || !p.CanWrite() {
		return errAccessDenied
	}
	return s.teardownFile(ctx, f)
}
