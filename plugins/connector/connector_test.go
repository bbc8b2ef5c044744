package connector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/plugintest"
)

// memory is a connector over an in-memory source, to test the SDK's
// transport of every call.
type memory struct {
	items map[string][]byte
}

type memoryConfig struct {
	Prefix string `json:"prefix"`
	Token  string `json:"token"`
	Panic  bool   `json:"panic"`
}

func newMemory() *memory {
	return &memory{items: map[string][]byte{
		"a":   []byte("alpha"),
		"b":   []byte("bravo"),
		"big": bytes.Repeat([]byte("0123456789abcdef"), 200_000), // 3.2 MB: many chunks
		"c":   nil,
	}}
}

func (m *memory) Describe(context.Context) (connector.Description, error) {
	return connector.Description{
		Type:         "memory",
		Version:      "0.1.0",
		DisplayName:  "In-memory test source",
		Capabilities: []connector.Capability{connector.CapSchedule, connector.CapIncremental, connector.CapACL},
		ConfigSchema: json.RawMessage(`{"type":"object","properties":{
			"prefix":{"type":"string"},
			"token":{"type":"string","writeOnly":true},
			"panic":{"type":"boolean"}}}`),
	}, nil
}

func (m *memory) config(raw json.RawMessage) (memoryConfig, error) {
	var cfg memoryConfig
	if err := connector.DecodeConfig(raw, &cfg); err != nil {
		return cfg, err
	}
	var v connector.ValidationError
	if strings.Contains(cfg.Prefix, "/") {
		v.Add("/prefix", "must not contain a slash")
	}
	return cfg, v.Err()
}

func (m *memory) Validate(_ context.Context, raw json.RawMessage) error {
	_, err := m.config(raw)
	return err
}

func (m *memory) CheckHealth(_ context.Context, raw json.RawMessage) (connector.Health, error) {
	cfg, err := m.config(raw)
	if err != nil {
		return connector.Health{}, err
	}
	if cfg.Panic {
		panic("health check exploded")
	}
	if cfg.Token == "bad" {
		return connector.Health{}, fmt.Errorf("memory: token rejected: %w", plugins.ErrUnauthenticated)
	}
	return connector.Health{Status: connector.StatusOK, Message: "all good"}, nil
}

func (m *memory) Sync(_ context.Context, req connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		cfg, err := m.config(req.Config)
		if err != nil {
			yield(connector.Event{}, err)
			return
		}
		if string(req.Cursor) == "done" {
			yield(connector.Delete(cfg.Prefix+"gone"), nil)
			return
		}
		if !yield(connector.Snapshot(), nil) {
			return
		}
		for _, id := range []string{"a", "b", "big", "c"} {
			it := connector.Item{
				ID:          cfg.Prefix + id,
				Version:     "v1",
				Name:        id + ".txt",
				Path:        "dir/" + id + ".txt",
				URL:         "https://example.invalid/" + id,
				ContentType: "text/plain",
				Size:        int64(len(m.items[id])),
				ModifiedAt:  time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
				Metadata:    map[string]any{"title": strings.ToUpper(id), "tags": []any{"x", "y"}},
				Access:      &connector.Access{Users: []string{"ann@example.com"}, Groups: []string{"g1"}},
			}
			if id == "a" {
				it.Inline = m.items[id]
			}
			if !yield(connector.Upsert(it), nil) {
				return
			}
		}
		yield(connector.Checkpoint([]byte("done")), nil)
	}
}

func (m *memory) Fetch(_ context.Context, req connector.FetchRequest) (*connector.Content, error) {
	cfg, err := m.config(req.Config)
	if err != nil {
		return nil, err
	}
	data, ok := m.items[strings.TrimPrefix(req.Item.ID, cfg.Prefix)]
	if !ok {
		return nil, fmt.Errorf("memory: item %q: %w", req.Item.ID, plugins.ErrNotFound)
	}
	return &connector.Content{ContentType: "text/plain", Size: int64(len(data)), Body: io.NopCloser(bytes.NewReader(data))}, nil
}

var validConfig = json.RawMessage(`{"prefix":"p-","token":"secret"}`)

func TestConformance(t *testing.T) {
	c := plugintest.StartConnector(t, newMemory())
	plugintest.RunConnectorSuite(t, c,
		plugintest.WithConfig(validConfig),
		plugintest.WithInvalidConfigs(json.RawMessage(`{"prefix":"a/b"}`), json.RawMessage(`{"unknown":1}`)),
		plugintest.WithMinItems(4))
}

// TestConformanceInProcess runs the suite on the implementation itself: the
// suite must not depend on the transport.
func TestConformanceInProcess(t *testing.T) {
	plugintest.RunConnectorSuite(t, newMemory(), plugintest.WithConfig(validConfig))
}

