package embedder

import (
	"context"
	"fmt"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/internal/wire"
)

// Model is one embedding model in the catalog.
type Model struct {
	// ID names the model in the catalog and in a collection's
	// embeddingModel, e.g. "hash-256", "glove-100d", "text-embedding-3-small".
	// IDs are global: by convention they say what the model is, so that two
	// providers of the same model can agree on one.
	ID string
	// Provider is filled in by the host with the name of the provider that
	// offers the model (the binary's suffix or the registered name).
	Provider string
	// Dimensions is the length of every vector of the model.
	Dimensions int
	// MaxInputTokens is the longest text the model takes; 0 = not stated.
	MaxInputTokens int
	// MaxBatch is how many texts one Embed call may carry; 0 = no limit.
	// The host splits larger requests.
	MaxBatch int
}

// Embedder turns texts into vectors. Implementations must be safe for
// concurrent use and must return, for a given model and text, vectors that
// are stable over time: stored vectors are compared with query vectors
// computed much later. A change of the algorithm is a new model ID.
type Embedder interface {
	// Models lists the models offered. An error that wraps
	// plugins.ErrNotReady says the provider lacks something (a data file,
	// an API key) and how to provide it.
	Models(ctx context.Context) ([]Model, error)
	// Embed returns one vector per text, in the order of texts, each of the
	// model's Dimensions. An unknown model is an error wrapping
	// ErrUnknownModel.
	Embed(ctx context.Context, model string, texts []string) ([][]float32, error)
}

// ErrUnknownModel is returned (wrapped) by Embed for a model that the
// provider does not offer. It matches plugins.ErrNotFound too.
var ErrUnknownModel = fmt.Errorf("unknown embedding model: %w", plugins.ErrNotFound)

// Versioner is implemented by an Embedder that reports its own version in
// `docindex plugins list`. Without it the version comes from the binary's
// build information.
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

// Describe returns the Info of e: asked over the wire for a plugin client,
// from Versioner or the build information for an in-process implementation.
func Describe(ctx context.Context, e Embedder) (Info, error) {
	if i, ok := e.(informer); ok {
		return i.info(ctx)
	}
	return localInfo(e), nil
}

func localInfo(e Embedder) Info {
	info := Info{Version: wire.Version(), SDKVersion: plugins.SDKVersion}
	if v, ok := e.(Versioner); ok && v.Version() != "" {
		info.Version = v.Version()
	}
	return info
}
