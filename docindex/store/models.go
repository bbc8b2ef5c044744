package store

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// User is a person known from a token or created for an API key; e-mail is unique, case-insensitively.
type User struct {
	bun.BaseModel `bun:"table:docindex.users,alias:u"`

	ID        uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	Email     string    `bun:"email,notnull"`
	Subject   *string   `bun:"subject"`
	Name      string    `bun:"name,notnull"`
	IsAdmin   bool      `bun:"is_admin,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull,default:now()"`
	UpdatedAt time.Time `bun:"updated_at,notnull,default:now()"`
}

// Collection is a row of docindex.collections.
type Collection struct {
	bun.BaseModel `bun:"table:docindex.collections,alias:c"`

	ID                          uuid.UUID       `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	Name                        string          `bun:"name,notnull"`
	DisplayName                 string          `bun:"display_name,notnull"`
	Description                 string          `bun:"description,notnull"`
	CreatedBy                   uuid.NullUUID   `bun:"created_by,type:uuid"`
	OwnerID                     uuid.UUID       `bun:"owner_id,type:uuid,notnull"`
	Visibility                  string          `bun:"visibility,notnull"`
	SearchLanguage              string          `bun:"search_language,notnull"`
	Type                        string          `bun:"type,notnull"`
	ChunkingStrategy            string          `bun:"chunking_strategy,notnull"`
	ChunkSize                   *int            `bun:"chunk_size"`
	ChunkOverlap                *int            `bun:"chunk_overlap"`
	DatasetMode                 string          `bun:"dataset_mode,notnull"`
	LiveSchema                  json.RawMessage `bun:"live_schema,type:jsonb"`
	LastIngestedAt              *time.Time      `bun:"last_ingested_at"`
	StructuredExtractionEnabled bool            `bun:"structured_extraction_enabled,notnull"`
	ExtractionInstructions      string          `bun:"extraction_instructions,notnull"`
	ExtractionMaxPages          *int            `bun:"extraction_max_pages"`
	ImageDescriptionsEnabled    bool            `bun:"image_descriptions_enabled,notnull"`
	ImageDescriptionMode        string          `bun:"image_description_mode,notnull"`
	EmbeddingModel              string          `bun:"embedding_model,notnull"`
	EmbeddingDimensions         *int            `bun:"embedding_dimensions"`
	CreatedAt                   time.Time       `bun:"created_at,notnull,default:now()"`
	UpdatedAt                   time.Time       `bun:"updated_at,notnull,default:now()"`
}

// Share grants a role on a collection to a user (by e-mail), a directory group or everyone.
type Share struct {
	bun.BaseModel `bun:"table:docindex.shares,alias:s"`

	ID            uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	CollectionID  uuid.UUID `bun:"collection_id,type:uuid,notnull"`
	Type          string    `bun:"type,notnull"`
	Target        string    `bun:"target,notnull"`
	TargetDisplay string    `bun:"target_display,notnull"`
	Role          string    `bun:"role,notnull"`
	CreatedAt     time.Time `bun:"created_at,notnull,default:now()"`
}

// APIKey is a stored key: only the SHA-256 of the raw key is kept.
type APIKey struct {
	bun.BaseModel `bun:"table:docindex.api_keys,alias:k"`

	ID          uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	UserID      uuid.UUID  `bun:"user_id,type:uuid,notnull"`
	ClientName  string     `bun:"client_name,notnull"`
	KeyHash     []byte     `bun:"key_hash,notnull"`
	Permissions []string   `bun:"permissions,array,notnull"`
	CreatedAt   time.Time  `bun:"created_at,notnull,default:now()"`
	LastUsedAt  *time.Time `bun:"last_used_at"`
	RevokedAt   *time.Time `bun:"revoked_at"`

	User *User `bun:"rel:belongs-to,join:user_id=id"`
}

// File is an uploaded or synced document.
type File struct {
	bun.BaseModel `bun:"table:docindex.files,alias:f"`

	ID             uuid.UUID       `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	CollectionID   uuid.NullUUID   `bun:"collection_id,type:uuid"`
	Name           string          `bun:"name,notnull"`
	BlobPath       string          `bun:"blob_path,notnull"`
	SizeBytes      *int64          `bun:"size_bytes"`
	ContentType    *string         `bun:"content_type"`
	Status         string          `bun:"status,notnull"`
	SourceID       uuid.NullUUID   `bun:"source_id,type:uuid"`
	ExternalID     *string         `bun:"external_id"`
	Version        string          `bun:"version,notnull"`
	ContentHash    string          `bun:"content_hash,notnull"`
	SourceMetadata json.RawMessage `bun:"source_metadata,type:jsonb,notnull"`
	PageCount      *int            `bun:"page_count"`
	Warning        string          `bun:"warning,notnull"`
	CreatedBy      uuid.NullUUID   `bun:"created_by,type:uuid"`
	CreatedAt      time.Time       `bun:"created_at,notnull,default:now()"`
	UpdatedAt      time.Time       `bun:"updated_at,notnull,default:now()"`
	LastIndexedAt  *time.Time      `bun:"last_indexed_at"`

	// CollectionName is filled by queries that join the collection.
	CollectionName *string `bun:"collection_name,scanonly"`
}
