package docindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/chunk"
	"github.com/docindex/docindex/docindex/extract"
	"github.com/docindex/docindex/docindex/images"
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
	s.running.Add(1)
	defer func() {
		if s.running.Add(-1) == 0 {
			s.vectors.Wake() // the index merge waits for idle moments
		}
	}()
	return s.handle(ctx, j)
}

func (s *Service) handle(ctx context.Context, j queue.Job) error {
	switch j.Type {
	case queue.TypeIndex, queue.TypeReindex:
		if !j.FileID.Valid {
			return worker.Permanent(errors.New("index job without a file"))
		}
		last := j.RetryCount >= j.MaxRetries
		err := s.indexFile(ctx, j.FileID.UUID, last)
		if err != nil && (worker.IsPermanent(err) || last) {
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

// indexFile indexes a file; last says whether this is the job's last attempt, after which a
// failure that may pass becomes a warning instead of a retry.
func (s *Service) indexFile(ctx context.Context, fileID uuid.UUID, last bool) error {
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
	if c.Type == "dataset" && c.DatasetMode == "imported" {
		return s.importFile(ctx, f, c)
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
	doc, err := s.extractFile(ctx, c, f, path, ctype)
	if err != nil {
		return err
	}
	t1 := time.Now()
	sections := make([]chunk.Section, len(doc.Pages))
	for i, p := range doc.Pages {
		sections[i] = chunk.Section{Page: p.Number, Text: p.Text}
	}
	if c.ImageDescriptionsEnabled {
		if sections, err = s.describeImages(ctx, c, f, path, doc, sections); err != nil {
			return err
		}
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
	warnings, outage := s.extractStructured(ctx, c, f, doc, !last)
	doc.Warnings = append(doc.Warnings, warnings...)
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
	q := s.db.NewUpdate().Model((*store.File)(nil)).Where("id = ?", f.ID)
	if outage != nil {
		// Retried later: the file stays as it is, its new chunks searchable meanwhile and
		// replaced by the retry. The update only finds out whether the file is still there.
		q = q.Set("updated_at = updated_at")
	} else {
		q = q.Set("status = ?, warning = ?, page_count = ?, last_indexed_at = now(), updated_at = now()", status, truncate(warning, 2000), pages)
	}
	res, err := q.Exec(ctx)
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
		return nil
	}
	return outage
}

// extractFile extracts the text of a file. An image file is no document the extractor reads:
// with image descriptions enabled it becomes an empty document of format "image" whose text
// comes from its description; without, it fails as unsupported.
func (s *Service) extractFile(ctx context.Context, c *store.Collection, f *store.File, path, ctype string) (*extract.Document, error) {
	_, isImage := images.ImageType(path)
	if isImage && c.ImageDescriptionsEnabled {
		return &extract.Document{Format: images.FormatImage}, nil
	}
	doc, err := s.extractor.Extract(ctx, path, f.Name, ctype)
	if err != nil {
		if errors.Is(err, extract.ErrUnsupported) {
			if isImage {
				err = fmt.Errorf("%w: image files are indexed only in collections with image descriptions enabled", err)
			}
			return nil, worker.Permanent(err)
		}
		return nil, fmt.Errorf("extract: %w", err)
	}
	return doc, nil
}

// describeImages turns the images of a document into sections: the collection's mode picks
// them, the service's describer (a vision model, or OCR) reads them, and each description
// joins the sections after the text of its page. An image that fails adds a warning.
func (s *Service) describeImages(ctx context.Context, c *store.Collection, f *store.File, path string, doc *extract.Document, sections []chunk.Section) ([]chunk.Section, error) {
	switch doc.Format {
	case images.FormatPDF, images.FormatDOCX, images.FormatPPTX, images.FormatImage:
	default:
		return sections, nil // formats without images
	}
	mode := images.Mode(c.ImageDescriptionMode)
	if mode == "" {
		mode = images.ModeAll
	}
	src := images.Source{Path: path, Name: f.Name, Format: doc.Format, PageCount: doc.PageCount}
	for _, p := range doc.Pages {
		if images.HasText(p.Text) {
			src.TextPages = append(src.TextPages, p.Number)
		}
	}
	if s.describer == nil {
		const noDescriber = "no image describer is configured (install tesseract-ocr or configure a vision model)"
		if doc.Format == images.FormatImage {
			return nil, worker.Permanent(errors.New("image file: " + noDescriber))
		}
		// Warn only when the file has an image the mode would describe: stop at the first.
		found := errors.New("found")
		if _, err := s.imageFinder.Collect(ctx, src, mode, func(images.Image) error { return found }); errors.Is(err, found) {
			doc.Warnings = append(doc.Warnings, "images were not described: "+noDescriber)
		} else if err != nil {
			return nil, fmt.Errorf("find images: %w", err)
		}
		return sections, nil
	}
	descs, warns, err := s.imageFinder.Describe(ctx, s.describer, src, mode)
	if err != nil {
		return nil, fmt.Errorf("describe images: %w", err)
	}
	if len(descs) > 0 && len(doc.Pages) == 0 {
		// The extractor warned that the file holds no text (a PDF without a text layer);
		// the images gave it text, so that warning no longer holds.
		doc.Warnings = slices.DeleteFunc(doc.Warnings, func(w string) bool { return strings.HasPrefix(w, "no text") })
	}
	if len(descs) == 0 && doc.Format == images.FormatImage && len(warns) == 0 {
		warns = append(warns, "no text could be read from the image")
	}
	doc.Warnings = append(doc.Warnings, warns...)
	for _, d := range descs {
		sections = append(sections, chunk.Section{Page: d.Page, Text: d.Section()})
	}
	// Chunks follow document order: a description goes after the text of its page (the
	// sort is stable and the text came first).
	slices.SortStableFunc(sections, func(a, b chunk.Section) int { return a.Page - b.Page })
	s.log.DebugContext(ctx, "described images", "file", f.ID, "mode", mode, "descriptions", len(descs), "warnings", len(warns))
	return sections, nil
}

// embed calls the embedder in batches.
func (s *Service) embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	// The job waits on the provider: its worker may start the next file meanwhile, whose
	// chunks then join the same embedding batches.
	size := 0
	for _, t := range texts {
		size += len(t)
	}
	if size <= maxWaitingText {
		resume := worker.Wait(ctx)
		defer resume()
	}
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

// maxWaitingText is the most text a job may hold while it waits on a provider without a worker
// (worker.Wait): with its pages, chunks and vectors a job beyond the workers then holds one to two
// megabytes (some 100 MB for the default 64 such jobs), whatever the size of the files. A larger file
// keeps its worker while it waits.
const maxWaitingText = 256 << 10

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
