package docindex

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/dataset"
	"github.com/docindex/docindex/docindex/store"
	"github.com/docindex/docindex/docindex/vectorstore"
)

// Defaults and bounds of chunking settings (the interface leaves the bounds to us).
const (
	DefaultChunkSize    = 512
	DefaultChunkOverlap = 64
	MinChunkSize        = 32
	MaxChunkSize        = 8192
)

// StructuredExtraction is the request shape of a collection's extraction settings.
type StructuredExtraction struct {
	Enabled      bool   `json:"enabled"`
	Instructions string `json:"instructions"`
	MaxPages     *int   `json:"maxPages"`
}

// CollectionInput is the body of a collection create.
type CollectionInput struct {
	Name                     string                `json:"name"`
	DisplayName              string                `json:"displayName"`
	Description              string                `json:"description"`
	Visibility               string                `json:"visibility"`
	SearchLanguage           string                `json:"searchLanguage"`
	ChunkingStrategy         string                `json:"chunkingStrategy"`
	ChunkSize                *int                  `json:"chunkSize"`
	ChunkOverlap             *int                  `json:"chunkOverlap"`
	Type                     string                `json:"type"`
	DatasetMode              string                `json:"datasetMode"`
	Tables                   dataset.Tables        `json:"tables"`
	StructuredExtraction     *StructuredExtraction `json:"structuredExtraction"`
	EmbeddingModel           string                `json:"embeddingModel"`
	ImageDescriptionsEnabled bool                  `json:"imageDescriptionsEnabled"`
	ImageDescriptionMode     string                `json:"imageDescriptionMode"`
}

// CollectionUpdate is the body of a collection update; nil fields are left unchanged.
type CollectionUpdate struct {
	DisplayName              *string `json:"displayName"`
	Description              *string `json:"description"`
	SearchLanguage           *string `json:"searchLanguage"`
	ExtractionInstructions   *string `json:"extractionInstructions"`
	ImageDescriptionsEnabled *bool   `json:"imageDescriptionsEnabled"`
	ImageDescriptionMode     *string `json:"imageDescriptionMode"`
}

// CollectionItem is a collection as listed: the record plus the owner, the caller's role, the
// number of shares and the on-disk size of its chunk table.
type CollectionItem struct {
	store.Collection `bun:",extend"`
	OwnerEmail       string `bun:"owner_email,scanonly"`
	OwnerName        string `bun:"owner_name,scanonly"`
	MyRole           string `bun:"my_role,scanonly"`
	ShareCount       int    `bun:"share_count,scanonly"`
	TableSizeBytes   int64  `bun:"table_size_bytes,scanonly"`
}

var nameRe = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// GenerateName derives a technical name from a display name: lower case, runs of anything but
// letters and digits become one underscore, a leading digit gets a "c_" prefix, at most 63 bytes.
func GenerateName(display string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(display) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			under = false
		case !under && b.Len() > 0:
			b.WriteByte('_')
			under = true
		}
	}
	name := strings.TrimRight(b.String(), "_")
	if name == "" {
		name = "collection"
	}
	if name[0] >= '0' && name[0] <= '9' {
		name = "c_" + name
	}
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "_")
	}
	return name
}

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return invalid("%s must be one of %s (got %q)", field, strings.Join(allowed, ", "), v)
}

