package pluginhost

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/embedder"
)

// maxRequestBytes bounds the texts of one Embed call to a plugin, well below
// the SDK's message limit (64 MiB).
const maxRequestBytes = 16 << 20

// provider is one embedding provider, in process or a plugin process.
type provider struct {
	name  string
	local embedder.Embedder
	proc  *proc
	retry time.Duration // see WithModelRetry

	mu        sync.Mutex
	loaded    bool
	models    []embedder.Model
	modelsErr error
	triedAt   time.Time
	info      embedder.Info
}

// call runs fn with the provider's Embedder; for a plugin, with the retry
// after a crash that proc.do gives.
func (p *provider) call(ctx context.Context, fn func(embedder.Embedder) error) error {
	if p.local != nil {
		return fn(p.local)
	}
	return p.proc.do(ctx, func(raw any) error { return fn(raw.(embedder.Embedder)) })
}

// started reads a new plugin process's info and models.
func (p *provider) started(ctx context.Context, e embedder.Embedder) {
	info, err := embedder.Describe(ctx, e)
	if err != nil {
		p.proc.log.Warn("embedder plugin did not describe itself", "error", err)
	}
	models, err := e.Models(ctx)
	p.store(models, err, &info)
}

// refresh asks for the models if they were never read, or if reading them
// failed more than p.retry ago.
func (p *provider) refresh(ctx context.Context) {
	p.mu.Lock()
	need := !p.loaded || (p.modelsErr != nil && time.Since(p.triedAt) >= p.retry)
	p.mu.Unlock()
	if !need {
		return
	}
	var models []embedder.Model
	var info *embedder.Info
	err := p.call(ctx, func(e embedder.Embedder) error {
		if p.local != nil {
			i, _ := embedder.Describe(ctx, e)
			info = &i
		}
		var err error
		models, err = e.Models(ctx)
		return err
	})
	p.store(models, err, info)
}

func (p *provider) store(models []embedder.Model, err error, info *embedder.Info) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loaded = true
	p.triedAt = time.Now()
	if info != nil {
		p.info = *info
	}
	if err != nil {
		p.models, p.modelsErr = nil, err
		return
	}
	p.modelsErr = nil
	p.models = p.models[:0]
	for _, m := range models {
		if m.ID == "" || m.Dimensions <= 0 {
			continue // unusable; the conformance suite tells the author
		}
		m.Provider = p.name
		p.models = append(p.models, m)
	}
}

func (p *provider) snapshot() ([]embedder.Model, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.models), p.modelsErr
}

func (p *provider) pluginInfo() PluginInfo {
	models, err := p.snapshot()
	p.mu.Lock()
	info := PluginInfo{
		Name:       p.name,
		Kind:       plugins.KindEmbedder,
		Version:    p.info.Version,
		SDKVersion: p.info.SDKVersion,
		Models:     models,
	}
	p.mu.Unlock()
	for _, m := range models {
		info.Capabilities = append(info.Capabilities, m.ID)
	}
	if err != nil {
		info.Error = err.Error()
	}
	if p.local != nil {
		info.Status = StatusInProcess
		return info
	}
	fillProc(&info, p.proc)
	return info
}

func (h *Host) providers() []*provider {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.embedders)
}

// Models lists every model of every provider, with Provider set. When two
// providers offer the same model id, the first wins: in-process providers in
// registration order, then plugins by name. Providers that fail to list
// their models are left out (Plugins says why) and asked again later.
func (h *Host) Models(ctx context.Context) ([]embedder.Model, error) {
	provs := h.providers()
	for _, p := range provs {
		p.refresh(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embedding models: %w", err)
	}
	var out []embedder.Model
	seen := map[string]bool{}
	for _, p := range provs {
		models, _ := p.snapshot()
		for _, m := range models {
			if !seen[m.ID] {
				seen[m.ID] = true
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// lookup finds the provider that serves model.
func lookup(provs []*provider, model string) (*provider, embedder.Model, bool) {
	for _, p := range provs {
		models, _ := p.snapshot()
		for _, m := range models {
			if m.ID == model {
				return p, m, true
			}
		}
	}
	return nil, embedder.Model{}, false
}

// Embed embeds texts with model, through the provider that offers it. It
// splits texts into batches the provider accepts and checks that every
// vector has the model's dimensions. A plugin that died during the call is
// restarted and the batch retried once.
func (h *Host) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	provs := h.providers()
	p, m, ok := lookup(provs, model)
	if !ok {
		for _, p := range provs {
			p.refresh(ctx)
		}
		if p, m, ok = lookup(provs, model); !ok {
			return nil, fmt.Errorf("embed: model %q: %w", model, ErrUnknownModel)
		}
	}
	out := make([][]float32, 0, len(texts))
	for _, batch := range batches(texts, m.MaxBatch, maxRequestBytes) {
		var vecs [][]float32
		err := p.call(ctx, func(e embedder.Embedder) error {
			var err error
			vecs, err = e.Embed(ctx, model, batch)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("embedding provider %s: %w", p.name, err)
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("embedding provider %s: %d vectors for %d texts", p.name, len(vecs), len(batch))
		}
		for _, v := range vecs {
			if len(v) != m.Dimensions {
				return nil, fmt.Errorf("embedding provider %s: model %q returned a vector of %d dimensions, it declares %d", p.name, model, len(v), m.Dimensions)
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// batches splits texts into runs of at most maxBatch texts (0: no limit)
// and about maxBytes bytes (a single longer text goes alone).
func batches(texts []string, maxBatch, maxBytes int) [][]string {
	var out [][]string
	start, size := 0, 0
	for i, t := range texts {
		full := (maxBatch > 0 && i-start == maxBatch) || (i > start && size+len(t) > maxBytes)
		if full {
			out = append(out, texts[start:i])
			start, size = i, 0
		}
		size += len(t)
	}
	if start < len(texts) {
		out = append(out, texts[start:])
	}
	return out
}
