package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

// Limits of one ingest request.
const (
	MaxRows      = 10_000
	MaxBodyBytes = 64 << 20
)

var (
	// ErrTooManyRows: the request holds more than MaxRows rows.
	ErrTooManyRows = fmt.Errorf("more than %d rows", MaxRows)
	// ErrMalformed: the body is not {"rows": [ ... ]}.
	ErrMalformed = errors.New("malformed body")
)

// RowError reports one rejected row by its 0-based index in the request.
type RowError struct {
	Index int    `json:"index"`
	Error string `json:"error"`
}

// DecodeRows reads {"rows": [...]} as a stream, calling fn with each element in order, so a
// 64 MiB body is never held whole. Other top-level keys are refused.
func DecodeRows(r io.Reader, fn func(i int, raw json.RawMessage)) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	malformed := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	tok, err := dec.Token()
	if err != nil {
		return malformed("expected a JSON object: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return malformed("expected a JSON object")
	}
	sawRows := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return malformed("%v", err)
		}
		key, _ := tok.(string)
		if key != "rows" {
			return malformed("unknown field %q (only \"rows\")", key)
		}
		sawRows = true
		tok, err = dec.Token()
		if err != nil {
			return malformed("%v", err)
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return malformed("rows must be an array")
		}
		i := 0
		for dec.More() {
			if i >= MaxRows {
				return ErrTooManyRows
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return malformed("row %d: %v", i, err)
			}
			fn(i, raw)
			i++
		}
		if _, err := dec.Token(); err != nil {
			return malformed("%v", err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return malformed("%v", err)
	}
	if !sawRows {
		return malformed("rows is required")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return malformed("trailing data after the body")
	}
	return nil
}

// copyValue adapts a coerced value to what pgx's COPY encoder takes.
func copyValue(typ string, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if typ == "numeric" {
		var n pgtype.Numeric
		if err := n.Scan(v.(string)); err != nil {
			return nil, err
		}
		return n, nil
	}
	return v, nil
}

// Ingest writes rows (each from Table.Row) into a live table: COPY into a temporary staging table,
// then one statement that upserts on the primary column. Of several rows with one key in a
// request the last wins. It returns the number of rows written.
func Ingest(ctx context.Context, db *bun.DB, collectionID uuid.UUID, table string, t Table, rows [][]any) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("ingest: %w", err)
	}
	defer conn.Close()
	written := 0
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("ingest needs a database opened with the pgx stdlib driver")
		}
		pc := sc.Conn()
		tx, err := pc.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
		target := pgx.Identifier{Schema(collectionID), table}.Sanitize()
		cols := make([]string, len(t.Columns))
		colIdents := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = c.Name
			colIdents[i] = pgx.Identifier{c.Name}.Sanitize()
		}
		// The staging table has the target's column types but none of its constraints: rows are
		// validated already, and the merge applies the constraints once.
		if _, err := tx.Exec(ctx, "CREATE TEMP TABLE docindex_stage ON COMMIT DROP AS SELECT "+
			strings.Join(colIdents, ", ")+" FROM "+target+" WITH NO DATA"); err != nil {
			return fmt.Errorf("staging table: %w", err)
		}
		if _, err := tx.Exec(ctx, "ALTER TABLE docindex_stage ADD COLUMN _ord integer"); err != nil {
			return fmt.Errorf("staging table: %w", err)
		}
		i := 0
		src := pgx.CopyFromFunc(func() ([]any, error) {
			if i >= len(rows) {
				return nil, nil
			}
			row := make([]any, len(t.Columns)+1)
			for j, c := range t.Columns {
				v, err := copyValue(c.Type, rows[i][j])
				if err != nil {
					return nil, fmt.Errorf("row %d column %s: %w", i, c.Name, err)
				}
				row[j] = v
			}
			row[len(t.Columns)] = int32(i)
			i++
			return row, nil
		})
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"docindex_stage"}, append(cols, "_ord"), src); err != nil {
			return fmt.Errorf("copy rows: %w", err)
		}
		list := strings.Join(colIdents, ", ")
		var merge string
		if pk, ok := t.Primary(); ok {
			pkIdent := pgx.Identifier{pk.Name}.Sanitize()
			sets := make([]string, 0, len(colIdents)+1)
			for _, c := range colIdents {
				sets = append(sets, c+" = EXCLUDED."+c)
			}
			sets = append(sets, "_ingested_at = now()")
			merge = "INSERT INTO " + target + " (" + list + ") SELECT DISTINCT ON (" + pkIdent + ") " + list +
				" FROM docindex_stage ORDER BY " + pkIdent + ", _ord DESC ON CONFLICT (" + pkIdent + ") DO UPDATE SET " +
				strings.Join(sets, ", ")
		} else {
			merge = "INSERT INTO " + target + " (" + list + ") SELECT " + list + " FROM docindex_stage ORDER BY _ord"
		}
		tag, err := tx.Exec(ctx, merge)
		if err != nil {
			return fmt.Errorf("merge rows: %w", err)
		}
		written = int(tag.RowsAffected())
		return tx.Commit(ctx)
	})
	if err != nil {
		return 0, fmt.Errorf("ingest into %s: %w", table, err)
	}
	return written, nil
}
