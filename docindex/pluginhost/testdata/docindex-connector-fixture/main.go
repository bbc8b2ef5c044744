package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

type fixture struct {
	log *slog.Logger
}

type config struct {
	Items int    `json:"items"`
	Token string `json:"token"`
	// Crash names a call during which the process exits ("health", "sync").
	Crash string `json:"crash"`
}

func (f *fixture) Describe(context.Context) (connector.Description, error) {
	return connector.Description{
		Type:         "fixture",
		Version:      "1.2.3",
		DisplayName:  "Test fixture",
		Capabilities: []connector.Capability{connector.CapSchedule, connector.CapIncremental},
		ConfigSchema: json.RawMessage(`{"type":"object","properties":{
			"items":{"type":"integer","minimum":0},
			"token":{"type":"string","writeOnly":true},
			"crash":{"type":"string"}}}`),
	}, nil
}

func (f *fixture) config(raw json.RawMessage) (config, error) {
	var c config
	if err := connector.DecodeConfig(raw, &c); err != nil {
		return c, err
	}
	var v connector.ValidationError
	if c.Items < 0 {
		v.Add("/items", "must not be negative")
	}
	return c, v.Err()
}

func (f *fixture) Validate(_ context.Context, raw json.RawMessage) error {
	_, err := f.config(raw)
	return err
}

func (f *fixture) CheckHealth(_ context.Context, raw json.RawMessage) (connector.Health, error) {
	c, err := f.config(raw)
	if err != nil {
		return connector.Health{}, err
	}
	if c.Crash == "health" {
		os.Exit(3)
	}
	f.log.Info("health checked", "items", c.Items)
	return connector.Health{Status: connector.StatusOK}, nil
}

func (f *fixture) Sync(_ context.Context, req connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		c, err := f.config(req.Config)
		if err != nil {
			yield(connector.Event{}, err)
			return
		}
		if c.Crash == "sync" {
			os.Exit(4)
		}
		if !yield(connector.Snapshot(), nil) {
			return
		}
		for i := range c.Items {
			data := content(i)
			it := connector.Item{ID: "item-" + strconv.Itoa(i), Version: "v1", Name: fmt.Sprintf("item-%d.txt", i), ContentType: "text/plain", Size: int64(len(data))}
			if !yield(connector.Upsert(it), nil) {
				return
			}
		}
		yield(connector.Checkpoint([]byte(strconv.Itoa(c.Items))), nil)
	}
}

func content(i int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("content of item %d\n", i)), 1+i*5000)
}

func (f *fixture) Fetch(_ context.Context, req connector.FetchRequest) (*connector.Content, error) {
	c, err := f.config(req.Config)
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimPrefix(req.Item.ID, "item-"))
	if err != nil || n < 0 || n >= c.Items || !strings.HasPrefix(req.Item.ID, "item-") {
		return nil, fmt.Errorf("fixture: no item %q: %w", req.Item.ID, plugins.ErrNotFound)
	}
	data := content(n)
	return &connector.Content{ContentType: "text/plain", Size: int64(len(data)), Body: io.NopCloser(bytes.NewReader(data))}, nil
}

func main() {
	connector.Serve(&fixture{log: plugins.Logger()})
}
