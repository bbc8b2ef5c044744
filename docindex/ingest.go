package docindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/store"
)

// IngestResult is the answer to an ingest: inserted + rejected is the number of rows sent.
type IngestResult struct {
	Inserted int                `json:"inserted"`
	Rejected int                `json:"rejected"`
	Errors   []dataset.RowError `json:"errors"`
}

// liveTable finds a live dataset's table by technical names, checking the caller's rights.
func (s *Service) liveTable(ctx context.Context, p *access.Principal, collectionName, tableName string, write bool) (*store.Collection, dataset.Table, error) {
	if !dataset.ValidIdent(tableName) {
		return nil, dataset.Table{}, invalid("Invalid request: invalid table name %q", tableName)
	}
	c := &store.Collection{}
	if err := s.db.NewSelect().Model(c).Where("name = ?", collectionName).Scan(ctx); err != nil {
		if errors.Is(err, errNoRows) {
			return nil, dataset.Table{}, Errorf(ErrNotFound, "Not found: no dataset %q", collectionName)
		}
		return nil, dataset.Table{}, err
	}
	_, role, err := s.collectionRole(ctx, s.db, p, c.ID)
	if err != nil {
		return nil, dataset.Table{}, err
	}
	if role == access.None {
		return nil, dataset.Table{}, Errorf(ErrNotFound, "Not found: no dataset %q", collectionName)
	}
	if write && (!role.AtLeast(access.Admin) || !p.CanWrite()) {
		return nil, dataset.Table{}, Errorf(ErrForbidden, "Admin access required")
	}
	if c.Type != "dataset" || c.DatasetMode != "live" {
		return nil, dataset.Table{}, Errorf(ErrNotFound, "Not found: %q is not a live dataset", collectionName)
	}
	tables, err := dataset.Parse(c.LiveSchema)
	if err != nil {
		return nil, dataset.Table{}, err
	}
	t, ok := tables[tableName]
	if !ok {
		return nil, dataset.Table{}, Errorf(ErrNotFound, "Not found: dataset %q has no table %q", collectionName, tableName)
	}
	return c, t, nil
}

// Ingest validates and stores rows of a live dataset table from a body {"rows": [...]} read as a
// stream. Invalid rows are reported by index and never stop the valid ones; rows upsert on the
// primary column, the last of several with one key in a request winning.
func (s *Service) Ingest(ctx context.Context, p *access.Principal, collectionName, tableName string, body io.Reader) (*IngestResult, error) {
	c, t, err := s.liveTable(ctx, p, collectionName, tableName, true)
	if err != nil {
		return nil, err
	}
	res := &IngestResult{Errors: []dataset.RowError{}}
	// The body is decoded in one goroutine while the rows stream into COPY in another, so
	// PostgreSQL loads while Go still parses. A malformed body aborts the COPY: nothing changes.
	copyCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Three stages run at once: parsing the JSON, validating and coercing rows, and PostgreSQL
	// loading them; the first two use Go's cores while the third uses the database's.
	type parsed struct {
		i   int
		obj map[string]json.RawMessage
	}
	objs := make(chan parsed, 256)
	rows := make(chan []any, 256)
	var decodeErr error
	go func() {
		defer close(objs)
		decodeErr = dataset.DecodeRows(body, func(i int, obj map[string]json.RawMessage) {
			select {
			case objs <- parsed{i, obj}:
			case <-copyCtx.Done():
			}
		})
	}()
	go func() {
		defer close(rows)
		for o := range objs {
			row, err := t.RowObject(o.obj)
			if err != nil {
				res.Rejected++
				res.Errors = append(res.Errors, dataset.RowError{Index: o.i, Error: err.Error()})
				continue
			}
			res.Inserted++
			select {
			case rows <- row:
			case <-copyCtx.Done():
			}
		}
	}()
	_, err = dataset.IngestStream(copyCtx, s.db, c.ID, tableName, t, func() ([]any, error) {
		row, ok := <-rows
		if !ok {
			return nil, decodeErr // nil: the body ended well (rows closes after objs, after decodeErr is set)
		}
		return row, nil
	})
	cancel()
	for range rows { // let the decoder finish before its results are read
	}
	if decodeErr != nil {
		err = decodeErr
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, Errorf(ErrTooLarge, "Request too large (limit %d bytes)", dataset.MaxBodyBytes)
	case errors.Is(err, dataset.ErrTooManyRows):
		return nil, invalid("Invalid request: more than %d rows", dataset.MaxRows)
	case errors.Is(err, dataset.ErrMalformed):
		return nil, invalid("Invalid request: %v", err)
	case err != nil:
		return nil, err
	}

	if _, err := s.db.NewUpdate().Model((*store.Collection)(nil)).Set("last_ingested_at = now()").
		Where("id = ?", c.ID).Exec(ctx); err != nil {
		return nil, fmt.Errorf("record ingest: %w", err)
	}
	return res, nil
}

// TableInfo is a dataset table with its definition and row count.
type TableInfo struct {
	Name          string                 `json:"name"`
	Columns       []dataset.Column       `json:"columns"`
	Relationships []dataset.Relationship `json:"relationships,omitempty"`
	RowCount      int64                  `json:"rowCount"`
}

// ListTables lists a collection's tables (live dataset or extraction) with row counts; viewers may.
func (s *Service) ListTables(ctx context.Context, p *access.Principal, id uuid.UUID) ([]TableInfo, error) {
	c, err := s.GetCollection(ctx, p, id)
	if err != nil {
		return nil, err
	}
	tables, err := dataset.Parse(c.LiveSchema)
	if err != nil {
		return nil, err
	}
	out := []TableInfo{}
	for _, name := range tables.Names() {
		t := tables[name]
		n, err := dataset.Count(ctx, s.db, c.ID, name)
		if err != nil {
			return nil, err
		}
		out = append(out, TableInfo{Name: name, Columns: t.Columns, Relationships: t.Relationships, RowCount: n})
	}
	return out, nil
}

// RowsQuery pages and filters ReadRows.
type RowsQuery = dataset.Query

// ReadRows returns rows of a collection's table; viewers may.
func (s *Service) ReadRows(ctx context.Context, p *access.Principal, id uuid.UUID, table string, q RowsQuery) ([]map[string]any, error) {
	c, err := s.GetCollection(ctx, p, id)
	if err != nil {
		return nil, err
	}
	tables, err := dataset.Parse(c.LiveSchema)
	if err != nil {
		return nil, err
	}
	t, ok := tables[table]
	if !ok {
		return nil, Errorf(ErrNotFound, "Not found: no table %q", table)
	}
	rows, err := dataset.Read(ctx, s.db, c.ID, table, t, q)
	if errors.Is(err, dataset.ErrBadQuery) {
		return nil, invalid("Invalid request: %v", err)
	}
	return rows, err
}
