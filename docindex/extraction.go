package docindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/extract"
	"github.com/docindex/docindex/docindex/store"
	"github.com/docindex/docindex/docindex/structured"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/llm"
)

// WithLLM sets the language model that fills the extraction tables of collections with
// structured extraction enabled; a *pluginhost.Host or a provider such as plugins/llms/openai
// fits. Without one those files end indexed_with_warning, their text still searchable.
func WithLLM(m llm.LLM) Option { return func(s *Service) { s.llm = m } }

// WithExtractionModel sets the model structured extraction asks (default: the first model the
// LLM lists).
func WithExtractionModel(id string) Option { return func(s *Service) { s.extractModel = id } }

// noLLM is the warning of a file whose collection wants extraction on a service without a model.
const noLLM = "structured extraction skipped: no language model is configured (the text is indexed and searchable; configure an LLM provider and reindex)"

// extractStructured fills the collection's extraction tables from the document once its chunks
// are written, and returns what the file's warning should add. The file's rows are always
// replaced by what this run extracted: when extraction cannot run at all, the rows of an
// earlier version of the file go too, since they may no longer hold.
//
// When the model did not answer for a reason that may pass (its server down, rate limits) and
// retry is set, it writes nothing and returns an error instead, so that the job is retried
// later: an outage of a few minutes then leaves no file without its rows. On the job's last
// attempt the rows that did come back are kept and the failure is a warning.
func (s *Service) extractStructured(ctx context.Context, c *store.Collection, f *store.File, doc *extract.Document, retry bool) ([]string, error) {
	if !c.StructuredExtractionEnabled {
		return nil, nil
	}
	tables, err := dataset.Parse(c.LiveSchema)
	if err != nil {
		return []string{"structured extraction skipped: " + err.Error()}, nil
	}
	if len(tables) == 0 {
		return []string{"structured extraction skipped: the collection defines no tables"}, nil
	}
	var warnings []string
	rows := map[string][][]any{}
	if s.llm == nil {
		warnings = append(warnings, noLLM)
	} else if model, err := s.resolveExtractionModel(ctx); err != nil {
		warnings = append(warnings, "structured extraction skipped: "+err.Error())
	} else {
		maxPages := 0
		if c.ExtractionMaxPages != nil {
			maxPages = *c.ExtractionMaxPages
		}
		t0 := time.Now()
		ex := structured.New(s.llm, model.ID, structured.WithContextTokens(model.ContextTokens))
		resume := func() {}
		if size := docSize(doc); size <= maxWaitingText {
			resume = worker.Wait(ctx) // seconds per request: the worker may take the next file
		}
		res, err := ex.Extract(ctx, structured.Input{Tables: tables, Instructions: c.ExtractionInstructions,
			MaxPages: maxPages, Name: f.Name, Pages: doc.Pages, PageCount: doc.PageCount})
		resume()
		if err != nil {
			return []string{err.Error()}, nil // cancelled: the job ends or is retried, rows untouched
		}
		if res.Unavailable != nil && retry {
			return nil, fmt.Errorf("structured extraction: the language model did not answer (the job is retried): %w", res.Unavailable)
		}
		rows, warnings = res.Rows, res.Warnings
		s.log.DebugContext(ctx, "extracted rows", "file", f.ID, "model", model.ID, "requests", res.Requests,
			"warnings", len(res.Warnings), "ms", time.Since(t0).Milliseconds())
	}
	if err := s.writeExtraction(ctx, c, f, tables, rows); err != nil {
		warnings = append(warnings, "structured extraction rows not stored: "+err.Error())
	}
	return warnings, nil
}

// writeExtraction replaces the file's rows unless the file was deleted meanwhile. The file row
// is locked (FOR KEY SHARE) in the same transaction: a teardown deletes that row first, so it
// either finished before (no row: nothing is written) or waits for this write and then deletes
// the rows it wrote. Either way no row outlives its file.
func (s *Service) writeExtraction(ctx context.Context, c *store.Collection, f *store.File, tables dataset.Tables, rows map[string][][]any) error {
	return s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var ok bool
		err := tx.NewSelect().Model((*store.File)(nil)).ColumnExpr("true").Where("f.id = ?", f.ID).
			For("KEY SHARE").Scan(ctx, &ok)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("lock file: %w", err)
		}
		return structured.Replace(ctx, tx, c.ID, f.ID, tables, rows)
	})
}

// resolveExtractionModel picks the configured model, or the first one the LLM lists. A
// configured model the catalog does not show is still used (providers may serve unlisted
// models); the catalog only tells its context size.
func (s *Service) resolveExtractionModel(ctx context.Context) (llm.Model, error) {
	models, err := s.llm.Models(ctx)
	if s.extractModel != "" {
		for _, m := range models {
			if m.ID == s.extractModel {
				return m, nil
			}
		}
		return llm.Model{ID: s.extractModel}, nil
	}
	if err != nil {
		return llm.Model{}, fmt.Errorf("list language models: %w", err)
	}
	if len(models) == 0 {
		return llm.Model{}, errors.New("the language model provider lists no models")
	}
	return models[0], nil
}

// docSize is the bytes of a document's text.
func docSize(doc *extract.Document) int {
	n := 0
	for _, p := range doc.Pages {
		n += len(p.Text)
	}
	return n
}
