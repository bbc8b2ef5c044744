package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/llm"
)

// ErrUnknownLLMModel is wrapped by Complete's error for a model no language-model provider
// offers. It is llm.ErrUnknownModel, so either name matches.
var ErrUnknownLLMModel = llm.ErrUnknownModel

// chat is one language-model provider, in process or a plugin process.
type chat struct {
	name  string
	local llm.LLM
	proc  *proc
	retry time.Duration // see WithModelRetry

	mu        sync.Mutex
	loaded    bool
	models    []llm.Model
	modelsErr error
	triedAt   time.Time
	info      llm.Info
}

// call runs fn with the provider's LLM; for a plugin, with the retry after a crash that
// proc.do gives.
func (c *chat) call(ctx context.Context, fn func(llm.LLM) error) error {
	if c.local != nil {
		return fn(c.local)
	}
	return c.proc.do(ctx, func(raw any) error { return fn(raw.(llm.LLM)) })
}

// started reads a new plugin process's info and models.
func (c *chat) started(ctx context.Context, l llm.LLM) {
	info, err := llm.Describe(ctx, l)
	if err != nil {
		c.proc.log.Warn("llm plugin did not describe itself", "error", err)
	}
	models, err := l.Models(ctx)
	c.store(models, err, &info)
}

// refresh asks for the models if they were never read, or if reading them failed more than
// c.retry ago.
func (c *chat) refresh(ctx context.Context) {
	c.mu.Lock()
	need := !c.loaded || (c.modelsErr != nil && time.Since(c.triedAt) >= c.retry)
	c.mu.Unlock()
	if !need {
		return
	}
	var models []llm.Model
	var info *llm.Info
	err := c.call(ctx, func(l llm.LLM) error {
		if c.local != nil {
			i, _ := llm.Describe(ctx, l)
			info = &i
		}
		var err error
		models, err = l.Models(ctx)
		return err
	})
	c.store(models, err, info)
}

func (c *chat) store(models []llm.Model, err error, info *llm.Info) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded = true
	c.triedAt = time.Now()
	if info != nil {
		c.info = *info
	}
	if err != nil {
		c.models, c.modelsErr = nil, err
		return
	}
	c.modelsErr = nil
	c.models = c.models[:0]
	for _, m := range models {
		if m.ID == "" {
			continue // unusable; the conformance suite tells the author
		}
		m.Provider = c.name
		c.models = append(c.models, m)
	}
}

func (c *chat) snapshot() ([]llm.Model, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.models), c.modelsErr
}

func (c *chat) pluginInfo() PluginInfo {
	if c.local != nil {
		c.refresh(context.Background()) // in process: cheap, and shows what it offers
	}
	models, err := c.snapshot()
	c.mu.Lock()
	info := PluginInfo{
		Name:       c.name,
		Kind:       plugins.KindLLM,
		Version:    c.info.Version,
		SDKVersion: c.info.SDKVersion,
		LLMModels:  models,
	}
	c.mu.Unlock()
	for _, m := range models {
		info.Capabilities = append(info.Capabilities, m.ID)
	}
	if err != nil {
		info.Error = err.Error()
	}
	if c.local != nil {
		info.Status = StatusInProcess
		return info
	}
	fillProc(&info, c.proc)
	return info
}

// RegisterLLM adds an in-process language-model provider. It takes precedence over a
// discovered plugin of the same name, and its models over theirs.
func (h *Host) RegisterLLM(name string, l llm.LLM) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.llms = slices.DeleteFunc(h.llms, func(c *chat) bool { return c.name == name && c.local != nil })
	i := 0
	for i < len(h.llms) && h.llms[i].local != nil {
		i++
	}
	h.llms = slices.Insert(h.llms, i, &chat{name: name, local: l, retry: h.modelRetry})
}

func (h *Host) chats() []*chat {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.llms)
}

// LLMModels lists every model of every language-model provider, with Provider set. When two
// providers offer the same model id, the first wins: in-process providers in registration
// order, then plugins by name. Providers that fail to list their models are left out (Plugins
// says why) and asked again later.
func (h *Host) LLMModels(ctx context.Context) ([]llm.Model, error) {
	chats := h.chats()
	for _, c := range chats {
		c.refresh(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("language models: %w", err)
	}
	var out []llm.Model
	seen := map[string]bool{}
	for _, c := range chats {
		models, _ := c.snapshot()
		for _, m := range models {
			if !seen[m.ID] {
				seen[m.ID] = true
				out = append(out, m)
			}
		}
	}
	return out, nil
}

func lookupLLM(chats []*chat, model string) (*chat, llm.Model, bool) {
	for _, c := range chats {
		models, _ := c.snapshot()
		for _, m := range models {
			if m.ID == model {
				return c, m, true
			}
		}
	}
	return nil, llm.Model{}, false
}

// Complete asks req.Model for a completion, through the provider that offers it. A malformed
// request, or images for a model that does not declare vision, fail here with
// plugins.ErrInvalidArgument; an unknown model with ErrUnknownLLMModel. A plugin that died
// during the call is restarted and the call retried once.
func (h *Host) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("complete: %w", err)
	}
	chats := h.chats()
	c, m, ok := lookupLLM(chats, req.Model)
	if !ok {
		for _, c := range chats {
			c.refresh(ctx)
		}
		if c, m, ok = lookupLLM(chats, req.Model); !ok {
			return nil, fmt.Errorf("complete: model %q: %w", req.Model, ErrUnknownLLMModel)
		}
	}
	if req.HasImages() && !m.Vision {
		return nil, fmt.Errorf("complete: model %q of provider %s does not accept images: %w", m.ID, c.name, plugins.ErrInvalidArgument)
	}
	var resp *llm.Response
	err := c.call(ctx, func(l llm.LLM) error {
		var err error
		resp, err = l.Complete(ctx, req)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("language model provider %s: %w", c.name, err)
	}
	if resp == nil {
		return nil, fmt.Errorf("language model provider %s: %w", c.name, errors.New("no response and no error"))
	}
	return resp, nil
}

// LLM returns the host as an llm.LLM over every language-model provider: Models is
// LLMModels, Complete routes by model id. (The Host itself cannot be one: its Models method
// lists embedding models.)
func (h *Host) LLM() llm.LLM { return hostLLM{h} }

type hostLLM struct{ h *Host }

func (l hostLLM) Models(ctx context.Context) ([]llm.Model, error) { return l.h.LLMModels(ctx) }

func (l hostLLM) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return l.h.Complete(ctx, req)
}
