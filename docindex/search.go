package docindex

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/vectorstore"
)

// SearchInput is the body of a collection search.
type SearchInput struct {
	Query   string   `json:"query"`
	TopK    int      `json:"topK"`
	Mode    string   `json:"mode"`
	FileIDs []string `json:"fileIds"`
}

// SearchResult is one hit, best first.
type SearchResult struct {
	ChunkID  uuid.UUID      `json:"chunkId"`
	FileID   uuid.UUID      `json:"fileId"`
	FileName string         `json:"fileName"`
	Text     string         `json:"text"`
	Score    float64        `json:"score"`
	Ordinal  int            `json:"ordinal"`
	Metadata map[string]any `json:"metadata"`
}

// Search limits.
const (
	DefaultTopK = 10
	MaxTopK     = 100
)

// Search finds the chunks of a rag collection nearest to a query: "hybrid" (default) fuses the
// vector and full-text rankings by reciprocal rank fusion; "vector" and "fulltext" use one.
// Viewers may search; callers without access get the same error as a GET of the collection.
func (s *Service) Search(ctx context.Context, p *access.Principal, collectionID uuid.UUID, in SearchInput) ([]SearchResult, error) {
	in.Query = strings.TrimSpace(in.Query)
	if in.Query == "" {
		return nil, invalid("query is required")
	}
	if in.TopK == 0 {
		in.TopK = DefaultTopK
	}
	if in.TopK < 1 || in.TopK > MaxTopK {
		return nil, invalid("topK must be between 1 and %d", MaxTopK)
	}
	if in.Mode == "" {
		in.Mode = "hybrid"
	}
	if err := oneOf("mode", in.Mode, "hybrid", "vector", "fulltext"); err != nil {
		return nil, err
	}
	fileIDs, err := parseIDs(in.FileIDs, "fileIds")
	if err != nil {
		return nil, err
	}
	c, err := s.GetCollection(ctx, p, collectionID)
	if err != nil {
		return nil, err
	}
	if c.Type != "rag" {
		return nil, invalid("search applies to rag collections")
	}
	q := vectorstore.Query{Text: in.Query, Mode: in.Mode, TopK: in.TopK, FileIDs: fileIDs, Language: c.SearchLanguage}
	if err := s.restrictToACL(ctx, p, c.ID, &q); err != nil {
		return nil, err
	}
	if in.Mode != "fulltext" {
		if c.EmbeddingModel == "" || s.embedders == nil {
			return nil, invalid("the collection has no embedding model; use mode fulltext")
		}
		vs, err := s.embed(ctx, c.EmbeddingModel, []string{in.Query})
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("embed query: %w", err)
			}
			// The provider is down or no longer offers the model: not the caller's fault and
			// not a bug here. The cause goes to the log; the caller can still search by text.
			s.log.WarnContext(ctx, "search: embed the query", "collection", c.ID, "model", c.EmbeddingModel, "err", err)
			return nil, Errorf(ErrUnavailable, "The embedding model %s did not answer; try again, or search with mode fulltext", c.EmbeddingModel)
		}
		q.Vector = vs[0]
	}
	hits, err := s.vectors.Search(ctx, c.ID, q)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	names := map[uuid.UUID]string{}
	if len(hits) > 0 {
		ids := make([]uuid.UUID, 0, len(hits))
		for _, h := range hits {
			ids = append(ids, h.FileID)
		}
		var rows []struct {
			ID   uuid.UUID `bun:"id"`
			Name string    `bun:"name"`
		}
		if err := s.db.NewSelect().TableExpr("docindex.files").Column("id", "name").
			Where("id = ANY(?::uuid[])", uuidArray(ids)).Scan(ctx, &rows); err != nil {
			return nil, fmt.Errorf("search: file names: %w", err)
		}
		for _, r := range rows {
			names[r.ID] = r.Name
		}
	}
	out := make([]SearchResult, len(hits))
	for i, h := range hits {
		meta := h.Metadata
		if meta == nil {
			meta = map[string]any{}
		}
		if len(h.Pages) > 0 {
			meta["pages"] = h.Pages
		}
		out[i] = SearchResult{ChunkID: h.ChunkID, FileID: h.FileID, FileName: names[h.FileID], Text: h.Text,
			Score: h.Score, Ordinal: h.Ordinal, Metadata: meta}
	}
	return out, nil
}

// restrictToACL limits a search to the chunks the caller may see when the collection holds synced
// items with access lists: an item is visible when it has no list, is public, or lists the
// caller's e-mail or one of their groups.
func (s *Service) restrictToACL(ctx context.Context, p *access.Principal, collectionID uuid.UUID, q *vectorstore.Query) error {
	has, err := s.db.NewSelect().TableExpr("docindex.files AS f").
		Where("f.collection_id = ? AND jsonb_exists(f.source_metadata, 'acl')", collectionID).Exists(ctx)
	if err != nil {
		return fmt.Errorf("search: access lists: %w", err)
	}
	if !has {
		return nil
	}
	groups := p.Groups
	if groups == nil {
		groups = []string{}
	}
	q.Visible = `NOT EXISTS (SELECT 1 FROM docindex.files f WHERE f.id = k.file_id
		AND jsonb_typeof(f.source_metadata->'acl') = 'object'
		AND NOT (COALESCE((f.source_metadata->'acl'->>'public')::boolean, false)
			OR jsonb_exists(f.source_metadata->'acl'->'users', lower(?))
			OR jsonb_exists_any(f.source_metadata->'acl'->'groups', ?::text[])))`
	q.VisibleArgs = []any{p.Email, pgdialect.Array(groups)}
	return nil
}
