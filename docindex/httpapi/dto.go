package httpapi

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/store"
)

// collectionRecord is the collection shape of create, get and update (spec 2.1).
type collectionRecord struct {
	ID                          uuid.UUID       `json:"id"`
	Name                        string          `json:"name"`
	DisplayName                 string          `json:"displayName"`
	Description                 string          `json:"description"`
	CreatedBy                   *uuid.UUID      `json:"created_by"`
	OwnerID                     uuid.UUID       `json:"owner_id"`
	Visibility                  string          `json:"visibility"`
	SearchLanguage              string          `json:"searchLanguage"`
	Type                        string          `json:"type"`
	ChunkingStrategy            string          `json:"chunkingStrategy"`
	ChunkSize                   *int            `json:"chunkSize"`
	ChunkOverlap                *int            `json:"chunkOverlap"`
	DatasetMode                 string          `json:"datasetMode"`
	LiveSchema                  json.RawMessage `json:"liveSchema,omitempty"`
	LastIngestedAt              *time.Time      `json:"lastIngestedAt"`
	StructuredExtractionEnabled bool            `json:"structuredExtractionEnabled"`
	ExtractionInstructions      string          `json:"extractionInstructions,omitempty"`
	ExtractionMaxPages          *int            `json:"extractionMaxPages"`
	ImageDescriptionsEnabled    bool            `json:"imageDescriptionsEnabled"`
	ImageDescriptionMode        string          `json:"imageDescriptionMode"`
	EmbeddingModel              string          `json:"embeddingModel,omitempty"`
	CreatedAt                   time.Time       `json:"created_at"`
	UpdatedAt                   time.Time       `json:"updated_at"`
}

func nullUUID(u uuid.NullUUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	return &u.UUID
}

func newCollectionRecord(c *store.Collection) collectionRecord {
	return collectionRecord{
		ID: c.ID, Name: c.Name, DisplayName: c.DisplayName, Description: c.Description,
		CreatedBy: nullUUID(c.CreatedBy), OwnerID: c.OwnerID, Visibility: c.Visibility,
		SearchLanguage: c.SearchLanguage, Type: c.Type, ChunkingStrategy: c.ChunkingStrategy,
		ChunkSize: c.ChunkSize, ChunkOverlap: c.ChunkOverlap, DatasetMode: c.DatasetMode,
		LiveSchema: liveSchema(c.LiveSchema), LastIngestedAt: c.LastIngestedAt,
		StructuredExtractionEnabled: c.StructuredExtractionEnabled,
		ExtractionInstructions:      c.ExtractionInstructions, ExtractionMaxPages: c.ExtractionMaxPages,
		ImageDescriptionsEnabled: c.ImageDescriptionsEnabled, ImageDescriptionMode: c.ImageDescriptionMode,
		EmbeddingModel: c.EmbeddingModel, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
}

// liveSchema is omitted for collections without tables rather than sent as null.
func liveSchema(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

type ownerDTO struct {
	ID    uuid.UUID `json:"id"`
	Email string    `json:"email"`
	Name  string    `json:"name,omitempty"`
}

// collectionItem is the list shape (spec 2.2): camelCase, with owner, role, shares and size.
type collectionItem struct {
	ID                          uuid.UUID       `json:"id"`
	Name                        string          `json:"name"`
	DisplayName                 string          `json:"displayName"`
	Description                 string          `json:"description"`
	OwnerID                     uuid.UUID       `json:"ownerId"`
	Owner                       ownerDTO        `json:"owner"`
	Visibility                  string          `json:"visibility"`
	SearchLanguage              string          `json:"searchLanguage"`
	CollectionType              string          `json:"collectionType"`
	DatasetMode                 string          `json:"datasetMode,omitempty"`
	LiveSchema                  json.RawMessage `json:"liveSchema,omitempty"`
	StructuredExtractionEnabled bool            `json:"structuredExtractionEnabled"`
	ExtractionInstructions      string          `json:"extractionInstructions,omitempty"`
	ExtractionMaxPages          *int            `json:"extractionMaxPages"`
	ImageDescriptionsEnabled    bool            `json:"imageDescriptionsEnabled"`
	ImageDescriptionMode        string          `json:"imageDescriptionMode,omitempty"`
	TableSizeBytes              int64           `json:"tableSizeBytes"`
	MyRole                      string          `json:"myRole"`
	ShareCount                  int             `json:"shareCount"`
	CreatedAt                   time.Time       `json:"createdAt"`
	UpdatedAt                   time.Time       `json:"updatedAt"`
}

func newCollectionItem(c *docindex.CollectionItem) collectionItem {
	return collectionItem{
		ID: c.ID, Name: c.Name, DisplayName: c.DisplayName, Description: c.Description,
		OwnerID: c.OwnerID, Owner: ownerDTO{ID: c.OwnerID, Email: c.OwnerEmail, Name: c.OwnerName},
		Visibility: c.Visibility, SearchLanguage: c.SearchLanguage, CollectionType: c.Type,
		DatasetMode: c.DatasetMode, LiveSchema: liveSchema(c.LiveSchema),
		StructuredExtractionEnabled: c.StructuredExtractionEnabled,
		ExtractionInstructions:      c.ExtractionInstructions, ExtractionMaxPages: c.ExtractionMaxPages,
		ImageDescriptionsEnabled: c.ImageDescriptionsEnabled, ImageDescriptionMode: c.ImageDescriptionMode,
		TableSizeBytes: c.TableSizeBytes, MyRole: c.MyRole, ShareCount: c.ShareCount,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
}

// shareDTO is spec 2.7.
type shareDTO struct {
	ID            uuid.UUID `json:"id"`
	CollectionID  uuid.UUID `json:"collection_id"`
	Type          string    `json:"type"`
	Target        string    `json:"target"`
	TargetDisplay string    `json:"targetDisplay"`
	Role          string    `json:"role"`
	CreatedAt     time.Time `json:"created_at"`
}

func newShare(s *store.Share) shareDTO {
	return shareDTO{ID: s.ID, CollectionID: s.CollectionID, Type: s.Type, Target: s.Target,
		TargetDisplay: s.TargetDisplay, Role: s.Role, CreatedAt: s.CreatedAt}
}

type statusDTO struct {
	Status string `json:"status"`
}
