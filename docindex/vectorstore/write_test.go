package vectorstore_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pgvector/pgvector-go"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/docindextest"
	"github.com/docindex/docindex/docindex/vectorstore"
)

func testChunks(prefix string) []vectorstore.Chunk {
	return []vectorstore.Chunk{
		{Ordinal: 0, Text: prefix + " apple", Pages: []int{1, 2}, Metadata: map[string]any{"h": "one"}, Embedding: []float32{1, 0, 0}},
		{Ordinal: 1, Text: prefix + " banana", Embedding: []float32{0, 1, 0}},
		{Ordinal: 2, Text: prefix + " cherry", Pages: []int{}, Embedding: nil},
	}
}

// checkWritten asserts that file holds the three chunks of testChunks and that both rankings
// find them.
func checkWritten(t *testing.T, s *vectorstore.Store, col, file uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	n, err := s.Count(ctx, col, uuid.NullUUID{UUID: file, Valid: true})
	if err != nil || n != 3 {
		t.Fatalf("Count = %d, %v; want 3", n, err)
	}
	res, err := s.Search(ctx, col, vectorstore.Query{Mode: vectorstore.ModeVector, Vector: []float32{0.9, 0.1, 0}, TopK: 1})
	if err != nil || len(res) != 1 {
		t.Fatalf("vector search: %v, %v", res, err)
	}
	r := res[0]
	if r.FileID != file || r.Ordinal != 0 || !slices.Equal(r.Pages, []int{1, 2}) || r.Metadata["h"] != "one" {
		t.Fatalf("vector search found %+v", r)
	}
	res, err = s.Search(ctx, col, vectorstore.Query{Mode: vectorstore.ModeFulltext, Text: "cherry"})
	if err != nil || len(res) != 1 || res[0].Ordinal != 2 || len(res[0].Pages) != 0 {
		t.Fatalf("full-text search: %+v, %v", res, err)
	}
}

// The INSERT path that serves drivers other than pgx writes what COPY writes.
func TestInsertReplace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := docindextest.NewDB(t)
	s := vectorstore.New(db)
	col, file := uuid.New(), uuid.New()
	if err := s.Provision(ctx, db, col, 3, "english"); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"old", "new"} {
		if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return s.InsertReplace(ctx, tx, col, file, testChunks(prefix))
		}); err != nil {
			t.Fatal(err)
		}
	}
	checkWritten(t, s, col, file)
	res, err := s.Search(ctx, col, vectorstore.Query{Mode: vectorstore.ModeFulltext, Text: "old"})
	if err != nil || len(res) != 0 {
		t.Fatalf("old chunks survived: %v, %v", res, err)
	}
}

// When pgvector's pgx types are registered on the connection (an application may do so), COPY
// hands the registered codec a pgvector.Vector instead of raw bytes.
func TestReplaceRegisteredVectorType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := docindextest.NewDB(t)
	db.SetMaxOpenConns(1) // the one connection that has the type registered
	s := vectorstore.New(db)
	col, file := uuid.New(), uuid.New()
	if err := s.Provision(ctx, db, col, 3, "english"); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		var oid uint32
		if err := c.QueryRow(ctx, "SELECT 'vector'::regtype::oid").Scan(&oid); err != nil {
			return err
		}
		c.TypeMap().RegisterType(&pgtype.Type{Name: "vector", OID: oid, Codec: vectorCodec{}})
		return nil
	})
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(ctx, col, file, testChunks("x")); err != nil {
		t.Fatal(err)
	}
	checkWritten(t, s, col, file)
}

// vectorCodec encodes pgvector.Vector only, like pgvector-go's pgx codec.
type vectorCodec struct{}

func (vectorCodec) FormatSupported(f int16) bool { return f == pgx.BinaryFormatCode }
func (vectorCodec) PreferredFormat() int16       { return pgx.BinaryFormatCode }
func (vectorCodec) PlanEncode(_ *pgtype.Map, _ uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(pgvector.Vector); !ok || format != pgx.BinaryFormatCode {
		return nil
	}
	return encodeVector{}
}
func (vectorCodec) PlanScan(*pgtype.Map, uint32, int16, any) pgtype.ScanPlan { return nil }
func (vectorCodec) DecodeDatabaseSQLValue(*pgtype.Map, uint32, int16, []byte) (driver.Value, error) {
	return nil, errors.New("not decoded in this test")
}
func (vectorCodec) DecodeValue(*pgtype.Map, uint32, int16, []byte) (any, error) {
	return nil, errors.New("not decoded in this test")
}

type encodeVector struct{}

func (encodeVector) Encode(value any, buf []byte) ([]byte, error) {
	return value.(pgvector.Vector).EncodeBinary(buf)
}
