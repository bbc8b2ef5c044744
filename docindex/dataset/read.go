package dataset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
)

// ErrBadQuery is wrapped by errors about a row query's parameters.
var ErrBadQuery = errors.New("bad query")

// Query selects rows: equality filters on columns (values coerced like ingested ones), an order
// column with optional descending direction, a page.
type Query struct {
	Filters map[string]string
	Order   string // column name, "-name" for descending; default the primary column, else ingest order
	Limit   int    // default 100, at most 1000
	Offset  int
}

// Count returns a table's row count.
func Count(ctx context.Context, db bun.IDB, collectionID uuid.UUID, table string) (int64, error) {
	var n int64
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM ?.?", bun.Ident(Schema(collectionID)), bun.Ident(table)).Scan(&n)
	if isUndefinedTable(err) {
		return 0, nil // an imported table that no file has produced yet
	}
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", table, err)
	}
	return n, nil
}

// Read returns rows as column -> value maps.
func Read(ctx context.Context, db bun.IDB, collectionID uuid.UUID, table string, t Table, q Query) ([]map[string]any, error) {
	switch {
	case q.Limit == 0:
		q.Limit = 100
	case q.Limit < 0 || q.Limit > 1000:
		return nil, fmt.Errorf("%w: limit must be between 1 and 1000", ErrBadQuery)
	}
	if q.Offset < 0 {
		return nil, fmt.Errorf("%w: offset must not be negative", ErrBadQuery)
	}
	sel := db.NewSelect().TableExpr("?.? AS t", bun.Ident(Schema(collectionID)), bun.Ident(table))
	for _, c := range t.Columns {
		sel = sel.ColumnExpr("t.?", bun.Ident(c.Name))
	}
	for name, raw := range q.Filters {
		c, ok := t.Column(name)
		if !ok {
			return nil, fmt.Errorf("%w: unknown column %q", ErrBadQuery, name)
		}
		v, err := Coerce(c.Type, quoteJSON(c.Type, raw))
		if err != nil {
			return nil, fmt.Errorf("%w: filter %s: %v", ErrBadQuery, name, err)
		}
		if v == nil {
			sel = sel.Where("t.? IS NULL", bun.Ident(name))
		} else {
			sel = sel.Where("t.? = ?", bun.Ident(name), v)
		}
	}
	order := q.Order
	desc := strings.HasPrefix(order, "-")
	order = strings.TrimPrefix(order, "-")
	if order == "" {
		if pk, ok := t.Primary(); ok {
			order = pk.Name
		}
	}
	if order != "" {
		if _, ok := t.Column(order); !ok {
			return nil, fmt.Errorf("%w: unknown order column %q", ErrBadQuery, order)
		}
		dir := "ASC"
		if desc {
			dir = "DESC"
		}
		sel = sel.OrderExpr("t.? "+dir, bun.Ident(order))
	} else {
		sel = sel.OrderExpr("t.ctid")
	}
	sel = sel.Limit(int64(q.Limit)).Offset(int64(q.Offset))
	rows, err := sel.Rows(ctx)
	if isStalePlan(err) {
		// A re-import changed the table's column types; the connection's cached statement is
		// dropped by the failure, so one retry reads through.
		rows, err = sel.Rows(ctx)
	}
	if isUndefinedTable(err) {
		return []map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	out := []map[string]any{}
	for rows.Next() {
		vals := make([]any, len(t.Columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		m := make(map[string]any, len(vals))
		for i, c := range t.Columns {
			m[c.Name] = jsonValue(c.Type, vals[i])
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// quoteJSON turns a query-string value into the JSON the coercion expects.
func quoteJSON(typ, raw string) []byte {
	if raw == "null" {
		return []byte("null")
	}
	return []byte(fmt.Sprintf("%q", raw))
}

// jsonValue gives numeric columns as numbers in JSON, not as the driver's text.
func jsonValue(typ string, v any) any {
	if typ == "numeric" {
		switch x := v.(type) {
		case []byte:
			return jsonNumber(string(x))
		case string:
			return jsonNumber(x)
		}
	}
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}

type jsonNumber string

func (n jsonNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }

func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

func isUndefinedTable(err error) bool { return pgCode(err) == "42P01" }

// isStalePlan: "cached plan must not change result type".
func isStalePlan(err error) bool { return pgCode(err) == "0A000" }
