package embedder

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/docindex/docindex/plugins/internal/pb/embedderv1"
	"github.com/docindex/docindex/plugins/internal/wire"
)

// client is the host side of the protocol: an Embedder whose calls go to a
// plugin process.
type client struct {
	rpc embedderv1.EmbedderClient
}

func (c *client) info(ctx context.Context) (Info, error) {
	resp, err := c.rpc.Info(ctx, &embedderv1.InfoRequest{})
	if err != nil {
		return Info{}, wire.Error(ctx, "embedder info", err, ErrUnknownModel)
	}
	return Info{Version: resp.Version, SDKVersion: resp.SdkVersion}, nil
}

func (c *client) Models(ctx context.Context) ([]Model, error) {
	resp, err := c.rpc.Models(ctx, &embedderv1.ModelsRequest{})
	if err != nil {
		return nil, wire.Error(ctx, "embedder models", err, ErrUnknownModel)
	}
	models := make([]Model, len(resp.Models))
	for i, m := range resp.Models {
		models[i] = Model{
			ID:             m.Id,
			Dimensions:     int(m.Dimensions),
			MaxInputTokens: int(m.MaxInputTokens),
			MaxBatch:       int(m.MaxBatch),
		}
	}
	return models, nil
}

func (c *client) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	req := &embedderv1.EmbedRequest{Model: model, Texts: make([][]byte, len(texts))}
	for i, t := range texts {
		// Marshalling only reads the bytes, so the string's own memory can
		// be lent to the request instead of copying every text.
		req.Texts[i] = unsafe.Slice(unsafe.StringData(t), len(t))
	}
	resp, err := c.rpc.Embed(ctx, req)
	if err != nil {
		return nil, wire.Error(ctx, fmt.Sprintf("embed with %q", model), err, ErrUnknownModel)
	}
	dims := int(resp.Dimensions)
	if dims <= 0 || len(resp.Vectors) != 4*dims*len(texts) {
		return nil, fmt.Errorf("embed with %q: plugin returned %d bytes of vectors of %d dimensions for %d texts", model, len(resp.Vectors), dims, len(texts))
	}
	// One allocation for all vectors: the rows share the decoded array, each
	// capped so that appending to one cannot overwrite the next.
	values := bytesToFloats(resp.Vectors)
	vecs := make([][]float32, len(texts))
	for i := range vecs {
		vecs[i] = values[i*dims : (i+1)*dims : (i+1)*dims]
	}
	return vecs, nil
}
