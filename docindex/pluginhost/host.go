package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/llm"
)

// ErrUnknownModel is wrapped by Embed's error for a model no provider
// offers. It is embedder.ErrUnknownModel, so either name matches.
var ErrUnknownModel = embedder.ErrUnknownModel

// Status is the state of a plugin as Plugins reports it.
type Status string

const (
	StatusInProcess Status = "in-process" // registered in process; nothing to supervise
	StatusStarting  Status = "starting"   // launching or restarting
	StatusRunning   Status = "running"
	StatusFailed    Status = "failed"  // could not be started; given up
	StatusStopped   Status = "stopped" // the host was closed
)

// PluginInfo describes one plugin: what `docindex plugins list` prints.
type PluginInfo struct {
	// Name is the provider name (embedders, LLMs) or source type (connectors).
	Name string
	Kind plugins.Kind
	// Path is the executable; empty for an in-process registration.
	Path       string
	Version    string
	SDKVersion string
	// Protocol is the negotiated protocol version (0 in process).
	Protocol int
	// Capabilities are a connector's capabilities, or an embedder's or LLM's model ids.
	Capabilities []string
	// Models are an embedder's models.
	Models []embedder.Model
	// LLMModels are a language-model provider's models.
	LLMModels []llm.Model
	Status    Status
	PID       int
	Restarts  int
	// Error is the last problem: why the plugin does not start, or why it
	// offers nothing (an embedder or LLM whose Models failed).
	Error string
}

// Option configures a Host.
type Option func(*Host)

// WithDir sets the plugin directory that Start searches for
// docindex-embedder-*, docindex-connector-* and docindex-llm-* executables. Without it,
// Start discovers nothing and only in-process registrations are served.
func WithDir(dir string) Option { return func(h *Host) { h.dir = dir } }

// WithLogger sets the logger for the host and for the plugins' log lines.
func WithLogger(l *slog.Logger) Option { return func(h *Host) { h.log = l } }

// WithStartTimeout bounds how long a plugin may take to start and answer its
// first call (default 30s).
func WithStartTimeout(d time.Duration) Option { return func(h *Host) { h.timeout = d } }

// WithEnv adds environment variables ("KEY=value") to every plugin process,
// on top of the host's own environment. Plugins read their settings (API
// keys, data files) from the environment.
func WithEnv(kv ...string) Option { return func(h *Host) { h.env = append(h.env, kv...) } }

// WithRestartDelay sets the first and the longest delay between restarts of
// a plugin that keeps exiting quickly (default 250ms and 30s).
func WithRestartDelay(first, longest time.Duration) Option {
	return func(h *Host) { h.backoff = [2]time.Duration{first, longest} }
}

// WithModelRetry sets how soon a provider whose model listing failed (a
// missing data file, a missing API key) is asked again when the catalog is
// read (default 10s), so that fixing it needs no restart.
func WithModelRetry(d time.Duration) Option { return func(h *Host) { h.modelRetry = d } }

// Host discovers, runs and supervises plugins. It is safe for concurrent
// use. A Host is an embedder.Embedder over all its embedding providers;
// LLM returns it as an llm.LLM over all its language-model providers.
type Host struct {
	dir        string
	log        *slog.Logger
	timeout    time.Duration
	env        []string
	backoff    [2]time.Duration
	modelRetry time.Duration

	mu         sync.Mutex
	embedders  []*provider // in registration order: in process first, then discovered by name
	connectors []*source
	llms       []*chat // like embedders
	procs      []*proc
	started    bool
	closed     bool
}

var _ embedder.Embedder = (*Host)(nil)

// New returns a host. Nothing runs before Start.
func New(opts ...Option) *Host {
	h := &Host{
		log:        slog.Default(),
		timeout:    30 * time.Second,
		backoff:    [2]time.Duration{250 * time.Millisecond, 30 * time.Second},
		modelRetry: 10 * time.Second,
	}
	for _, o := range opts {
		o(h)
	}
	return h
}

// RegisterEmbedder adds an in-process provider. It takes precedence over a
// discovered plugin of the same name, and its models over theirs.
func (h *Host) RegisterEmbedder(name string, e embedder.Embedder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.embedders = slices.DeleteFunc(h.embedders, func(p *provider) bool { return p.name == name && p.local != nil })
	// In-process providers go before discovered ones, in registration order.
	i := 0
	for i < len(h.embedders) && h.embedders[i].local != nil {
		i++
	}
	h.embedders = slices.Insert(h.embedders, i, &provider{name: name, local: e, retry: h.modelRetry})
}

// RegisterConnector adds an in-process connector for source type typ. It
// takes precedence over a discovered plugin of the same type.
func (h *Host) RegisterConnector(typ string, c connector.Connector) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.connectors = slices.DeleteFunc(h.connectors, func(s *source) bool { return s.typ == typ && s.local != nil })
	h.connectors = slices.Insert(h.connectors, 0, &source{typ: typ, local: c})
}

