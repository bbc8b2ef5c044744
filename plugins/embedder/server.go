package embedder

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/docindex/docindex/plugins/internal/pb/embedderv1"
	"github.com/docindex/docindex/plugins/internal/wire"
)

// server adapts an Embedder to the generated gRPC service.
type server struct {
	embedderv1.UnimplementedEmbedderServer
	impl Embedder
}

func (s *server) Info(context.Context, *embedderv1.InfoRequest) (*embedderv1.InfoResponse, error) {
	info := localInfo(s.impl)
	return &embedderv1.InfoResponse{Version: info.Version, SdkVersion: info.SDKVersion}, nil
}

func (s *server) Models(ctx context.Context, _ *embedderv1.ModelsRequest) (*embedderv1.ModelsResponse, error) {
	models, err := s.impl.Models(ctx)
	if err != nil {
		return nil, wire.Status(err)
	}
	resp := &embedderv1.ModelsResponse{Models: make([]*embedderv1.Model, len(models))}
	for i, m := range models {
		resp.Models[i] = &embedderv1.Model{
			Id:             m.ID,
			Dimensions:     int32(m.Dimensions),
			MaxInputTokens: int32(m.MaxInputTokens),
			MaxBatch:       int32(m.MaxBatch),
		}
	}
	return resp, nil
}

func (s *server) Embed(ctx context.Context, req *embedderv1.EmbedRequest) (*embedderv1.EmbedResponse, error) {
	texts := make([]string, len(req.Texts))
	for i, t := range req.Texts {
		// The decoder gave each text its own bytes and nothing writes to
		// them afterwards, so they can back the strings without a copy.
		texts[i] = unsafe.String(unsafe.SliceData(t), len(t))
	}
	vecs, err := s.impl.Embed(ctx, req.Model, texts)
	if err != nil {
		return nil, wire.Status(err)
	}
	// A broken implementation is reported here, in the plugin's words,
	// rather than as vectors that do not fit the texts on the host.
	if len(vecs) != len(texts) {
		return nil, wire.Status(fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts)))
	}
	resp := &embedderv1.EmbedResponse{}
	if len(vecs) == 0 {
		return resp, nil
	}
	dims := len(vecs[0])
	for i, v := range vecs {
		if len(v) != dims {
			return nil, wire.Status(fmt.Errorf("embedder returned vectors of %d and %d dimensions (text %d)", dims, len(v), i))
		}
	}
	resp.Dimensions = int32(dims)
	resp.Vectors = floatsToBytes(vecs, dims)
	return resp, nil
}
