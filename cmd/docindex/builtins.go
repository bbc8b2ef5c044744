package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/docindex/docindex/plugins/embedder"
)

// builtins is the catalog of in-process embedding providers, each model tagged with its provider.
type builtins struct {
	providers map[string]embedder.Embedder
}

func (b *builtins) names() []string {
	names := make([]string, 0, len(b.providers))
	for n := range b.providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (b *builtins) Models(ctx context.Context) ([]embedder.Model, error) {
	var out []embedder.Model
	for _, name := range b.names() {
		ms, err := b.providers[name].Models(ctx)
		if err != nil {
			return nil, fmt.Errorf("models of %s: %w", name, err)
		}
		for _, m := range ms {
			m.Provider = name
			out = append(out, m)
		}
	}
	return out, nil
}

func (b *builtins) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	for _, name := range b.names() {
		ms, err := b.providers[name].Models(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if m.ID == model {
				return b.providers[name].Embed(ctx, model, texts)
			}
		}
	}
	return nil, fmt.Errorf("unknown embedding model %q", model)
}

func (b *builtins) Close() error { return nil }

// pluginInfo is a line of `docindex plugins list`.
type pluginInfo struct {
	Name, Kind, Version, Path string
	Capabilities              []string
}

func (b *builtins) Plugins() []pluginInfo {
	var out []pluginInfo
	for _, n := range b.names() {
		out = append(out, pluginInfo{Name: n, Kind: "embedder", Version: "builtin", Path: "(in-process)"})
	}
	return out
}
