package vectorstore

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pgvector/pgvector-go"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Chunk is one piece of a file, as written by Replace.
type Chunk struct {
	// FileID may be left zero: Replace writes every chunk under its fileID argument, and refuses
	// a chunk that names another file.
	FileID    uuid.UUID
	Ordinal   int
	Text      string
	Pages     []int          // page numbers where known; nil stores NULL
	Metadata  map[string]any // nil stores {}
	Embedding []float32      // must have the table's dimension; nil stores NULL (found only by full text)
}

// columns are the columns Replace writes; id defaults to gen_random_uuid() and the delta's tsv is
// generated.
var columns = []string{"file_id", "ordinal", "text", "pages", "metadata", "embedding"}

// Replace makes chunks the chunks of fileID: it deletes the file's previous chunks, merged or
// not, and writes the new ones in one transaction, so a job that is retried, or that runs again
// after its worker died, never leaves duplicates. Rows go in with COPY when the database runs over
// pgx's stdlib driver. A transaction-scoped advisory lock on (collection, file) serializes two
// Replaces of the same file, which would otherwise both delete nothing and both insert, and
// Replace against the merge. An empty chunks only deletes. The tables must exist (Provision).
//
// The rows go into the collection's delta table, which has no HNSW index, and the file is
// recorded in chunk_pending in the same transaction; Merge moves them into the indexed table
// later. They are searchable as soon as Replace returns. When the collection's unmerged chunks
// would pass the store's bound (WithMaxPending), the rows go into the indexed table at once.
//
// Text is stored as valid UTF-8 without NUL bytes (PostgreSQL refuses both): invalid sequences
// become U+FFFD and NULs are dropped, rather than failing a whole file over one stray byte.
func (s *Store) Replace(ctx context.Context, collectionID, fileID uuid.UUID, chunks []Chunk) error {
	rows, err := prepare(fileID, chunks)
	if err != nil {
		return fmt.Errorf("vectorstore: replace chunks of file %s: %w", fileID, err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("vectorstore: replace chunks of file %s: %w", fileID, err)
	}
	defer conn.Close()
	viaCopy, deferred := false, false
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return nil
		}
		viaCopy = true
		deferred, err = s.copyReplace(ctx, sc.Conn(), collectionID, fileID, rows)
		return err
	})
	if err == nil && !viaCopy {
		err = conn.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			deferred, err = s.insertReplace(ctx, tx, collectionID, fileID, rows)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("vectorstore: replace chunks of file %s in %s: %w", fileID, Table(collectionID), err)
	}
	if deferred {
		s.poke()
	}
	return nil
}

// defer reports whether n rows go into the delta, given the chunks of other files already
// waiting there.
func (s *Store) deferRows(pending int64, n int) bool {
	return n > 0 && s.maxPending > 0 && pending+int64(n) <= int64(s.maxPending)
}

const (
	// pendingOthers is the number of unmerged chunks of the collection's other files.
	pendingOthers = "SELECT coalesce(sum(chunks), 0) FROM " + pendingTable + " WHERE collection_id = $1 AND file_id <> $2"
	pendingUpsert = "INSERT INTO " + pendingTable + " (collection_id, file_id, chunks) VALUES ($1, $2, $3) " +
		"ON CONFLICT (collection_id, file_id) DO UPDATE SET chunks = excluded.chunks, queued_at = now()"
	pendingDelete = "DELETE FROM " + pendingTable + " WHERE collection_id = $1 AND file_id = $2"
)

// row is a chunk ready to write.
type row struct {
	ordinal   int32
	text      string
	pages     []int32
	metadata  []byte
	embedding []float32
}

func prepare(fileID uuid.UUID, chunks []Chunk) ([]row, error) {
	rows := make([]row, len(chunks))
	for i, c := range chunks {
		if c.FileID != uuid.Nil && c.FileID != fileID {
			return nil, fmt.Errorf("chunk %d belongs to file %s", i, c.FileID)
		}
		meta := []byte("{}")
		if c.Metadata != nil {
			b, err := json.Marshal(c.Metadata)
			if err != nil {
				return nil, fmt.Errorf("metadata of chunk %d: %w", i, err)
			}
			meta = b
		}
		var pages []int32
		if c.Pages != nil {
			pages = make([]int32, len(c.Pages))
			for j, p := range c.Pages {
				pages[j] = int32(p)
			}
		}
		rows[i] = row{ordinal: int32(c.Ordinal), text: cleanText(c.Text), pages: pages, metadata: meta, embedding: c.Embedding}
	}
	return rows, nil
}

func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return s
}

// lockKey is the advisory lock of one file's chunks in one collection.
func lockKey(collectionID, fileID uuid.UUID) int64 {
	h := fnv.New64a()
	h.Write(collectionID[:])
	h.Write(fileID[:])
	return int64(h.Sum64())
}