// CreateCollection creates a collection owned by the caller. A live dataset, or a rag collection
// with structured extraction, gets its tables in the same transaction: a provisioning failure
// leaves nothing behind.
func (s *Service) CreateCollection(ctx context.Context, p *access.Principal, in CollectionInput) (*store.Collection, error) {
	if !p.CanWrite() {
		return nil, Errorf(ErrForbidden, "API key lacks the write permission")
	}
	c, kind, err := s.newCollection(ctx, in)
	if err != nil {
		return nil, err
	}
	c.OwnerID = p.UserID
	c.CreatedBy = uuid.NullUUID{UUID: p.UserID, Valid: true}
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(c).
			On("CONFLICT (name) DO NOTHING").Returning("*").Exec(ctx)
		if err != nil {
			return fmt.Errorf("insert collection: %w", err)
		}
		if c.ID == uuid.Nil {
			return Errorf(ErrConflict, "A collection with this name exists")
		}
		if c.Type == "rag" && c.EmbeddingDimensions != nil {
			if err := s.vectors.Provision(ctx, tx, c.ID, *c.EmbeddingDimensions, c.SearchLanguage); err != nil {
				return fmt.Errorf("provision chunk table of collection %s: %w", c.Name, err)
			}
		}
		if kind != nil {
			tables, _ := dataset.Parse(c.LiveSchema)
			if err := dataset.Provision(ctx, tx, c.ID, tables, *kind); err != nil {
				return fmt.Errorf("provision tables of collection %s: %w", c.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// newCollection validates the input and applies the defaults; kind is set when tables must be
// provisioned.
func (s *Service) newCollection(ctx context.Context, in CollectionInput) (*store.Collection, *dataset.Kind, error) {
	in.Name = strings.TrimSpace(in.Name)
	in.DisplayName = strings.TrimSpace(in.DisplayName)
	if in.Name == "" && in.DisplayName == "" {
		return nil, nil, invalid("name or displayName is required")
	}
	if in.Name == "" {
		in.Name = GenerateName(in.DisplayName)
	}
	if !nameRe.MatchString(in.Name) {
		return nil, nil, invalid("name must match ^[a-z_][a-z0-9_]{0,62}$ (got %q)", in.Name)
	}
	if in.DisplayName == "" {
		in.DisplayName = in.Name
	}
	c := &store.Collection{
		Name: in.Name, DisplayName: in.DisplayName, Description: in.Description,
		Visibility: def(in.Visibility, "private"), SearchLanguage: def(in.SearchLanguage, "english"),
		Type: def(in.Type, "rag"), ChunkingStrategy: def(in.ChunkingStrategy, "recursive"),
		ImageDescriptionsEnabled: in.ImageDescriptionsEnabled, ImageDescriptionMode: in.ImageDescriptionMode,
	}
	if err := oneOf("visibility", c.Visibility, "private", "shared", "public"); err != nil {
		return nil, nil, err
	}
	if err := oneOf("type", c.Type, "rag", "dataset"); err != nil {
		return nil, nil, err
	}
	if err := oneOf("chunkingStrategy", c.ChunkingStrategy, "recursive", "markdown", "semantic"); err != nil {
		return nil, nil, err
	}
	if err := s.checkLanguage(ctx, c.SearchLanguage); err != nil {
		return nil, nil, err
	}
	if c.ImageDescriptionMode == "" && c.ImageDescriptionsEnabled {
		c.ImageDescriptionMode = "all"
	}
	if c.ImageDescriptionMode != "" {
		if err := oneOf("imageDescriptionMode", c.ImageDescriptionMode, "all", "empty_pages"); err != nil {
			return nil, nil, err
		}
	}
	// Chunk sizes are honoured by the recursive strategy only; the record shows what is honoured.
	if c.ChunkingStrategy == "recursive" {
		size, overlap := DefaultChunkSize, DefaultChunkOverlap
		if in.ChunkSize != nil {
			size = *in.ChunkSize
		}
		if in.ChunkOverlap != nil {
			overlap = *in.ChunkOverlap
		}
		if size < MinChunkSize || size > MaxChunkSize {
			return nil, nil, invalid("chunkSize must be between %d and %d tokens", MinChunkSize, MaxChunkSize)
		}
		if overlap < 0 || overlap >= size {
			return nil, nil, invalid("chunkOverlap must be at least 0 and less than chunkSize")
		}
		c.ChunkSize, c.ChunkOverlap = in.ChunkSize, in.ChunkOverlap
	}
	var kind *dataset.Kind
	extraction := in.StructuredExtraction != nil && in.StructuredExtraction.Enabled
	switch c.Type {
	case "dataset":
		c.DatasetMode = def(in.DatasetMode, "imported")
		if err := oneOf("datasetMode", c.DatasetMode, "imported", "live"); err != nil {
			return nil, nil, err
		}
		if extraction {
			return nil, nil, invalid("structuredExtraction applies to rag collections only")
		}
		if c.DatasetMode == "live" {
			if in.Tables == nil {
				return nil, nil, invalid("tables is required for a live dataset")
			}
			k := dataset.Live
			kind = &k
		}
	case "rag":
		if in.DatasetMode != "" {
			return nil, nil, invalid("datasetMode applies to dataset collections only")
		}
		if extraction {
			if in.Tables == nil {
				return nil, nil, invalid("tables is required when structuredExtraction is enabled")
			}
			c.StructuredExtractionEnabled = true
			c.ExtractionInstructions = in.StructuredExtraction.Instructions
			c.ExtractionMaxPages = in.StructuredExtraction.MaxPages
			k := dataset.Extraction
			kind = &k
		}
		model, dims, err := s.resolveModel(ctx, in.EmbeddingModel)
		if err != nil {
			return nil, nil, err
		}
		c.EmbeddingModel = model
		if dims > 0 {
			c.EmbeddingDimensions = &dims
		}
	}
	if in.Tables != nil {
		if err := in.Tables.Validate(); err != nil {
			return nil, nil, invalid("invalid schema: %v", err)
		}
		raw, err := json.Marshal(in.Tables.Normalized())
		if err != nil {
			return nil, nil, fmt.Errorf("encode tables: %w", err)
		}
		c.LiveSchema = raw
	}
	return c, kind, nil
}

// checkLanguage accepts only text-search configurations the server has.
func (s *Service) checkLanguage(ctx context.Context, lang string) error {
	ok, err := s.db.NewSelect().Table("pg_catalog.pg_ts_config").Where("cfgname = ?", lang).Exists(ctx)
	if err != nil {
		return fmt.Errorf("check search language: %w", err)
	}
	if !ok {
		return invalid("searchLanguage %q is not a text-search configuration of this server", lang)
	}
	return nil
}

// resolveModel validates a requested embedding model against the catalog, or picks the default.
// Without any embedders configured a collection gets no model (and cannot be indexed until one is
// configured); a requested model is then refused.
func (s *Service) resolveModel(ctx context.Context, id string) (string, int, error) {
	models, err := s.EmbeddingModels(ctx)
	if err != nil {
		return "", 0, err
	}
	if id == "" {
		for _, m := range models {
			if m.Default {
				return m.ID, m.Dimensions, nil
			}
		}
		return "", 0, nil
	}
	for _, m := range models {
		if m.ID == id {
			return m.ID, m.Dimensions, nil
		}
	}
	return "", 0, invalid("embeddingModel %q is not in the catalog (GET /api/embedding-models)", id)
}

func def(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

var (
	errCollectionNotFound = Errorf(ErrNotFound, "Not found")
	errAccessDenied       = Errorf(ErrForbidden, "Access denied")
	errKeyReadOnly        = Errorf(ErrForbidden, "API key lacks the write permission")
)

// collectionRole loads a collection with the caller's role on it (None when no access). It
// resolves the role in Go (access.Resolve); lists resolve it in SQL (access.RoleSQL), and a test
// holds the two to the same answers.
func (s *Service) collectionRole(ctx context.Context, db bun.IDB, p *access.Principal, id uuid.UUID) (*store.Collection, access.Role, error) {
	c := &store.Collection{}
	err := db.NewSelect().Model(c).Where("c.id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, access.None, errCollectionNotFound
	}
	if err != nil {
		return nil, access.None, fmt.Errorf("load collection: %w", err)
	}
	var grants []access.ShareGrant
	if p.UserID != c.OwnerID && !p.GlobalAdmin {
		var shares []store.Share
		if err := db.NewSelect().Model(&shares).Column("type", "target", "role").
			Where("collection_id = ?", id).Scan(ctx); err != nil {
			return nil, access.None, fmt.Errorf("load shares: %w", err)
		}
		for _, sh := range shares {
			grants = append(grants, access.ShareGrant{Type: sh.Type, Target: sh.Target, Role: access.Role(sh.Role)})
		}
	}
	return c, access.Resolve(p, c.OwnerID, c.Visibility, grants), nil
}

// Role returns the caller's role on a collection: owner, admin, viewer, or access.None.
func (s *Service) Role(ctx context.Context, p *access.Principal, id uuid.UUID) (access.Role, error) {
	_, role, err := s.collectionRole(ctx, s.db, p, id)
	return role, err
}

// GetCollection returns a collection the caller may see.
func (s *Service) GetCollection(ctx context.Context, p *access.Principal, id uuid.UUID) (*store.Collection, error) {
	c, role, err := s.collectionRole(ctx, s.db, p, id)
	if err != nil {
		return nil, err
	}
	if role == access.None {
		return nil, errAccessDenied
	}
	return c, nil
}

// ListCollections lists the collections the caller can see. filter: "all" (default: everything
// the caller has a role on), "mine" (owned), "shared" (not owned, reached through a user or group
// share), "public" (visibility public or a public share).
func (s *Service) ListCollections(ctx context.Context, p *access.Principal, filter string) ([]CollectionItem, error) {
	filter = def(filter, "all")
	if err := oneOf("filter", filter, "mine", "shared", "public", "all"); err != nil {
		return nil, Errorf(ErrInvalid, "Invalid filter value")
	}
	expr, args := access.RoleSQL(p)
	items := []CollectionItem{}
	q := s.db.NewSelect().Model(&items).
		ColumnExpr("c.*").
		ColumnExpr("u.email AS owner_email, u.name AS owner_name").
		ColumnExpr(expr+" AS my_role", args...).
		ColumnExpr("(SELECT count(*) FROM docindex.shares s WHERE s.collection_id = c.id) AS share_count").
		// The names of vectorstore.Table and DeltaTable, computed in SQL for the whole list at once.
		ColumnExpr(vectorstore.SizeSQL(
			"'docindex.' || quote_ident('chunks_' || replace(c.id::text, '-', ''))",
			"'docindex.' || quote_ident('chunks_' || replace(c.id::text, '-', '') || '_delta')")+" AS table_size_bytes").
		Join("JOIN docindex.users u ON u.id = c.owner_id").
		Where(expr+" IS NOT NULL", args...).
		OrderExpr("c.created_at DESC, c.id")
	switch filter {
	case "mine":
		q = q.Where("c.owner_id = ?", p.UserID)
	case "shared":
		groups := p.Groups
		if groups == nil {
			groups = []string{}
		}
		q = q.Where("c.owner_id <> ?", p.UserID).Where(`EXISTS (SELECT 1 FROM docindex.shares s WHERE s.collection_id = c.id
			AND ((s.type = 'user' AND lower(s.target) = lower(?)) OR (s.type = 'directory_group' AND s.target = ANY(?))))`,
			p.Email, pgArray(groups))
	case "public":
		q = q.Where("(c.visibility = 'public' OR EXISTS (SELECT 1 FROM docindex.shares s WHERE s.collection_id = c.id AND s.type = 'public'))")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	return items, nil
}

// UpdateCollection changes a collection's metadata; owner or collection admin only. A change of
// searchLanguage queues a rebuild_fts job in the same transaction.
func (s *Service) UpdateCollection(ctx context.Context, p *access.Principal, id uuid.UUID, in CollectionUpdate) (*store.Collection, error) {
	if !p.CanWrite() {
		return nil, errKeyReadOnly
	}
	var out *store.Collection
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		c, role, err := s.collectionRole(ctx, tx, p, id)
		if err != nil {
			return err
		}
		// The interface answers Not found, not Forbidden, to callers who may not update.
		if !role.AtLeast(access.Admin) {
			return errCollectionNotFound
		}
		langChanged := false
		if in.DisplayName != nil {
			v := strings.TrimSpace(*in.DisplayName)
			if v == "" {
				return invalid("displayName must not be empty")
			}
			c.DisplayName = v
		}
		if in.Description != nil {
			c.Description = *in.Description
		}
		if in.SearchLanguage != nil && *in.SearchLanguage != c.SearchLanguage {
			if err := s.checkLanguage(ctx, *in.SearchLanguage); err != nil {
				return err
			}
			c.SearchLanguage = *in.SearchLanguage
			langChanged = true
		}
		if in.ExtractionInstructions != nil && c.StructuredExtractionEnabled {
			c.ExtractionInstructions = *in.ExtractionInstructions
		}
		if in.ImageDescriptionsEnabled != nil {
			c.ImageDescriptionsEnabled = *in.ImageDescriptionsEnabled
			if c.ImageDescriptionsEnabled && c.ImageDescriptionMode == "" {
				c.ImageDescriptionMode = "all"
			}
		}
		if in.ImageDescriptionMode != nil {
			if err := oneOf("imageDescriptionMode", *in.ImageDescriptionMode, "all", "empty_pages"); err != nil {
				return err
			}
			c.ImageDescriptionMode = *in.ImageDescriptionMode
		}
		_, err = tx.NewUpdate().Model(c).
			Column("display_name", "description", "search_language", "extraction_instructions",
				"image_descriptions_enabled", "image_description_mode").
			Set("updated_at = now()").WherePK().Returning("*").Exec(ctx)
		if err != nil {
			return fmt.Errorf("update collection: %w", err)
		}
		if langChanged && c.Type == "rag" {
			if err := s.enqueueCollectionJob(ctx, tx, c.ID, "rebuild_fts"); err != nil {
				return err
			}
		}
		out = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteCollection removes a collection and everything in it: shares, files (their blobs and
// chunks), jobs, provisioned tables. The owner or a global admin may delete.
func (s *Service) DeleteCollection(ctx context.Context, p *access.Principal, id uuid.UUID) error {
	if !p.CanWrite() {
		return errKeyReadOnly
	}
	c, role, err := s.collectionRole(ctx, s.db, p, id)
	if err != nil {
		return err
	}
	switch {
	case role == access.None:
		return errCollectionNotFound
	case role != access.Owner && !p.GlobalAdmin:
		return Errorf(ErrForbidden, "Only the owner may delete a collection")
	}
	return s.teardownCollection(ctx, c)
}

func pgArray(v []string) any { return pgdialect.Array(v) }