func TestItemsCrossTheBoundaryIntact(t *testing.T) {
	c := plugintest.StartConnector(t, newMemory())
	ctx := context.Background()
	var got []connector.Event
	for ev, err := range c.Sync(ctx, connector.SyncRequest{Config: validConfig}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	var want []connector.Event
	for ev, err := range newMemory().Sync(ctx, connector.SyncRequest{Config: validConfig}) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ev)
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) {
		t.Errorf("events changed on the way:\n got %s\nwant %s", gj, wj)
	}

	var deletes []string
	for ev, err := range c.Sync(ctx, connector.SyncRequest{Config: validConfig, Cursor: []byte("done")}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == connector.EventDelete {
			deletes = append(deletes, ev.ID)
		}
	}
	if len(deletes) != 1 || deletes[0] != "p-gone" {
		t.Errorf("incremental sync deletes = %v", deletes)
	}
}

func TestFetchStreamsLargeContent(t *testing.T) {
	c := plugintest.StartConnector(t, newMemory())
	content, err := c.Fetch(context.Background(), connector.FetchRequest{Config: validConfig, Item: connector.Item{ID: "p-big", Name: "big.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	defer content.Body.Close()
	got, err := io.ReadAll(content.Body)
	if err != nil {
		t.Fatal(err)
	}
	if want := newMemory().items["big"]; !bytes.Equal(got, want) || content.Size != int64(len(want)) {
		t.Fatalf("got %d bytes (size %d), want %d", len(got), content.Size, len(want))
	}
}

func TestErrorsKeepTheirMeaning(t *testing.T) {
	c := plugintest.StartConnector(t, newMemory())
	ctx := context.Background()

	_, err := c.CheckHealth(ctx, json.RawMessage(`{"token":"bad"}`))
	if !errors.Is(err, plugins.ErrUnauthenticated) || !strings.Contains(err.Error(), "token rejected") {
		t.Errorf("unauthenticated: %v", err)
	}

	err = c.Validate(ctx, json.RawMessage(`{"prefix":"a/b","extra":true}`))
	var ve *connector.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, connector.ErrInvalidConfig) || !errors.Is(err, plugins.ErrInvalidArgument) {
		t.Fatalf("validation: %v", err)
	}
	if len(ve.Problems) != 1 || !strings.Contains(ve.Problems[0].Message, "extra") {
		t.Errorf("problems = %+v", ve.Problems)
	}
	err = c.Validate(ctx, json.RawMessage(`{"prefix":"a/b"}`))
	if !errors.As(err, &ve) || ve.Problems[0].Field != "/prefix" {
		t.Errorf("field of the problem: %v", err)
	}
	err = c.Validate(ctx, json.RawMessage(`{"prefix":7}`))
	if !errors.As(err, &ve) || ve.Problems[0].Field != "/prefix" {
		t.Errorf("type error: %v", err)
	}

	_, err = c.Fetch(ctx, connector.FetchRequest{Config: validConfig, Item: connector.Item{ID: "p-nope", Name: "x"}})
	if !errors.Is(err, plugins.ErrNotFound) || !strings.Contains(err.Error(), `"p-nope"`) {
		t.Errorf("not found: %v", err)
	}
	for _, ev := range c.Sync(ctx, connector.SyncRequest{Config: json.RawMessage(`{"prefix":"x/"}`)}) {
		_ = ev
	}
	for _, err := range c.Sync(ctx, connector.SyncRequest{Config: json.RawMessage(`{"prefix":"x/"}`)}) {
		if !errors.Is(err, connector.ErrInvalidConfig) {
			t.Errorf("sync with a bad config: %v", err)
		}
	}
}

func TestPanicIsOneFailedCall(t *testing.T) {
	c := plugintest.StartConnector(t, newMemory())
	ctx := context.Background()
	_, err := c.CheckHealth(ctx, json.RawMessage(`{"panic":true}`))
	if err == nil || !strings.Contains(err.Error(), "health check exploded") {
		t.Fatalf("panicking call: %v", err)
	}
	if h, err := c.CheckHealth(ctx, validConfig); err != nil || h.Status != connector.StatusOK {
		t.Fatalf("the plugin should still serve after a panic: %v %v", h, err)
	}
}

func TestOversizedInlineIsRefused(t *testing.T) {
	c := plugintest.StartConnector(t, inlineTooBig{newMemory()})
	for _, err := range c.Sync(context.Background(), connector.SyncRequest{Config: validConfig}) {
		if err == nil || !strings.Contains(err.Error(), "InlineLimit") {
			t.Fatalf("oversized inline content: %v", err)
		}
		return
	}
	t.Fatal("no error")
}

type inlineTooBig struct{ *memory }

func (m inlineTooBig) Sync(context.Context, connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		yield(connector.Upsert(connector.Item{ID: "x", Name: "x", Inline: make([]byte, connector.InlineLimit+1)}), nil)
	}
}

func TestSecretFieldsAndRedact(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"url":{"type":"string"},
		"token":{"type":"string","writeOnly":true},
		"auth":{"type":"object","properties":{"user":{"type":"string"},"pass/word":{"type":"string","writeOnly":true}}}}}`)
	got, err := connector.SecretFields(schema)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "/auth/pass~1word,/token" {
		t.Errorf("secret fields = %v", got)
	}
	red, err := connector.Redact(schema, json.RawMessage(`{"url":"u","token":"t","auth":{"user":"me","pass/word":"pw"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(red) != `{"auth":{"user":"me"},"url":"u"}` {
		t.Errorf("redacted = %s", red)
	}
}
