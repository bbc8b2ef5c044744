package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

// ConnectorOption adjusts RunConnectorSuite.
type ConnectorOption func(*connectorSuite)

type connectorSuite struct {
	config   json.RawMessage
	invalid  []json.RawMessage
	minItems int
	fetchMax int
	timeout  time.Duration
	stable   bool
}

// WithConfig is a valid configuration of a source the suite can read (a
// fixture the test serves on loopback, say), with at least one item.
// Required.
func WithConfig(config json.RawMessage) ConnectorOption {
	return func(s *connectorSuite) { s.config = config }
}

// WithInvalidConfigs adds configurations that Validate must refuse, on top
// of the suite's own (values that are not JSON objects).
func WithInvalidConfigs(configs ...json.RawMessage) ConnectorOption {
	return func(s *connectorSuite) { s.invalid = append(s.invalid, configs...) }
}

// WithMinItems requires a full sync to list at least n items (default 1).
func WithMinItems(n int) ConnectorOption {
	return func(s *connectorSuite) { s.minItems = n }
}

// WithFetchLimit bounds how many items the suite fetches (default 10).
func WithFetchLimit(n int) ConnectorOption {
	return func(s *connectorSuite) { s.fetchMax = n }
}

// WithOperationTimeout bounds each operation, a whole sync included
// (default 60s).
func WithOperationTimeout(d time.Duration) ConnectorOption {
	return func(s *connectorSuite) { s.timeout = d }
}

// UnstableSource skips the check that two syncs of an unchanged source
// list the same items with the same versions, for sources that change
// between the two syncs by nature.
func UnstableSource() ConnectorOption {
	return func(s *connectorSuite) { s.stable = false }
}

