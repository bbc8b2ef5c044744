package vectorstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/pgvector/pgvector-go"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"
)

// Search modes.
const (
	ModeHybrid   = "hybrid"
	ModeVector   = "vector"
	ModeFulltext = "fulltext"
)

const (
	// DefaultTopK and MaxTopK bound Query.TopK: 0 means the default, more than the maximum is cut.
	DefaultTopK = 10
	MaxTopK     = 100
	// DefaultLanguage is used when Query.Language is empty: the default searchLanguage of a
	// collection. It must be the language of the table's tsvector, or nothing matches.
	DefaultLanguage = "english"
	// rrfK is the constant of reciprocal rank fusion: score = sum over rankings of 1/(rrfK+rank).
	// 60 is the value of the original paper (Cormack et al., 2009) and what most engines use.
	rrfK = 60
)

// Query is one search of a collection.
type Query struct {
	// Text is searched with websearch_to_tsquery (quoted phrases, OR, -word) in Language.
	Text string
	// Vector is the embedded query; its dimension must be the table's.
	Vector []float32
	// Mode is ModeHybrid (when empty), ModeVector or ModeFulltext. Hybrid with only Text or only
	// Vector runs the one ranking it can.
	Mode string
	// TopK is the number of results: DefaultTopK when 0 or less, at most MaxTopK. The caller
	// validates what the client sent; Search only clamps.
	TopK int
	// FileIDs, when not empty, restricts the search to the chunks of these files.
	FileIDs []uuid.UUID
	// Language is the collection's searchLanguage (a regconfig), DefaultLanguage when empty.
	Language string
	// Visible, when not empty, is an SQL boolean condition over the chunk row, aliased "k"
	// (columns k.id, k.file_id, k.ordinal, k.text, k.pages, k.metadata), that every result must
	// satisfy; it is ANDed into both rankings, so hidden chunks never take a place in a candidate
	// pool. Its placeholders are bun's: each ? takes the next of VisibleArgs, which bun formats
	// as a quoted literal, so values are never spliced by hand. A literal question mark (jsonb's
	// ?, ?| and ?& operators) is written \? (or use jsonb_exists, jsonb_exists_any). Example,
	// chunks without an access list or whose list names one of the caller's principals:
	//
	//	Visible:     `NOT jsonb_exists(k.metadata, 'acl') OR k.metadata->'acl' \?| ?`,
	//	VisibleArgs: []any{pgdialect.Array(principals)},
	//
	// Visible is trusted SQL: build it in code, never from a request.
	Visible     string
	VisibleArgs []any
}

// Result is one chunk found.
type Result struct {
	ChunkID uuid.UUID
	FileID  uuid.UUID
	Text    string
	// Score orders results, higher is better; its scale depends on the mode: cosine similarity
	// (1 - cosine distance, up to 1) for vector, ts_rank_cd for fulltext, and for hybrid the sum
	// of 1/(60+rank) over the two rankings (at most 2/61, for a chunk first in both).
	Score    float64
	Ordinal  int
	Pages    []int
	Metadata map[string]any
}

