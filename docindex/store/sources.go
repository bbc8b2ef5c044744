package store

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Source is a data source feeding a collection.
type Source struct {
	bun.BaseModel `bun:"table:docindex.sources,alias:src"`

	ID           uuid.UUID       `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	Name         string          `bun:"name,notnull"`
	SourceType   string          `bun:"source_type,notnull"`
	Config       json.RawMessage `bun:"config,type:jsonb,notnull"`
	Secrets      []byte          `bun:"secrets"`
	Enabled      bool            `bun:"enabled,notnull"`
	SyncSchedule *string         `bun:"sync_schedule"`
	CollectionID uuid.NullUUID   `bun:"collection_id,type:uuid"`
	CreatedBy    uuid.NullUUID   `bun:"created_by,type:uuid"`
	Cursor       []byte          `bun:"cursor"`
	CreatedAt    time.Time       `bun:"created_at,notnull,default:now()"`
	UpdatedAt    time.Time       `bun:"updated_at,notnull,default:now()"`
	LastSyncAt   *time.Time      `bun:"last_sync_at"`

	// Filled by list queries.
	SyncInProgress bool    `bun:"sync_in_progress,scanonly"`
	CreatedByEmail *string `bun:"created_by_email,scanonly"`
}

// SyncRun is one sync of a source with its counts.
type SyncRun struct {
	bun.BaseModel `bun:"table:docindex.sync_runs,alias:r"`

	ID          uuid.UUID       `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	SourceID    uuid.UUID       `bun:"source_id,type:uuid,notnull"`
	Trigger     string          `bun:"trigger,notnull"`
	Status      string          `bun:"status,notnull"`
	Holder      string          `bun:"holder,notnull"`
	FullListing bool            `bun:"full_listing,notnull"`
	Seen        int             `bun:"seen,notnull"`
	Created     int             `bun:"created,notnull"`
	Updated     int             `bun:"updated,notnull"`
	Deleted     int             `bun:"deleted,notnull"`
	Skipped     int             `bun:"skipped,notnull"`
	Failed      int             `bun:"failed,notnull"`
	Errors      json.RawMessage `bun:"errors,type:jsonb,notnull"`
	Error       *string         `bun:"error"`
	StartedAt   time.Time       `bun:"started_at,notnull,default:now()"`
	HeartbeatAt time.Time       `bun:"heartbeat_at,notnull,default:now()"`
	FinishedAt  *time.Time      `bun:"finished_at"`
}