func (s *Store) copyReplace(ctx context.Context, c *pgx.Conn, collectionID, fileID uuid.UUID, rows []row) (deferred bool, err error) {
	tx, err := c.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	// Lock, measure the delta and delete in one round trip. The delta is deleted from first: a
	// merge moves rows from it into the indexed table, and although the lock keeps the two
	// apart, that order would find every row even without it (under READ COMMITTED each DELETE
	// sees what committed before it started).
	cid, fid := pgtype.UUID{Bytes: collectionID, Valid: true}, pgtype.UUID{Bytes: fileID, Valid: true}
	b := &pgx.Batch{}
	b.Queue("SELECT pg_advisory_xact_lock($1)", lockKey(collectionID, fileID))
	var pending int64
	b.Queue(pendingOthers, cid, fid).QueryRow(func(r pgx.Row) error { return r.Scan(&pending) })
	b.Queue(fmt.Sprintf("DELETE FROM %s WHERE file_id = $1", qualifiedDelta(collectionID)), fid)
	b.Queue(fmt.Sprintf("DELETE FROM %s WHERE file_id = $1", qualified(collectionID)), fid)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return false, err
	}
	deferred = s.deferRows(pending, len(rows))
	if len(rows) > 0 {
		// Without pgvector's pgx types registered on the connection, the vector OID is unknown to
		// pgx and a []byte goes out as is: hand it pgvector's binary format. With them registered,
		// their codec wants a pgvector.Vector.
		_, registered := c.TypeMap().TypeForName("vector")
		src := pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			var emb any
			if r.embedding != nil {
				v := pgvector.NewVector(r.embedding)
				if registered {
					emb = v
				} else {
					b, err := v.EncodeBinary(nil)
					if err != nil {
						return nil, err
					}
					emb = b
				}
			}
			var pages any
			if r.pages != nil {
				pages = r.pages
			}
			return []any{fid, r.ordinal, r.text, pages, r.metadata, emb}, nil
		})
		// Always into the delta, whose generated column computes the tsvectors; rows that are
		// not deferred move on to the indexed table below, in this transaction.
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{Schema, DeltaTable(collectionID)}, columns, src); err != nil {
			return false, err
		}
	}
	b = &pgx.Batch{}
	if deferred {
		b.Queue(pendingUpsert, cid, fid, len(rows))
	} else {
		if len(rows) > 0 {
			b.Queue(moveSQL(collectionID, "$1"), fid)
		}
		b.Queue(pendingDelete, cid, fid)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return false, err
	}
	return deferred, tx.Commit(ctx)
}

// insertBatch is the number of rows per INSERT on the fallback path: a statement of a few
// hundred rows amortizes the round trip without building huge query strings.
const insertBatch = 200

// insertReplace is Replace for drivers other than pgx: the same lock and deletes, then multi-row
// INSERTs formatted by bun.
func (s *Store) insertReplace(ctx context.Context, tx bun.Tx, collectionID, fileID uuid.UUID, rows []row) (deferred bool, err error) {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", lockKey(collectionID, fileID)); err != nil {
		return false, err
	}
	var pending int64
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(sum(chunks), 0) FROM "+pendingTable+" WHERE collection_id = ? AND file_id <> ?",
		collectionID, fileID).Scan(&pending); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM ? WHERE file_id = ?", qualifiedDelta(collectionID), fileID); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM ? WHERE file_id = ?", qualified(collectionID), fileID); err != nil {
		return false, err
	}
	deferred = s.deferRows(pending, len(rows))
	target := qualifiedDelta(collectionID) // as in copyReplace
	for start := 0; start < len(rows); start += insertBatch {
		batch := rows[start:min(start+insertBatch, len(rows))]
		var q strings.Builder
		q.WriteString("INSERT INTO ? (file_id, ordinal, text, pages, metadata, embedding) VALUES ")
		args := []any{target}
		for i, r := range batch {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?::integer[], ?::jsonb, ?::vector)")
			var pages, emb any
			if r.pages != nil {
				pages = pgdialect.Array(r.pages)
			}
			if r.embedding != nil {
				emb = pgvector.NewVector(r.embedding).String()
			}
			args = append(args, fileID, r.ordinal, r.text, pages, string(r.metadata), emb)
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return false, err
		}
	}
	if deferred {
		_, err = tx.ExecContext(ctx, "INSERT INTO "+pendingTable+" (collection_id, file_id, chunks) VALUES (?, ?, ?) "+
			"ON CONFLICT (collection_id, file_id) DO UPDATE SET chunks = excluded.chunks, queued_at = now()", collectionID, fileID, len(rows))
		return deferred, err
	}
	if _, err := tx.ExecContext(ctx, moveSQL(collectionID, "?"), fileID); err != nil {
		return false, err
	}
	_, err = tx.ExecContext(ctx, "DELETE FROM "+pendingTable+" WHERE collection_id = ? AND file_id = ?", collectionID, fileID)
	return deferred, err
}