// Search returns the best chunks for q, best first. A collection without a chunk table (none
// provisioned yet, or dropped) has no results and no error.
//
// The vector ranking is ORDER BY embedding <=> vector LIMIT n through the HNSW index; the
// full-text ranking is ts_rank_cd over tsv @@ websearch_to_tsquery; hybrid takes a candidate pool
// of 4 x TopK (at least 40, at most 400) from each and fuses them by reciprocal rank fusion, so a
// chunk ranked well by both beats one ranked first by only one.
func (s *Store) Search(ctx context.Context, collectionID uuid.UUID, q Query) ([]Result, error) {
	topK := q.TopK
	if topK <= 0 {
		topK = DefaultTopK
	}
	topK = min(topK, MaxTopK)
	lang := q.Language
	if lang == "" {
		lang = DefaultLanguage
	}
	mode := q.Mode
	if mode == "" {
		mode = ModeHybrid
	}
	hasText, hasVector := strings.TrimSpace(q.Text) != "", len(q.Vector) > 0
	switch mode {
	case ModeHybrid:
		switch {
		case !hasVector && !hasText:
			return nil, nil
		case !hasVector:
			mode = ModeFulltext
		case !hasText:
			mode = ModeVector
		}
	case ModeVector:
		if !hasVector {
			return nil, fmt.Errorf("vectorstore: search: vector mode needs the embedded query")
		}
	case ModeFulltext:
		if !hasText {
			return nil, nil
		}
	default:
		return nil, fmt.Errorf("vectorstore: search: unknown mode %q", q.Mode)
	}

	p := plan{
		table:  qualified(collectionID),
		delta:  qualifiedDelta(collectionID),
		filter: filter(q),
		lang:   lang,
		text:   q.Text,
	}
	if hasVector {
		p.emb, p.vec = vectorExprs(q.Vector)
	}
	var query schema.QueryAppender
	limit := topK // the rows asked of the HNSW index, which ef_search must cover
	switch mode {
	case ModeVector:
		query = p.vector(topK)
	case ModeFulltext:
		query = p.fulltext(topK)
	default:
		limit = min(max(4*topK, 40), 400)
		query = p.hybrid(limit, topK)
	}

	var results []Result
	err := s.db.RunInTx(ctx, &sql.TxOptions{ReadOnly: true}, func(ctx context.Context, tx bun.Tx) error {
		if mode != ModeFulltext {
			// Without iterative scans HNSW yields at most ef_search rows, and a filter applies
			// after them: raise ef_search to cover the LIMIT with room for recall, and when a
			// filter may discard neighbours let the scan go on until LIMIT rows pass it. The
			// floor of 100 is measured: on 100k chunks of 256 dimensions, recall@10 was 0.84 at
			// pgvector's default of 40, 0.98 at 100 and 0.998 at 200.
			ef := min(max(2*limit, 100), 1000)
			iterative := "off"
			if p.filtered() {
				iterative = "relaxed_order"
			}
			if _, err := tx.ExecContext(ctx, `SELECT set_config('hnsw.ef_search', ?, true),
				set_config('hnsw.iterative_scan', ?, true)`, fmt.Sprint(ef), iterative); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, "?", query)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r Result
			var meta []byte
			if err := rows.Scan(&r.ChunkID, &r.FileID, &r.Text, &r.Score, &r.Ordinal, pgdialect.Array(&r.Pages), &meta); err != nil {
				return err
			}
			if err := json.Unmarshal(meta, &r.Metadata); err != nil {
				return fmt.Errorf("metadata of chunk %s: %w", r.ChunkID, err)
			}
			results = append(results, r)
		}
		return rows.Err()
	})
	if isUndefinedTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vectorstore: search %s (%s): %w", Table(collectionID), mode, err)
	}
	return results, nil
}

// plan holds the pieces the three query shapes share.
type plan struct {
	table  bun.Safe
	delta  bun.Safe             // the unmerged chunks, ranked exactly next to the index
	filter schema.QueryAppender // nil when unfiltered
	emb    bun.Safe             // the indexed embedding expression
	vec    schema.QueryAppender // the query vector, cast to the same type
	lang   string
	text   string
}

func (p plan) filtered() bool { return p.filter != nil }

// where is the condition of a ranking: its own plus the caller's filter.
func (p plan) where(cond string) schema.QueryAppender {
	if p.filter == nil {
		return bun.SafeQuery(cond)
	}
	return bun.SafeQuery(cond+" AND ?", p.filter)
}

// nearest is the n chunks nearest to the query vector: the index's n best and the delta's n
// best (an exact scan, the delta has no vector index) together, with cols selected from each
// (aliased k) and the distance as d. The caller orders and cuts the union.
func (p plan) nearest(cols string, n int) schema.QueryAppender {
	part := `(SELECT ` + cols + `, ? <=> ? AS d FROM ? k WHERE ? ORDER BY ? <=> ? LIMIT ?)`
	return bun.SafeQuery(part+" UNION ALL "+part,
		p.emb, p.vec, p.table, p.where("k.embedding IS NOT NULL"), p.emb, p.vec, n,
		p.emb, p.vec, p.delta, p.where("k.embedding IS NOT NULL"), p.emb, p.vec, n)
}

