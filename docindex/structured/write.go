package structured

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/dataset"
)

// insertBatch bounds the rows of one INSERT, far below PostgreSQL's limit of 65535 parameters
// for the widest table a definition allows.
const insertBatch = 200

// Replace makes rows the file's rows in the collection's extraction tables, in one transaction
// (a savepoint when db is already a transaction): the file's previous rows are deleted from
// every table, then the new ones inserted, so a reindex never leaves stale or doubled rows.
// rows holds values in column order, as Extract returns them; tables without rows end empty
// for the file.
func Replace(ctx context.Context, db bun.IDB, collectionID, fileID uuid.UUID, tables dataset.Tables, rows map[string][][]any) error {
	schema := bun.Ident(dataset.Schema(collectionID))
	for name := range rows {
		if _, ok := tables[name]; !ok {
			return fmt.Errorf("write extraction rows: no table %q", name)
		}
	}
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, name := range tables.Names() {
			if _, err := tx.ExecContext(ctx, "DELETE FROM ?.? WHERE _file_id = ?", schema, bun.Ident(name), fileID); err != nil {
				return fmt.Errorf("delete extraction rows of %s: %w", name, err)
			}
			t := tables[name]
			rs := rows[name]
			for start := 0; start < len(rs); start += insertBatch {
				q, args := insert(schema, name, t, fileID, rs[start:min(start+insertBatch, len(rs))])
				if _, err := tx.ExecContext(ctx, q, args...); err != nil {
					return fmt.Errorf("insert extraction rows into %s: %w", name, err)
				}
			}
		}
		return nil
	})
}

// insert builds one multi-row INSERT. Identifiers go through bun.Ident and values are bound
// arguments; the query text itself holds only placeholders.
func insert(schema bun.Ident, name string, t dataset.Table, fileID uuid.UUID, rows [][]any) (string, []any) {
	n := len(t.Columns)
	args := make([]any, 0, 2+n+len(rows)*(n+1))
	args = append(args, schema, bun.Ident(name))
	// One placeholder per value: bun.In would be shorter but panics on a nil value.
	marks := "(?" + strings.Repeat(", ?", n) + ")"
	var b strings.Builder
	b.WriteString("INSERT INTO ?.? (_file_id")
	for _, c := range t.Columns {
		b.WriteString(", ?")
		args = append(args, bun.Ident(c.Name))
	}
	b.WriteString(") VALUES ")
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(marks)
		args = append(args, fileID)
		args = append(args, r[:n]...)
	}
	return b.String(), args
}