// Start discovers the plugins in the directory, launches them and reads what
// they offer (models, descriptions). It returns once every plugin has
// started or failed to; a plugin that fails is logged and reported by
// Plugins, and does not fail Start. Only an unreadable directory does.
func (h *Host) Start(ctx context.Context) error {
	h.mu.Lock()
	if h.started || h.closed {
		h.mu.Unlock()
		return errors.New("plugin host: Start called twice or after Close")
	}
	h.started = true
	h.mu.Unlock()
	if h.dir == "" {
		return nil
	}
	found, err := discover(h.dir)
	if err != nil {
		return err
	}
	var readies []chan struct{}
	h.mu.Lock()
	for _, f := range found {
		log := h.log.With("plugin", f.name, "kind", string(f.kind))
		if h.hasLocal(f.kind, f.name) {
			log.Warn("plugin skipped: an in-process implementation is registered under the same name", "path", f.path)
			continue
		}
		p := h.newProc(f, log)
		switch f.kind {
		case plugins.KindEmbedder:
			pr := &provider{name: f.name, proc: p, retry: h.modelRetry}
			p.sets = func() map[int]plugin.PluginSet { return embedder.VersionedPlugins(nil) }
			p.onStart = func(ctx context.Context, raw any) { pr.started(ctx, raw.(embedder.Embedder)) }
			h.embedders = append(h.embedders, pr)
		case plugins.KindConnector:
			s := &source{typ: f.name, proc: p}
			p.sets = func() map[int]plugin.PluginSet { return connector.VersionedPlugins(nil) }
			p.onStart = func(ctx context.Context, raw any) { s.started(ctx, raw.(connector.Connector)) }
			h.connectors = append(h.connectors, s)
		case plugins.KindLLM:
			c := &chat{name: f.name, proc: p, retry: h.modelRetry}
			p.sets = func() map[int]plugin.PluginSet { return llm.VersionedPlugins(nil) }
			p.onStart = func(ctx context.Context, raw any) { c.started(ctx, raw.(llm.LLM)) }
			h.llms = append(h.llms, c)
		default:
			log.Warn("plugin skipped: this host does not know its kind", "path", f.path)
			continue
		}
		h.procs = append(h.procs, p)
		ready := make(chan struct{})
		readies = append(readies, ready)
		go p.run(ready)
	}
	h.mu.Unlock()
	for _, r := range readies {
		select {
		case <-r:
		case <-ctx.Done():
			return fmt.Errorf("plugin host: start: %w", ctx.Err())
		}
	}
	return nil
}

func (h *Host) hasLocal(kind plugins.Kind, name string) bool {
	switch kind {
	case plugins.KindEmbedder:
		return slices.ContainsFunc(h.embedders, func(p *provider) bool { return p.name == name })
	case plugins.KindLLM:
		return slices.ContainsFunc(h.llms, func(c *chat) bool { return c.name == name })
	}
	return slices.ContainsFunc(h.connectors, func(s *source) bool { return s.typ == name })
}

func (h *Host) newProc(f found, log *slog.Logger) *proc {
	env := append([]string{plugins.LogLevelEnv + "=" + pluginLogLevel(h.log)}, h.env...)
	return &proc{
		name:    f.name,
		kind:    f.kind,
		path:    f.path,
		log:     log,
		env:     env,
		timeout: h.timeout,
		backoff: h.backoff,
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
		changed: make(chan struct{}),
	}
}

// pluginLogLevel tells plugins the lowest level the host would log, so they
// do not send lines that would be dropped.
func pluginLogLevel(l *slog.Logger) string {
	ctx := context.Background()
	switch {
	case l.Enabled(ctx, levelTrace):
		return "trace"
	case l.Enabled(ctx, slog.LevelDebug):
		return "debug"
	case l.Enabled(ctx, slog.LevelInfo):
		return "info"
	case l.Enabled(ctx, slog.LevelWarn):
		return "warn"
	default:
		return "error"
	}
}

type found struct {
	kind plugins.Kind
	name string
	path string
}

// discover lists the plugin executables of dir, sorted by name.
func discover(dir string) ([]found, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("plugin host: read plugin directory: %w", err)
	}
	var out []found
	for _, e := range entries {
		kind, name, ok := plugins.ParseName(e.Name())
		if !ok {
			continue
		}
		path := filepath.Join(dir, e.Name())
		info, err := os.Stat(path) // follows symlinks
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			continue
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("plugin host: %w", err)
		}
		out = append(out, found{kind: kind, name: name, path: abs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// Close kills every plugin process and waits until they have exited. The
// host cannot be started again.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	procs := slices.Clone(h.procs)
	h.mu.Unlock()
	for _, p := range procs {
		close(p.quit)
	}
	for _, p := range procs {
		<-p.done
	}
	return nil
}

// Plugins describes every plugin, in process and discovered: embedders
// first, then connectors, then language models, each kind sorted by name.
func (h *Host) Plugins() []PluginInfo {
	h.mu.Lock()
	embs := slices.Clone(h.embedders)
	srcs := slices.Clone(h.connectors)
	llms := slices.Clone(h.llms)
	h.mu.Unlock()
	var out []PluginInfo
	for _, p := range embs {
		out = append(out, p.pluginInfo())
	}
	for _, s := range srcs {
		out = append(out, s.pluginInfo())
	}
	for _, c := range llms {
		out = append(out, c.pluginInfo())
	}
	rank := map[plugins.Kind]int{plugins.KindEmbedder: 0, plugins.KindConnector: 1, plugins.KindLLM: 2}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return rank[out[i].Kind] < rank[out[j].Kind]
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// fillProc adds the supervision state of p to info.
func fillProc(info *PluginInfo, p *proc) {
	info.Path = p.path
	var procErr string
	info.PID, info.Protocol, info.Restarts, info.Status, procErr = p.info()
	if procErr != "" {
		info.Error = procErr
	}
}
