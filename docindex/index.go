package docindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/chunk"
	"github.com/docindex/docindex/docindex/extract"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/store"
	"github.com/docindex/docindex/docindex/vectorstore"
	"github.com/docindex/docindex/docindex/worker"
)

// embedBatch is the number of chunks sent to the embedder at once.
const embedBatch = 64

// Handle runs one job: it makes the Service a worker.Handler (worker.New(svc.Queue(), svc)).
// Indexing is idempotent: the file's chunks are replaced in one transaction, so a retried or
// rescued job never duplicates them.
func (s *Service) Handle(ctx context.Context, j queue.Job) error {
	switch j.Type {
	case queue.TypeIndex, queue.TypeReindex:
		if !j.FileID.Valid {
			return worker.Permanent(errors.New("index job without a file"))
		}
		err := s.indexFile(ctx, j.FileID.UUID)
		if err != nil && (worker.IsPermanent(err) || j.RetryCount >= j.MaxRetries) {
			s.markFailed(context.WithoutCancel(ctx), j.FileID.UUID, err)
		}
		return err
	case queue.TypeRebuildFTS:
		c := &store.Collection{}
		if err := s.db.NewSelect().Model(c).Where("id = ?", j.CollectionID).Scan(ctx); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil // the collection is gone: nothing to rebuild
			}
			return err
		}
		return s.vectors.RebuildFTS(ctx, c.ID, c.SearchLanguage)
	case queue.TypeDelete:
		return nil
	}
	return worker.Permanent(fmt.Errorf("unknown job type %q", j.Type))
}

