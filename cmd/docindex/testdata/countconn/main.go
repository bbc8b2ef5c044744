// Command countconn is a connector plugin for the scheduler test: it offers one inline item and
// appends a line to the file named by its config's "log" key every time a sync starts, so the test
// counts syncs across processes.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"

	"github.com/docindex/docindex/plugins/connector"
)

type countConn struct{}

type config struct {
	URL string `json:"url"`
	Log string `json:"log"`
}

func (countConn) Describe(context.Context) (connector.Description, error) {
	return connector.Description{Type: "webcrawl", Version: "0.0.1", DisplayName: "sync counter",
		Capabilities: []connector.Capability{connector.CapSchedule},
		ConfigSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},"log":{"type":"string"}},"required":["url","log"]}`)}, nil
}

func (countConn) Validate(_ context.Context, raw json.RawMessage) error {
	var c config
	if err := json.Unmarshal(raw, &c); err != nil || c.URL == "" || c.Log == "" {
		return fmt.Errorf("%w: url and log are required", connector.ErrInvalidConfig)
	}
	return nil
}

func (countConn) CheckHealth(context.Context, json.RawMessage) (connector.Health, error) {
	return connector.Health{Status: connector.StatusOK}, nil
}

func (countConn) Sync(_ context.Context, req connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		var c config
		_ = json.Unmarshal(req.Config, &c)
		f, err := os.OpenFile(c.Log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			yield(connector.Event{}, err)
			return
		}
		fmt.Fprintf(f, "sync by pid %d\n", os.Getpid())
		f.Close()
		if !yield(connector.Snapshot(), nil) {
			return
		}
		yield(connector.Upsert(connector.Item{ID: "page", Version: "1", Name: "page.txt", ContentType: "text/plain",
			Inline: []byte("Scheduled syncs run once.")}), nil)
	}
}

func (countConn) Fetch(context.Context, connector.FetchRequest) (*connector.Content, error) {
	return nil, fmt.Errorf("items are inline")
}

func main() { connector.Serve(countConn{}) }
