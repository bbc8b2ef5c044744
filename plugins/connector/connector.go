package connector

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"slices"
	"time"
)

// Connector enumerates and reads the items of an external source.
// Implementations must be safe for concurrent use.
type Connector interface {
	// Describe tells what the connector is and how it is configured. It
	// must not depend on any configuration.
	Describe(ctx context.Context) (Description, error)
	// Validate checks a configuration without contacting the source. A bad
	// configuration is a *ValidationError (or an error wrapping
	// ErrInvalidConfig); nil means valid.
	Validate(ctx context.Context, config json.RawMessage) error
	// CheckHealth checks that the source is reachable and the credentials
	// work. A source that cannot be reached is a Health with StatusDown, not
	// an error; an error means the check itself could not run (for example
	// an invalid configuration).
	CheckHealth(ctx context.Context, config json.RawMessage) (Health, error)
	// Sync enumerates the source (see the package documentation). An error
	// yielded ends the run; events yielded before it stand.
	Sync(ctx context.Context, req SyncRequest) iter.Seq2[Event, error]
	// Fetch opens one item's content. The caller closes Content.Body; ctx
	// must stay live until it has.
	Fetch(ctx context.Context, req FetchRequest) (*Content, error)
}

// Capability is something a connector supports beyond the basic contract.
type Capability string

const (
	// CapSchedule: periodic syncs make sense (hourly, daily, weekly). Sources
	// of a type without it reject a sync schedule and sync on demand only.
	CapSchedule Capability = "schedule"
	// CapIncremental: given a cursor, Sync sends only the changes since it.
	CapIncremental Capability = "incremental"
	// CapACL: items carry access lists (Item.Access).
	CapACL Capability = "acl"
)

// Capabilities lists the capabilities this SDK knows, in a stable order.
func Capabilities() []Capability {
	return []Capability{CapSchedule, CapIncremental, CapACL}
}

// Description is what Describe returns.
type Description struct {
	// Type is the source type: the binary is docindex-connector-<Type>, and
	// sources are created with this type.
	Type string
	// Version is the connector's own version.
	Version string
	// DisplayName is a human name ("RSS and Atom feeds").
	DisplayName string
	// Description says in a sentence what the connector reads.
	Description string
	// Capabilities lists what the connector supports.
	Capabilities []Capability
	// ConfigSchema is a JSON Schema (an object schema) of the configuration.
	// Secret properties (passwords, tokens) carry "writeOnly": true: the
	// host stores them but never returns them (see SecretFields and Redact).
	ConfigSchema json.RawMessage
	// SDKVersion is filled in by the SDK with the version it was built with.
	SDKVersion string
}

// Has reports whether the description lists capability c.
func (d Description) Has(c Capability) bool { return slices.Contains(d.Capabilities, c) }

// HealthStatus is the outcome of a health check.
type HealthStatus string

const (
	StatusOK       HealthStatus = "ok"
	StatusDegraded HealthStatus = "degraded"
	StatusDown     HealthStatus = "down"
)

// Health is what CheckHealth returns.
type Health struct {
	Status HealthStatus
	// Message says what is wrong (or what was checked), for the operator.
	Message string
}

// SyncRequest is the input of Sync.
type SyncRequest struct {
	// Config is the source's configuration.
	Config json.RawMessage
	// Cursor is the cursor of the last checkpoint the host stored; empty on
	// a first sync or when the host wants a full listing.
	Cursor []byte
}

// FetchRequest is the input of Fetch.
type FetchRequest struct {
	Config json.RawMessage
	// Item is the item as the connector last upserted it.
	Item Item
}

// EventKind tells what a sync event says.
type EventKind int

const (
	EventUpsert EventKind = iota + 1
	EventDelete
	EventCheckpoint
	EventSnapshot
)

func (k EventKind) String() string {
	switch k {
	case EventUpsert:
		return "upsert"
	case EventDelete:
		return "delete"
	case EventCheckpoint:
		return "checkpoint"
	case EventSnapshot:
		return "snapshot"
	default:
		return "unknown"
	}
}

// Event is one element of a sync. Build it with Upsert, Delete, Checkpoint or
// Snapshot.
type Event struct {
	Kind EventKind
	// Item is set for EventUpsert.
	Item Item
	// ID is set for EventDelete.
	ID string
	// Cursor is set for EventCheckpoint.
	Cursor []byte
}

// Upsert says that item exists with this metadata.
func Upsert(item Item) Event { return Event{Kind: EventUpsert, Item: item} }

// Delete says that the item with this ID is gone.
func Delete(id string) Event { return Event{Kind: EventDelete, ID: id} }

// Checkpoint says that everything before it is complete and that a later sync
// may resume from cursor.
func Checkpoint(cursor []byte) Event { return Event{Kind: EventCheckpoint, Cursor: cursor} }

// Snapshot, sent first, says that the run lists every item of the source.
func Snapshot() Event { return Event{Kind: EventSnapshot} }

// InlineLimit is the largest Item.Inline the SDK carries. Anything larger is
// served through Fetch, which streams.
const InlineLimit = 1 << 20

// Item is one document of a source.
type Item struct {
	// ID identifies the item within its source, stably across syncs (a URL,
	// a path, a page id). Required.
	ID string
	// Version changes whenever the content changes (an ETag, a revision, a
	// modification time). Empty: the host compares content hashes instead,
	// which costs a Fetch per item and sync.
	Version string
	// Name is a file name whose extension tells the format when
	// ContentType is empty ("report.pdf", "Home.md"). Required.
	Name string
	// Path places the item in the source for display ("docs/guide/intro.md").
	Path string
	// URL is where a person opens the item, if it has one.
	URL string
	// ContentType is the MIME type, if known.
	ContentType string
	// Size is the content's length in bytes; 0 when unknown.
	Size int64
	// ModifiedAt is the last change at the source; zero when unknown.
	ModifiedAt time.Time
	// Metadata is stored with the file as its sourceMetadata (title,
	// author, labels: any JSON values).
	Metadata map[string]any
	// Access lists who may see the item, for connectors with CapACL; nil
	// when the connector does not know.
	Access *Access
	// Inline is the content itself, for sources whose listing already
	// carries it (feeds, chat messages). At most InlineLimit bytes. When set,
	// the host does not call Fetch.
	Inline []byte
}

// Access is an item's access list at its source.
type Access struct {
	// Public: anyone may see it.
	Public bool
	// Users are e-mail addresses.
	Users []string
	// Groups are directory group ids.
	Groups []string
}

// Content is an item's content as Fetch returns it.
type Content struct {
	// ContentType is the MIME type, if known.
	ContentType string
	// Name is a file name for the content, when it differs from the item's.
	Name string
	// Size is the length of Body in bytes; 0 (or -1) when unknown.
	Size int64
	// Version is the version of exactly these bytes, when the connector can
	// tell (it may be newer than the item's).
	Version string
	// Body is the content. The caller closes it.
	Body io.ReadCloser
}
