package docindex_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/docindextest"
)

func liveDataset(t *testing.T) (*docindex.Service, *access.Principal) {
	t.Helper()
	svc, err := docindex.New(docindextest.NewDB(t), docindex.WithLogger(testLogger()))
	if err != nil {
		t.Fatal(err)
	}
	p := ownerPrincipal(t, svc)
	no := false
	_, err = svc.CreateCollection(context.Background(), p, docindex.CollectionInput{Name: "shop", Type: "dataset", DatasetMode: "live",
		Tables: dataset.Tables{"orders": {Columns: []dataset.Column{
			{Name: "id", Type: "integer", Primary: true},
			{Name: "customer", Type: "text", Nullable: &no},
			{Name: "total", Type: "numeric"},
			{Name: "paid", Type: "boolean"},
			{Name: "at", Type: "timestamp"},
		}}, "log": {Columns: []dataset.Column{{Name: "line", Type: "text"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, p
}

func TestIngestUpsertsAndRejectsRowByRow(t *testing.T) {
	ctx := context.Background()
	svc, p := liveDataset(t)
	body := `{"rows": [
		{"id": 1, "customer": "ann", "total": "10.50", "paid": "true", "at": "2024-05-01"},
		{"id": "2", "customer": "bob", "total": 3, "paid": false},
		{"id": 3, "customer": null},
		{"id": 4, "customer": "cat", "colour": "red"},
		{"id": 1, "customer": "ann again", "total": 11},
		{"id": 5.5, "customer": "eve"}
	]}`
	res, err := svc.Ingest(ctx, p, "shop", "orders", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 3 || res.Rejected != 3 || len(res.Errors) != 3 {
		t.Fatalf("result %+v", res)
	}
	wantErr := map[int]string{2: `"customer" must not be null`, 3: `unknown column "colour"`, 5: "fraction"}
	for _, e := range res.Errors {
		if !strings.Contains(e.Error, wantErr[e.Index]) {
			t.Errorf("row %d: %q, want %q", e.Index, e.Error, wantErr[e.Index])
		}
	}
	rows, err := svc.ReadRows(ctx, p, collectionID(t, svc, "shop"), "orders", docindex.RowsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0]["customer"] != "ann again" || fmt.Sprint(rows[0]["total"]) != "11" || rows[1]["paid"] != false {
		t.Fatalf("rows %v", rows)
	}
	// A second request upserts on the primary column.
	res, err = svc.Ingest(ctx, p, "shop", "orders", strings.NewReader(`{"rows": [{"id": 2, "customer": "bob", "total": "99.99"}, {"id": 7, "customer": "dan"}]}`))
	if err != nil || res.Inserted != 2 || res.Rejected != 0 {
		t.Fatalf("second ingest %+v %v", res, err)
	}
	rows, _ = svc.ReadRows(ctx, p, collectionID(t, svc, "shop"), "orders", docindex.RowsQuery{Filters: map[string]string{"id": "2"}})
	if len(rows) != 1 || fmt.Sprint(rows[0]["total"]) != "99.99" {
		t.Fatalf("upserted row %v", rows)
	}
	tables, err := svc.ListTables(ctx, p, collectionID(t, svc, "shop"))
	if err != nil || len(tables) != 2 || tables[1].Name != "orders" || tables[1].RowCount != 3 {
		t.Fatalf("tables %+v %v", tables, err)
	}
	c, _ := svc.GetCollection(ctx, p, collectionID(t, svc, "shop"))
	if c.LastIngestedAt == nil {
		t.Fatal("lastIngestedAt not set")
	}
	// An empty rows array inserts nothing and answers the same shape.
	res, err = svc.Ingest(ctx, p, "shop", "log", strings.NewReader(`{"rows": []}`))
	if err != nil || res.Inserted != 0 || res.Rejected != 0 || res.Errors == nil {
		t.Fatalf("empty ingest %+v %v", res, err)
	}
}

func TestIngestErrors(t *testing.T) {
	ctx := context.Background()
	svc, p := liveDataset(t)
	if _, err := svc.CreateCollection(ctx, p, docindex.CollectionInput{Name: "docs"}); err != nil {
		t.Fatal(err)
	}
	outsider := &access.Principal{UserID: ownerPrincipal(t, svc).UserID}
	outsider.UserID[0] ^= 1
	for name, tc := range map[string]struct {
		coll, table, body string
		p                 *access.Principal
		kind              error
	}{
		"bad table name":   {"shop", "Orders;", `{"rows": []}`, p, docindex.ErrInvalid},
		"unknown table":    {"shop", "nope", `{"rows": []}`, p, docindex.ErrNotFound},
		"unknown dataset":  {"nope", "orders", `{"rows": []}`, p, docindex.ErrNotFound},
		"not a dataset":    {"docs", "orders", `{"rows": []}`, p, docindex.ErrNotFound},
		"malformed body":   {"shop", "orders", `{"rows": [`, p, docindex.ErrInvalid},
		"rows not array":   {"shop", "orders", `{"rows": 1}`, p, docindex.ErrInvalid},
		"no access":        {"shop", "orders", `{"rows": []}`, outsider, docindex.ErrNotFound},
		"too many rows":    {"shop", "log", `{"rows": [` + strings.Repeat(`{},`, dataset.MaxRows) + `{}]}`, p, docindex.ErrInvalid},
		"read-only viewer": {"shop", "orders", `{"rows": []}`, &access.Principal{UserID: p.UserID, KeyID: keyID(), Perms: []string{"read"}}, docindex.ErrForbidden},
	} {
		_, err := svc.Ingest(ctx, tc.p, tc.coll, tc.table, strings.NewReader(tc.body))
		if !errors.Is(err, tc.kind) {
			t.Errorf("%s: %v, want kind %v", name, err, tc.kind)
		}
	}
	rows, _ := svc.ReadRows(ctx, p, collectionID(t, svc, "shop"), "log", docindex.RowsQuery{})
	if len(rows) != 0 {
		t.Fatalf("a refused request stored %d rows", len(rows))
	}
}

func collectionID(t testing.TB, svc *docindex.Service, name string) (id uuid.UUID) {
	t.Helper()
	if err := svc.DB().QueryRowContext(context.Background(), "SELECT id FROM docindex.collections WHERE name = ?", name).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func keyID() uuid.NullUUID { return uuid.NullUUID{UUID: uuid.New(), Valid: true} }