func (s *Service) markFailed(ctx context.Context, fileID uuid.UUID, cause error) {
	_, err := s.db.NewUpdate().Model((*store.File)(nil)).
		Set("status = 'failed', warning = ?, updated_at = now()", truncate(cause.Error(), 2000)).
		Where("id = ?", fileID).Exec(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "mark file failed", "file", fileID, "err", err)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func (s *Service) indexFile(ctx context.Context, fileID uuid.UUID) error {
	f := &store.File{}
	if err := s.db.NewSelect().Model(f).Where("id = ?", fileID).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil // deleted meanwhile: nothing to index
		}
		return fmt.Errorf("load file: %w", err)
	}
	if !f.CollectionID.Valid {
		return worker.Permanent(errors.New("file belongs to no collection"))
	}
	c := &store.Collection{}
	if err := s.db.NewSelect().Model(c).Where("id = ?", f.CollectionID.UUID).Scan(ctx); err != nil {
		return fmt.Errorf("load collection: %w", err)
	}
	if c.Type != "rag" {
		return worker.Permanent(fmt.Errorf("collection %s is a dataset: file indexing applies to rag collections", c.Name))
	}
	if c.EmbeddingModel == "" || c.EmbeddingDimensions == nil || s.embedders == nil {
		return worker.Permanent(errors.New("the collection has no embedding model: configure an embedding provider"))
	}
	// Collections get their chunk table at creation; this covers one created before an embedder
	// was configured. Only when missing: CREATE INDEX IF NOT EXISTS still locks the table, which
	// would serialize the workers writing chunks into it.
	var exists bool
	if err := s.db.QueryRowContext(ctx, "SELECT to_regclass(?) IS NOT NULL", "docindex."+vectorstore.Table(c.ID)).Scan(&exists); err != nil {
		return fmt.Errorf("check chunk table: %w", err)
	}
	if !exists {
		if err := s.vectors.Provision(ctx, s.db, c.ID, *c.EmbeddingDimensions, c.SearchLanguage); err != nil {
			return err
		}
	}

	t0 := time.Now()
	path, err := s.download(ctx, f)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	ctype := ""
	if f.ContentType != nil {
		ctype = *f.ContentType
	}
	doc, err := s.extractor.Extract(ctx, path, f.Name, ctype)
	if err != nil {
		if errors.Is(err, extract.ErrUnsupported) {
			return worker.Permanent(err)
		}
		return fmt.Errorf("extract: %w", err)
	}
	t1 := time.Now()
	sections := make([]chunk.Section, len(doc.Pages))
	for i, p := range doc.Pages {
		sections[i] = chunk.Section{Page: p.Number, Text: p.Text}
	}
	embed := func(ctx context.Context, texts []string) ([][]float32, error) {
		return s.embed(ctx, c.EmbeddingModel, texts)
	}
	opts := chunk.Options{Strategy: c.ChunkingStrategy, Embed: embed}
	if c.ChunkingStrategy == "recursive" {
		if c.ChunkSize != nil {
			opts.Size = *c.ChunkSize
		}
		opts.Overlap = DefaultChunkOverlap
		if c.ChunkOverlap != nil {
			opts.Overlap = *c.ChunkOverlap
			if opts.Overlap == 0 {
				opts.Overlap = chunk.NoOverlap
			}
		}
	}
	chunks, err := chunk.Split(ctx, sections, opts)
	if err != nil {
		return worker.Permanent(fmt.Errorf("chunk: %w", err))
	}
	t2 := time.Now()
	texts := make([]string, len(chunks))
	for i, ch := range chunks {
		texts[i] = ch.Text
	}
	vectors, err := s.embed(ctx, c.EmbeddingModel, texts)
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	t3 := time.Now()
	rows := make([]vectorstore.Chunk, len(chunks))
	for i, ch := range chunks {
		meta := ch.Metadata
		if meta == nil {
			meta = map[string]any{}
		}
		rows[i] = vectorstore.Chunk{FileID: f.ID, Ordinal: ch.Ordinal, Text: ch.Text, Pages: ch.Pages,
			Metadata: meta, Embedding: vectors[i]}
	}
	if err := s.vectors.Replace(ctx, c.ID, f.ID, rows); err != nil {
		return fmt.Errorf("write chunks: %w", err)
	}
	t4 := time.Now()
	// Phase timings tell an operator where indexing time goes.
	s.log.DebugContext(ctx, "indexed file", "file", f.ID, "chunks", len(rows),
		"extract_ms", t1.Sub(t0).Milliseconds(), "chunk_ms", t2.Sub(t1).Milliseconds(),
		"embed_ms", t3.Sub(t2).Milliseconds(), "write_ms", t4.Sub(t3).Milliseconds())
	status, warning := "indexed", ""
	if len(doc.Warnings) > 0 {
		status, warning = "indexed_with_warning", strings.Join(doc.Warnings, "; ")
	}
	var pages *int
	if doc.PageCount > 0 {
		pages = &doc.PageCount
	}
	// Once the chunks are written the bookkeeping below must run even if the job is being
	// cancelled (its file deleted meanwhile), or the chunks of a deleted file would stay.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	res, err := s.db.NewUpdate().Model((*store.File)(nil)).
		Set("status = ?, warning = ?, page_count = ?, last_indexed_at = now(), updated_at = now()", status, truncate(warning, 2000), pages).
		Where("id = ?", f.ID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("update file: %w", err)
	}
	// The file may have been deleted while it was being indexed; its teardown then ran before the
	// chunks above were written. The UPDATE waits for a teardown in progress (it deletes the row
	// first), so no row means the file is gone for good: remove the chunks written for it.
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		if err := s.vectors.DeleteFile(ctx, s.db, c.ID, f.ID); err != nil {
			return fmt.Errorf("remove chunks of a deleted file: %w", err)
		}
	}
	return nil
}

// embed calls the embedder in batches.
func (s *Service) embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += embedBatch {
		end := min(start+embedBatch, len(texts))
		vs, err := s.embedders.Embed(ctx, model, texts[start:end])
		if err != nil {
			return nil, err
		}
		if len(vs) != end-start {
			return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vs), end-start)
		}
		out = append(out, vs...)
	}
	return out, nil
}

// download copies a file's blob to a temporary file: extractors need random access (PDF, ZIP).
func (s *Service) download(ctx context.Context, f *store.File) (string, error) {
	r, err := s.blobs.Open(ctx, f.BlobPath)
	if err != nil {
		if errors.Is(err, blob.ErrNotFound) {
			return "", worker.Permanent(errors.New("the file's content is no longer stored"))
		}
		return "", fmt.Errorf("open blob: %w", err)
	}
	defer r.Close()
	tmp, err := os.CreateTemp("", "docindex-*")
	if err != nil {
		return "", fmt.Errorf("temp file: %w", err)
	}
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("download blob: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}
