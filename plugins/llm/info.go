package llm

import (
	"context"
	"fmt"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/internal/wire"
)

// ErrUnknownModel is returned (wrapped) by Complete for a model that the provider does not
// offer. It matches plugins.ErrNotFound too.
var ErrUnknownModel = fmt.Errorf("unknown language model: %w", plugins.ErrNotFound)

// Versioner is implemented by an LLM that reports its own version in `docindex plugins list`.
// Without it the version comes from the binary's build information.
type Versioner interface {
	Version() string
}

// Info describes a provider beyond its models.
type Info struct {
	// Version is the provider's version.
	Version string
	// SDKVersion is the version of this SDK the provider was built with.
	SDKVersion string
}

// informer is implemented by the host-side client, which asks the plugin.
type informer interface {
	info(ctx context.Context) (Info, error)
}

// Describe returns the Info of l: asked over the wire for a plugin client, from Versioner or
// the build information for an in-process implementation.
func Describe(ctx context.Context, l LLM) (Info, error) {
	if i, ok := l.(informer); ok {
		return i.info(ctx)
	}
	return localInfo(l), nil
}

func localInfo(l LLM) Info {
	info := Info{Version: wire.Version(), SDKVersion: plugins.SDKVersion}
	if v, ok := l.(Versioner); ok && v.Version() != "" {
		info.Version = v.Version()
	}
	return info
}