// matching is the n chunks that rank best by full text, from both tables, with cols and the rank
// as r; ties is the order among equal ranks (the caller's, so that both cut the same rows). The
// caller orders and cuts the union.
func (p plan) matching(cols, ties string, n int) schema.QueryAppender {
	part := `(SELECT ` + cols + `, ts_rank_cd(k.tsv, tq.query) AS r
		FROM ? k, websearch_to_tsquery(?::regconfig, ?) AS tq(query)
		WHERE ? ORDER BY r DESC, ` + ties + ` LIMIT ?)`
	return bun.SafeQuery(part+" UNION ALL "+part,
		p.table, p.lang, p.text, p.where("k.tsv @@ tq.query"), n,
		p.delta, p.lang, p.text, p.where("k.tsv @@ tq.query"), n)
}

const (
	rowColumns    = "k.id, k.file_id, k.text, k.ordinal, k.pages, k.metadata"
	resultColumns = "id, file_id, text, %s, ordinal, pages, metadata"
)

// vector ranks by cosine distance. relaxed_order may return index rows slightly out of order, so
// the LIMITed index scan is materialized and sorted again, as pgvector's documentation advises.
func (p plan) vector(n int) schema.QueryAppender {
	return bun.SafeQuery(`WITH v AS MATERIALIZED (?)
		SELECT `+fmt.Sprintf(resultColumns, "1 - d")+` FROM v ORDER BY d, file_id, ordinal LIMIT ?`,
		p.nearest(rowColumns, n), n)
}

func (p plan) fulltext(n int) schema.QueryAppender {
	return bun.SafeQuery(`WITH f AS MATERIALIZED (?)
		SELECT `+fmt.Sprintf(resultColumns, "r")+` FROM f ORDER BY r DESC, file_id, ordinal LIMIT ?`,
		p.matching(rowColumns, "k.file_id, k.ordinal", n), n)
}

// hybrid fuses the two rankings, each cut to pool candidates, by reciprocal rank fusion.
func (p plan) hybrid(pool, n int) schema.QueryAppender {
	return bun.SafeQuery(`WITH v AS MATERIALIZED (
			SELECT id, d FROM (?) u ORDER BY d, id LIMIT ?
		), f AS MATERIALIZED (
			SELECT id, r FROM (?) u ORDER BY r DESC, id LIMIT ?
		), fused AS (
			SELECT id, sum(1.0::float8 / (? + rank)) AS score FROM (
				SELECT id, row_number() OVER (ORDER BY d, id) AS rank FROM v
				UNION ALL
				SELECT id, row_number() OVER (ORDER BY r DESC, id) FROM f
			) ranked GROUP BY id
		)
		SELECT `+fmt.Sprintf(resultColumns, "fused.score")+`
		FROM fused JOIN (SELECT `+rowColumns+` FROM ? k UNION ALL SELECT `+rowColumns+` FROM ? k) k USING (id)
		ORDER BY fused.score DESC, k.file_id, k.ordinal LIMIT ?`,
		p.nearest("k.id", pool), pool,
		p.matching("k.id", "k.id", pool), pool,
		rrfK,
		p.table, p.delta, n)
}

// filter is the caller's restriction of q, nil when there is none.
func filter(q Query) schema.QueryAppender {
	var parts []string
	var args []any
	if len(q.FileIDs) > 0 {
		ids := make([]string, len(q.FileIDs))
		for i, id := range q.FileIDs {
			ids[i] = id.String()
		}
		parts = append(parts, "k.file_id = ANY(?::uuid[])")
		args = append(args, pgdialect.Array(ids))
	}
	if strings.TrimSpace(q.Visible) != "" {
		parts = append(parts, "(?)")
		// A non-nil argument list even when empty: bun leaves a query without arguments
		// unparsed, which would keep \? escapes as they are.
		args = append(args, bun.SafeQuery(q.Visible, append([]any{}, q.VisibleArgs...)...))
	}
	if len(parts) == 0 {
		return nil
	}
	return bun.SafeQuery(strings.Join(parts, " AND "), args...)
}

// vectorExprs returns the embedding expression the HNSW index is on and the query vector cast to
// its type: vector up to 2000 dimensions, halfvec past that (see Provision).
func vectorExprs(v []float32) (emb bun.Safe, vec schema.QueryAppender) {
	lit := pgvector.NewVector(v).String()
	if len(v) > maxVectorIndexDims {
		return bun.Safe(fmt.Sprintf("k.embedding::halfvec(%d)", len(v))), bun.SafeQuery(fmt.Sprintf("?::halfvec(%d)", len(v)), lit)
	}
	return "k.embedding", bun.SafeQuery("?::vector", lit)
}
