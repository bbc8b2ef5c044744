package docindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/store"
	"github.com/docindex/docindex/docindex/worker"
)

// errFileGone aborts an import whose file was deleted while it ran.
var errFileGone = errors.New("file deleted during import")

// liveObject is the collection's liveSchema as a JSON object: a collection created without
// tables stores a JSON null, which the jsonb operators below do not take.
const liveObject = "(CASE WHEN jsonb_typeof(live_schema) = 'object' THEN live_schema ELSE '{}'::jsonb END)"

// importFile is the index job of a file in an imported dataset: the file becomes one typed table
// (one per workbook sheet), created or replaced together with its rows, the file's status and
// the collection's liveSchema in one transaction (see package dataset for the rules). Rejected
// rows leave the file indexed_with_warning with the first of them in its warning; a file that
// cannot be parsed fails the job for good.
func (s *Service) importFile(ctx context.Context, f *store.File, c *store.Collection) error {
	live, err := dataset.Parse(c.LiveSchema)
	if err != nil {
		return worker.Permanent(err)
	}
	// Only user-given definitions bind an import; those earlier imports inferred do not.
	declared, err := dataset.Declared(ctx, s.db, c.ID, live)
	if err != nil {
		return err
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
	plan, err := dataset.PlanImport(path, f.Name, ctype, declared)
	if err != nil {
		if errors.Is(err, dataset.ErrBadFile) {
			return worker.Permanent(err)
		}
		return fmt.Errorf("import: %w", err)
	}
	defer plan.Close()
	res, err := plan.Run(ctx, s.db, c.ID, f.ID, func(ctx context.Context, tx bun.Tx, res *dataset.ImportResult) error {
		status, warning := "indexed", res.Warning()
		if warning != "" {
			status = "indexed_with_warning"
		}
		// The file row is updated in the import's transaction: a delete that removed it first
		// makes this import a no-op; a delete that comes later waits and then drops the tables.
		r, err := tx.NewUpdate().Model((*store.File)(nil)).
			Set("status = ?, warning = ?, page_count = NULL, last_indexed_at = now(), updated_at = now()", status, truncate(warning, 2000)).
			Where("id = ?", f.ID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("update file: %w", err)
		}
		if n, err := r.RowsAffected(); err == nil && n == 0 {
			return errFileGone
		}
		defs, err := json.Marshal(res.Tables)
		if err != nil {
			return fmt.Errorf("encode tables: %w", err)
		}
		dropped := res.Dropped
		if dropped == nil {
			dropped = []string{}
		}
		// One statement, so concurrent imports into the collection each merge their tables.
		if _, err := tx.NewUpdate().Model((*store.Collection)(nil)).
			Set("live_schema = ("+liveObject+" - ?::text[]) || ?::jsonb", pgdialect.Array(dropped), string(defs)).
			Set("last_ingested_at = now()").
			Where("id = ?", c.ID).Exec(ctx); err != nil {
			return fmt.Errorf("record tables: %w", err)
		}
		return nil
	})
	if errors.Is(err, errFileGone) {
		return nil
	}
	if err != nil {
		if errors.Is(err, dataset.ErrBadFile) {
			return worker.Permanent(err)
		}
		return err
	}
	rows := 0
	for _, n := range res.Rows {
		rows += n
	}
	s.log.DebugContext(ctx, "imported file", "file", f.ID, "tables", len(res.Tables), "rows", rows,
		"rejected", res.Rejected, "ms", time.Since(t0).Milliseconds())
	return nil
}

// dropImported removes the tables a file imported (defined ones are emptied instead) and their
// inferred definitions from the liveSchema, in the caller's transaction.
func (s *Service) dropImported(ctx context.Context, tx bun.IDB, collectionID, fileID uuid.UUID) error {
	dropped, err := dataset.DropImported(ctx, tx, collectionID, fileID)
	if err != nil {
		return fmt.Errorf("drop imported tables: %w", err)
	}
	if len(dropped) == 0 {
		return nil
	}
	if _, err := tx.NewUpdate().Model((*store.Collection)(nil)).
		Set("live_schema = "+liveObject+" - ?::text[]", pgdialect.Array(dropped)).
		Where("id = ?", collectionID).Exec(ctx); err != nil {
		return fmt.Errorf("drop imported tables: %w", err)
	}
	return nil
}
