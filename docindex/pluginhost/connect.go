package pluginhost

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"sync"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

// source is one connector, in process or a plugin process.
type source struct {
	typ   string
	local connector.Connector
	proc  *proc

	mu      sync.Mutex
	desc    connector.Description
	descErr error
	loaded  bool
}

// started reads a new plugin process's description.
func (s *source) started(ctx context.Context, c connector.Connector) {
	d, err := c.Describe(ctx)
	if err == nil && d.Type != s.typ {
		s.proc.log.Warn("connector describes itself with another type; the executable's name decides", "described", d.Type)
	}
	s.store(d, err)
}

func (s *source) store(d connector.Description, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loaded = true
	s.desc, s.descErr = d, err
}

func (s *source) pluginInfo() PluginInfo {
	if s.local != nil && !s.isLoaded() {
		d, err := s.local.Describe(context.Background())
		s.store(d, err)
	}
	s.mu.Lock()
	info := PluginInfo{
		Name:       s.typ,
		Kind:       plugins.KindConnector,
		Version:    s.desc.Version,
		SDKVersion: s.desc.SDKVersion,
	}
	for _, c := range s.desc.Capabilities {
		info.Capabilities = append(info.Capabilities, string(c))
	}
	if s.descErr != nil {
		info.Error = s.descErr.Error()
	}
	s.mu.Unlock()
	if s.local != nil {
		info.Status = StatusInProcess
		return info
	}
	fillProc(&info, s.proc)
	return info
}

func (s *source) isLoaded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loaded
}

// ConnectorTypes lists the source types of every registered or discovered connector, in the
// order Plugins gives them: with Connector, the Host is the service's set of connectors.
func (h *Host) ConnectorTypes() []string {
	var out []string
	for _, p := range h.Plugins() {
		if p.Kind == plugins.KindConnector {
			out = append(out, p.Name)
		}
	}
	return out
}

// Connector returns the connector for source type typ. A plugin connector is
// returned even while its process is down: its calls then fail with
// plugins.ErrUnavailable, or succeed once it is back.
func (h *Host) Connector(typ string) (connector.Connector, bool) {
	h.mu.Lock()
	i := slices.IndexFunc(h.connectors, func(s *source) bool { return s.typ == typ })
	var s *source
	if i >= 0 {
		s = h.connectors[i]
	}
	h.mu.Unlock()
	switch {
	case s == nil:
		return nil, false
	case s.local != nil:
		return s.local, true
	default:
		return &remote{s: s}, true
	}
}

// remote is a plugin connector with the host's supervision: calls wait for a
// (re)starting process and are retried once when the process died under
// them.
type remote struct {
	s *source
}

func (r *remote) do(ctx context.Context, fn func(connector.Connector) error) error {
	return r.s.proc.do(ctx, func(raw any) error { return fn(raw.(connector.Connector)) })
}

func (r *remote) Describe(ctx context.Context) (connector.Description, error) {
	r.s.mu.Lock()
	d, err, ok := r.s.desc, r.s.descErr, r.s.loaded
	r.s.mu.Unlock()
	if ok && err == nil {
		return d, nil
	}
	err = r.do(ctx, func(c connector.Connector) error {
		var err error
		d, err = c.Describe(ctx)
		return err
	})
	r.s.store(d, err)
	return d, err
}

func (r *remote) Validate(ctx context.Context, config json.RawMessage) error {
	return r.do(ctx, func(c connector.Connector) error { return c.Validate(ctx, config) })
}

func (r *remote) CheckHealth(ctx context.Context, config json.RawMessage) (connector.Health, error) {
	var h connector.Health
	err := r.do(ctx, func(c connector.Connector) error {
		var err error
		h, err = c.CheckHealth(ctx, config)
		return err
	})
	return h, err
}

// Sync is retried after a crash only if the crash came before the first
// event: past that, the caller has acted on events and resumes from its last
// checkpoint instead.
func (r *remote) Sync(ctx context.Context, req connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		p := r.s.proc
		for attempt := 0; ; attempt++ {
			inst, err := p.get(ctx)
			if err != nil {
				yield(connector.Event{}, err)
				return
			}
			var failed error
			yielded := false
			for ev, err := range inst.raw.(connector.Connector).Sync(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				yielded = true
				if !yield(ev, nil) {
					return
				}
			}
			if failed == nil {
				return
			}
			if yielded || attempt > 0 || ctx.Err() != nil || !p.broken(inst, failed) {
				yield(connector.Event{}, failed)
				return
			}
			p.log.Warn("sync failed because the plugin process went away; retrying", "error", failed)
		}
	}
}

func (r *remote) Fetch(ctx context.Context, req connector.FetchRequest) (*connector.Content, error) {
	var content *connector.Content
	err := r.do(ctx, func(c connector.Connector) error {
		var err error
		content, err = c.Fetch(ctx, req)
		return err
	})
	return content, err
}
