package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
// 64 MiB body is never held whole. Other top-level keys are refused. Each element is parsed once,
// into an object of raw values when it is an object (obj nil otherwise).
func DecodeRows(r io.Reader, fn func(i int, obj map[string]json.RawMessage)) error {
	dec := json.NewDecoder(r)
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
			// The decoder checks the JSON and hands over the row's bytes; splitObject then parses
			// the object without reflection.
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return malformed("row %d: %v", i, err)
			}
			obj, err := splitObject(raw)
			if err != nil {
				obj = nil // not an object: the row is rejected, the stream goes on
			}
			fn(i, obj)
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

// Ingest writes rows (each from Table.Row) into a live table: see IngestStream.
func Ingest(ctx context.Context, db *bun.DB, collectionID uuid.UUID, table string, t Table, rows [][]any) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	i := 0
	return IngestStream(ctx, db, collectionID, table, t, func() ([]any, error) {
		if i >= len(rows) {
			return nil, nil
		}
		i++
		return rows[i-1], nil
	})
}

// IngestStream writes the rows next yields (nil at the end; an error aborts and changes nothing)
// into a live table: COPY into a temporary staging table while the rows are still being decoded,
// then one statement that upserts on the primary column. Of several rows with one key the last
// wins. It returns the number of rows written.
func IngestStream(ctx context.Context, db *bun.DB, collectionID uuid.UUID, table string, t Table, next func() ([]any, error)) (int, error) {
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
		// The staging table has the target's column types but none of its constraints: rows are
		// validated already, and the merge applies the constraints once. Numeric columns stage as
		// text (validated decimal literals), cast once in the merge: cheaper than encoding each
		// value into PostgreSQL's binary numeric in Go.
		stageCols := make([]string, len(t.Columns))
		selectCols := make([]string, len(t.Columns))
		pkIdx := -1
		for i, c := range t.Columns {
			cols[i] = c.Name
			colIdents[i] = pgx.Identifier{c.Name}.Sanitize()
			stageCols[i], selectCols[i] = colIdents[i], colIdents[i]
			if c.Type == "numeric" {
				stageCols[i] = colIdents[i] + "::text AS " + colIdents[i]
				selectCols[i] = colIdents[i] + "::numeric"
			}
			if c.Primary {
				pkIdx = i
			}
		}
		if _, err := tx.Exec(ctx, "CREATE TEMP TABLE docindex_stage ON COMMIT DROP AS SELECT "+
			strings.Join(stageCols, ", ")+", 0::integer AS _ord FROM "+target+" WITH NO DATA"); err != nil {
			return fmt.Errorf("staging table: %w", err)
		}
		// Duplicate keys are noticed while copying; only then does the merge need to sort.
		numericKey := pkIdx >= 0 && t.Columns[pkIdx].Type == "numeric"
		seen := map[any]struct{}{}
		dup := false
		ord := int32(0)
		src := pgx.CopyFromFunc(func() ([]any, error) {
			row, err := next()
			if err != nil || row == nil {
				return nil, err
			}
			if pkIdx >= 0 && !dup {
				k := keyOf(row[pkIdx], numericKey)
				if _, ok := seen[k]; ok {
					dup = true
				}
				seen[k] = struct{}{}
			}
			ord++
			return append(row[:len(t.Columns)], ord), nil // RowObject leaves room for it
		})
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"docindex_stage"}, append(cols, "_ord"), src); err != nil {
			return fmt.Errorf("copy rows: %w", err)
		}
		list := strings.Join(colIdents, ", ")
		sel := strings.Join(selectCols, ", ")
		var merge string
		switch {
		case pkIdx >= 0:
			pkIdent := colIdents[pkIdx]
			sets := make([]string, 0, len(colIdents)+1)
			for _, c := range colIdents {
				sets = append(sets, c+" = EXCLUDED."+c)
			}
			sets = append(sets, "_ingested_at = now()")
			from := " FROM docindex_stage"
			if dup {
				from = " FROM (SELECT DISTINCT ON (" + selectCols[pkIdx] + ") * FROM docindex_stage ORDER BY " +
					selectCols[pkIdx] + ", _ord DESC) AS last"
			}
			merge = "INSERT INTO " + target + " (" + list + ") SELECT " + sel + from +
				" ON CONFLICT (" + pkIdent + ") DO UPDATE SET " + strings.Join(sets, ", ")
		default:
			merge = "INSERT INTO " + target + " (" + list + ") SELECT " + sel + " FROM docindex_stage ORDER BY _ord"
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

// keyOf makes a coerced value usable as a map key that compares like the database does:
// timestamps by instant, numerics by value ("1.0" and "1" are one key).
func keyOf(v any, numeric bool) any {
	switch x := v.(type) {
	case time.Time:
		return x.UnixNano()
	case string:
		if numeric {
			if r, ok := new(big.Rat).SetString(x); ok {
				return r.RatString()
			}
		}
		return x
	}
	return v
}
