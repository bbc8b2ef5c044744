package connector

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/internal/pb/connectorv1"
)

// Conversions between the author-facing types and the generated ones.

func itemToPB(it Item) (*connectorv1.Item, error) {
	if it.ID == "" {
		return nil, fmt.Errorf("item without an ID (name %q): %w", it.Name, plugins.ErrInvalidArgument)
	}
	if len(it.Inline) > InlineLimit {
		return nil, fmt.Errorf("item %q: %d bytes inline exceed InlineLimit (%d); serve the content through Fetch", it.ID, len(it.Inline), InlineLimit)
	}
	out := &connectorv1.Item{
		Id:          it.ID,
		Version:     it.Version,
		Name:        it.Name,
		Path:        it.Path,
		Url:         it.URL,
		ContentType: it.ContentType,
		Size:        it.Size,
		Inline:      it.Inline,
	}
	if !it.ModifiedAt.IsZero() {
		out.ModifiedUnixNanos = it.ModifiedAt.UnixNano()
	}
	if len(it.Metadata) > 0 {
		md, err := json.Marshal(it.Metadata)
		if err != nil {
			return nil, fmt.Errorf("item %q: metadata: %w", it.ID, err)
		}
		out.Metadata = md
	}
	if it.Access != nil {
		out.Access = &connectorv1.Access{Public: it.Access.Public, Users: it.Access.Users, Groups: it.Access.Groups}
	}
	return out, nil
}

func itemFromPB(p *connectorv1.Item) (Item, error) {
	if p == nil {
		return Item{}, errors.New("missing item")
	}
	it := Item{
		ID:          p.Id,
		Version:     p.Version,
		Name:        p.Name,
		Path:        p.Path,
		URL:         p.Url,
		ContentType: p.ContentType,
		Size:        p.Size,
		Inline:      p.Inline,
	}
	if p.ModifiedUnixNanos != 0 {
		it.ModifiedAt = time.Unix(0, p.ModifiedUnixNanos).UTC()
	}
	if len(p.Metadata) > 0 {
		if err := json.Unmarshal(p.Metadata, &it.Metadata); err != nil {
			return Item{}, fmt.Errorf("item %q: metadata: %w", p.Id, err)
		}
	}
	if p.Access != nil {
		it.Access = &Access{Public: p.Access.Public, Users: p.Access.Users, Groups: p.Access.Groups}
	}
	return it, nil
}

func eventToPB(ev Event) (*connectorv1.SyncEvent, error) {
	switch ev.Kind {
	case EventUpsert:
		it, err := itemToPB(ev.Item)
		if err != nil {
			return nil, err
		}
		return &connectorv1.SyncEvent{Event: &connectorv1.SyncEvent_Upsert{Upsert: it}}, nil
	case EventDelete:
		if ev.ID == "" {
			return nil, fmt.Errorf("delete event without an ID: %w", plugins.ErrInvalidArgument)
		}
		return &connectorv1.SyncEvent{Event: &connectorv1.SyncEvent_Delete{Delete: &connectorv1.Delete{Id: ev.ID}}}, nil
	case EventCheckpoint:
		return &connectorv1.SyncEvent{Event: &connectorv1.SyncEvent_Checkpoint{Checkpoint: &connectorv1.Checkpoint{Cursor: ev.Cursor}}}, nil
	case EventSnapshot:
		return &connectorv1.SyncEvent{Event: &connectorv1.SyncEvent_Snapshot{Snapshot: &connectorv1.Snapshot{}}}, nil
	default:
		return nil, fmt.Errorf("sync event of unknown kind %d: %w", ev.Kind, plugins.ErrInvalidArgument)
	}
}

func eventFromPB(p *connectorv1.SyncEvent) (Event, error) {
	switch e := p.Event.(type) {
	case *connectorv1.SyncEvent_Upsert:
		it, err := itemFromPB(e.Upsert)
		if err != nil {
			return Event{}, err
		}
		return Upsert(it), nil
	case *connectorv1.SyncEvent_Delete:
		return Delete(e.Delete.GetId()), nil
	case *connectorv1.SyncEvent_Checkpoint:
		return Checkpoint(e.Checkpoint.GetCursor()), nil
	case *connectorv1.SyncEvent_Snapshot:
		return Snapshot(), nil
	default:
		// A newer plugin may send an event kind this host does not know.
		// Skipping it would silently lose meaning, so it is an error.
		return Event{}, fmt.Errorf("sync event of a kind this host does not know (%T)", p.Event)
	}
}

func capsToStrings(cs []Capability) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

func capsFromStrings(ss []string) []Capability {
	out := make([]Capability, len(ss))
	for i, s := range ss {
		out[i] = Capability(s)
	}
	return out
}
