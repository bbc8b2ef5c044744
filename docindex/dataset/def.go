package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Column types a table definition may use, and their PostgreSQL types.
var columnTypes = map[string]string{
	"text":      "text",
	"integer":   "bigint",
	"numeric":   "numeric",
	"boolean":   "boolean",
	"timestamp": "timestamptz",
}

var identRe = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// ValidIdent reports whether s may name a table or column.
func ValidIdent(s string) bool { return identRe.MatchString(s) }

// Column of a table definition. Nullable defaults to true; a primary column is never null.
type Column struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Primary  bool   `json:"primary,omitempty"`
	Nullable *bool  `json:"nullable,omitempty"`
}

// IsNullable applies the defaults: true when omitted, false for the primary column.
func (c Column) IsNullable() bool {
	if c.Primary {
		return false
	}
	return c.Nullable == nil || *c.Nullable
}

// Relationship is a foreign-key style link from a column to another table's primary column. It is
// validated and recorded in the schema, not enforced by a constraint, so rows may arrive in any order.
type Relationship struct {
	Column           string `json:"column"`
	ReferencesTable  string `json:"referencesTable"`
	ReferencesColumn string `json:"referencesColumn"`
}

// Table is one table definition.
type Table struct {
	Columns       []Column       `json:"columns"`
	Relationships []Relationship `json:"relationships,omitempty"`
}

// Primary returns the primary column, if any.
func (t Table) Primary() (Column, bool) {
	for _, c := range t.Columns {
		if c.Primary {
			return c, true
		}
	}
	return Column{}, false
}

// Column returns the named column.
func (t Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// Tables maps table names to definitions.
type Tables map[string]Table

// Names returns the table names in sorted order.
func (ts Tables) Names() []string {
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// reserved column names are used by docindex itself in provisioned tables.
var reserved = map[string]bool{"_file_id": true, "_ingested_at": true}

// Validate checks names, types, the single primary column and relationships. The error says
// which table and column are wrong.
func (ts Tables) Validate() error {
	if len(ts) == 0 {
		return fmt.Errorf("tables: at least one table is required")
	}
	for _, name := range ts.Names() {
		t := ts[name]
		if !ValidIdent(name) {
			return fmt.Errorf("table %q: name must match ^[a-z_][a-z0-9_]{0,62}$", name)
		}
		if len(t.Columns) == 0 {
			return fmt.Errorf("table %q: at least one column is required", name)
		}
		seen := map[string]bool{}
		primaries := 0
		for i, c := range t.Columns {
			if !ValidIdent(c.Name) {
				return fmt.Errorf("table %q column %d: name %q must match ^[a-z_][a-z0-9_]{0,62}$", name, i, c.Name)
			}
			if reserved[c.Name] {
				return fmt.Errorf("table %q: column name %q is reserved", name, c.Name)
			}
			if seen[c.Name] {
				return fmt.Errorf("table %q: duplicate column %q", name, c.Name)
			}
			seen[c.Name] = true
			if _, ok := columnTypes[c.Type]; !ok {
				return fmt.Errorf("table %q column %q: type %q is not one of text, integer, numeric, boolean, timestamp", name, c.Name, c.Type)
			}
			if c.Primary {
				primaries++
			}
		}
		if primaries > 1 {
			return fmt.Errorf("table %q: at most one primary column", name)
		}
		for _, r := range t.Relationships {
			if _, ok := t.Column(r.Column); !ok {
				return fmt.Errorf("table %q relationship: unknown column %q", name, r.Column)
			}
			ref, ok := ts[r.ReferencesTable]
			if !ok {
				return fmt.Errorf("table %q relationship: unknown table %q", name, r.ReferencesTable)
			}
			if pk, ok := ref.Primary(); !ok || pk.Name != r.ReferencesColumn {
				return fmt.Errorf("table %q relationship: %s.%s is not the primary column of %q", name, r.ReferencesTable, r.ReferencesColumn, r.ReferencesTable)
			}
		}
	}
	return nil
}

// Normalized returns a copy with every default made explicit (nullable set on each column), the
// shape stored as the collection's liveSchema.
func (ts Tables) Normalized() Tables {
	out := make(Tables, len(ts))
	for name, t := range ts {
		cols := make([]Column, len(t.Columns))
		for i, c := range t.Columns {
			n := c.IsNullable()
			c.Nullable = &n
			cols[i] = c
		}
		out[name] = Table{Columns: cols, Relationships: t.Relationships}
	}
	return out
}

// Parse decodes a stored liveSchema.
func Parse(raw json.RawMessage) (Tables, error) {
	var ts Tables
	if len(raw) == 0 || string(raw) == "null" {
		return Tables{}, nil
	}
	if err := json.Unmarshal(raw, &ts); err != nil {
		return nil, fmt.Errorf("parse table definitions: %w", err)
	}
	return ts, nil
}

// Schema is the PostgreSQL schema holding a collection's tables.
func Schema(collectionID uuid.UUID) string {
	return "dix_" + strings.ReplaceAll(collectionID.String(), "-", "")
}

// Kind of provisioned tables.
type Kind int

const (
	// Live tables take rows through ingest; the primary column is the upsert key.
	Live Kind = iota
	// Extraction tables hold rows pulled out of documents; each row carries its file id so a
	// reindex replaces them and a delete removes them.
	Extraction
)

// Provision creates the collection's schema and tables inside tx.
func Provision(ctx context.Context, tx bun.IDB, collectionID uuid.UUID, ts Tables, kind Kind) error {
	schema := Schema(collectionID)
	if _, err := tx.ExecContext(ctx, "CREATE SCHEMA ?", bun.Ident(schema)); err != nil {
		return fmt.Errorf("provision schema %s: %w", schema, err)
	}
	for _, name := range ts.Names() {
		q, args := createTable(schema, name, ts[name], kind)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("provision table %s: %w", name, err)
		}
		if kind == Extraction {
			if _, err := tx.ExecContext(ctx, "CREATE INDEX ON ?.? (_file_id)", bun.Ident(schema), bun.Ident(name)); err != nil {
				return fmt.Errorf("provision table %s: %w", name, err)
			}
		}
	}
	return nil
}

func createTable(schema, name string, t Table, kind Kind) (string, []any) {
	var b strings.Builder
	args := []any{bun.Ident(schema), bun.Ident(name)}
	b.WriteString("CREATE TABLE ?.? (")
	if kind == Extraction {
		b.WriteString("_file_id uuid NOT NULL, ")
	} else {
		b.WriteString("_ingested_at timestamptz NOT NULL DEFAULT now(), ")
	}
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		// columnTypes values are constants of this package, never request text.
		b.WriteString("? " + columnTypes[c.Type])
		args = append(args, bun.Ident(c.Name))
		if !c.IsNullable() {
			b.WriteString(" NOT NULL")
		}
	}
	if pk, ok := t.Primary(); ok {
		if kind == Extraction {
			b.WriteString(", UNIQUE (_file_id, ?)")
		} else {
			b.WriteString(", PRIMARY KEY (?)")
		}
		args = append(args, bun.Ident(pk.Name))
	}
	b.WriteString(")")
	return b.String(), args
}

// Drop removes the collection's schema and every table in it.
func Drop(ctx context.Context, tx bun.IDB, collectionID uuid.UUID) error {
	if _, err := tx.ExecContext(ctx, "DROP SCHEMA IF EXISTS ? CASCADE", bun.Ident(Schema(collectionID))); err != nil {
		return fmt.Errorf("drop tables: %w", err)
	}
	return nil
}