// RunConnectorSuite checks that c honours the connector contract against a
// source described by WithConfig. Run it on the client StartConnector
// returns, so that the gRPC boundary is part of the test.
func RunConnectorSuite(t *testing.T, c connector.Connector, opts ...ConnectorOption) {
	s := &connectorSuite{minItems: 1, fetchMax: 10, timeout: 60 * time.Second, stable: true}
	for _, o := range opts {
		o(s)
	}
	if len(s.config) == 0 {
		t.Fatal("RunConnectorSuite needs plugintest.WithConfig(a valid configuration)")
	}
	var desc connector.Description
	t.Run("Describe", func(t *testing.T) {
		ctx, cancel := s.ctx()
		defer cancel()
		var err error
		desc, err = c.Describe(ctx)
		if err != nil {
			t.Fatalf("Describe: %v", err)
		}
		if _, _, ok := plugins.ParseName(plugins.KindConnector.Prefix() + desc.Type); !ok {
			t.Errorf("type %q is not usable in a binary name (lower-case letters, digits, '-', '_')", desc.Type)
		}
		if desc.Version == "" {
			t.Error("empty version")
		}
		if desc.DisplayName == "" {
			t.Error("empty display name")
		}
		for _, cap := range desc.Capabilities {
			if !slices.Contains(connector.Capabilities(), cap) {
				t.Errorf("unknown capability %q (known: %v)", cap, connector.Capabilities())
			}
		}
		var schema map[string]any
		if err := json.Unmarshal(desc.ConfigSchema, &schema); err != nil {
			t.Fatalf("config schema is not a JSON object: %v", err)
		}
		if schema["type"] != "object" {
			t.Errorf(`config schema has "type" %v, want "object"`, schema["type"])
		}
		if _, ok := schema["properties"].(map[string]any); !ok {
			t.Error(`config schema has no "properties" object`)
		}
		if _, err := connector.SecretFields(desc.ConfigSchema); err != nil {
			t.Error(err)
		}
	})
	t.Run("Validate", func(t *testing.T) {
		ctx, cancel := s.ctx()
		defer cancel()
		if err := c.Validate(ctx, s.config); err != nil {
			t.Errorf("Validate(valid config): %v", err)
		}
		invalid := append([]json.RawMessage{json.RawMessage(`[]`), json.RawMessage(`"text"`), json.RawMessage(`42`)}, s.invalid...)
		for _, cfg := range invalid {
			err := c.Validate(ctx, cfg)
			var ve *connector.ValidationError
			switch {
			case err == nil:
				t.Errorf("Validate(%s) accepted an invalid configuration", cfg)
			case !errors.Is(err, connector.ErrInvalidConfig):
				t.Errorf("Validate(%s): %v; want an error wrapping connector.ErrInvalidConfig", cfg, err)
			case !errors.As(err, &ve) || len(ve.Problems) == 0:
				t.Errorf("Validate(%s): %v; want a *connector.ValidationError with problems", cfg, err)
			}
		}
	})
	t.Run("CheckHealth", func(t *testing.T) {
		ctx, cancel := s.ctx()
		defer cancel()
		h, err := c.CheckHealth(ctx, s.config)
		if err != nil {
			t.Fatalf("CheckHealth: %v", err)
		}
		if h.Status != connector.StatusOK {
			t.Errorf("CheckHealth: status %q (%s), want %q", h.Status, h.Message, connector.StatusOK)
		}
	})

	var first syncRun
	t.Run("Sync", func(t *testing.T) {
		first = s.sync(t, c, desc, nil)
		if len(first.items) < s.minItems {
			t.Errorf("sync listed %d items, want at least %d", len(first.items), s.minItems)
		}
	})
	if s.stable {
		t.Run("SyncIsStable", func(t *testing.T) {
			second := s.sync(t, c, desc, nil)
			if len(second.items) != len(first.items) {
				t.Fatalf("two syncs of an unchanged source listed %d and %d items", len(first.items), len(second.items))
			}
			for id, it := range first.items {
				again, ok := second.items[id]
				switch {
				case !ok:
					t.Errorf("item %q listed by the first sync only", id)
				case again.Version != it.Version:
					t.Errorf("item %q: version %q, then %q, with no change at the source", id, it.Version, again.Version)
				}
			}
		})
	}
	if desc.Has(connector.CapIncremental) && first.cursor != nil {
		t.Run("SyncFromCursor", func(t *testing.T) {
			s.sync(t, c, desc, first.cursor)
		})
	}
	t.Run("SyncStopsEarly", func(t *testing.T) {
		ctx, cancel := s.ctx()
		defer cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range c.Sync(ctx, connector.SyncRequest{Config: s.config}) {
				break
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("leaving a Sync loop after one event did not return within 10s")
		}
	})
	t.Run("Fetch", func(t *testing.T) {
		var ids []string
		for id, it := range first.items {
			if it.Inline == nil {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		if len(ids) > s.fetchMax {
			ids = ids[:s.fetchMax]
		}
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Add(1)
			go func() { // concurrently: connectors must be safe for it
				defer wg.Done()
				s.fetch(t, c, first.items[id])
			}()
		}
		wg.Wait()
	})
	t.Run("FetchCloseEarly", func(t *testing.T) {
		for _, it := range first.items {
			if it.Inline != nil {
				continue
			}
			ctx, cancel := s.ctx()
			defer cancel()
			content, err := c.Fetch(ctx, connector.FetchRequest{Config: s.config, Item: it})
			if err != nil {
				t.Fatalf("Fetch %q: %v", it.ID, err)
			}
			_, _ = content.Body.Read(make([]byte, 1))
			if err := content.Body.Close(); err != nil {
				t.Errorf("closing a body before its end: %v", err)
			}
			return
		}
	})
	t.Run("FetchMissing", func(t *testing.T) {
		ctx, cancel := s.ctx()
		defer cancel()
		missing := connector.Item{ID: "docindex-conformance-missing-item", Name: "missing.txt"}
		for _, it := range first.items {
			// Keep the shape of a real id (a URL, a path) so that only its
			// existence is wrong.
			missing.ID = it.ID + "-docindex-conformance-missing"
			break
		}
		content, err := c.Fetch(ctx, connector.FetchRequest{Config: s.config, Item: missing})
		if err == nil {
			_, err = io.Copy(io.Discard, content.Body)
			content.Body.Close()
		}
		if !errors.Is(err, plugins.ErrNotFound) {
			t.Errorf("Fetch of an item that does not exist: %v; want an error wrapping plugins.ErrNotFound", err)
		}
	})
}

func (s *connectorSuite) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

type syncRun struct {
	items  map[string]connector.Item
	cursor []byte
}

func (s *connectorSuite) sync(t *testing.T, c connector.Connector, desc connector.Description, cursor []byte) syncRun {
	t.Helper()
	ctx, cancel := s.ctx()
	defer cancel()
	run := syncRun{items: map[string]connector.Item{}}
	n := 0
	for ev, err := range c.Sync(ctx, connector.SyncRequest{Config: s.config, Cursor: cursor}) {
		if err != nil {
			t.Fatalf("Sync: %v (after %d events)", err, n)
		}
		n++
		switch ev.Kind {
		case connector.EventSnapshot:
			if n != 1 {
				t.Errorf("Snapshot as event %d; it must come first", n)
			}
		case connector.EventUpsert:
			it := ev.Item
			switch {
			case it.ID == "":
				t.Errorf("upsert without an ID: %+v", it)
			case it.Name == "":
				t.Errorf("upsert %q without a name", it.ID)
			}
			if _, dup := run.items[it.ID]; dup {
				t.Errorf("item %q upserted twice in one sync", it.ID)
			}
			if it.Access != nil && !desc.Has(connector.CapACL) {
				t.Errorf("item %q carries an access list, but the connector does not declare %q", it.ID, connector.CapACL)
			}
			if it.Inline != nil && it.Size > 0 && int64(len(it.Inline)) != it.Size {
				t.Errorf("item %q: %d bytes inline, size says %d", it.ID, len(it.Inline), it.Size)
			}
			run.items[it.ID] = it
		case connector.EventDelete:
			if ev.ID == "" {
				t.Error("delete without an ID")
			}
		case connector.EventCheckpoint:
			if len(ev.Cursor) == 0 {
				t.Error("checkpoint with an empty cursor")
			}
			run.cursor = ev.Cursor
		default:
			t.Errorf("event of unknown kind %v", ev.Kind)
		}
	}
	return run
}

func (s *connectorSuite) fetch(t *testing.T, c connector.Connector, it connector.Item) {
	ctx, cancel := s.ctx()
	defer cancel()
	content, err := c.Fetch(ctx, connector.FetchRequest{Config: s.config, Item: it})
	if err != nil {
		t.Errorf("Fetch %q: %v", it.ID, err)
		return
	}
	defer content.Body.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, content.Body); err != nil {
		t.Errorf("Fetch %q: reading the body: %v", it.ID, err)
		return
	}
	if content.Size > 0 && int64(buf.Len()) != content.Size {
		t.Errorf("Fetch %q: %d bytes, the content says %d", it.ID, buf.Len(), content.Size)
	}
	if it.Size > 0 && content.Version == "" && int64(buf.Len()) != it.Size {
		t.Errorf("Fetch %q: %d bytes, the item says %d", it.ID, buf.Len(), it.Size)
	}
}
