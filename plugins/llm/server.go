package llm

import (
	"context"
	"errors"

	"github.com/docindex/docindex/plugins/internal/pb/llmv1"
	"github.com/docindex/docindex/plugins/internal/wire"
)

// server adapts an LLM to the generated gRPC service.
type server struct {
	llmv1.UnimplementedLLMServer
	impl LLM
}

func (s *server) Info(context.Context, *llmv1.InfoRequest) (*llmv1.InfoResponse, error) {
	info := localInfo(s.impl)
	return &llmv1.InfoResponse{Version: info.Version, SdkVersion: info.SDKVersion}, nil
}

func (s *server) Models(ctx context.Context, _ *llmv1.ModelsRequest) (*llmv1.ModelsResponse, error) {
	models, err := s.impl.Models(ctx)
	if err != nil {
		return nil, wire.Status(err)
	}
	resp := &llmv1.ModelsResponse{Models: make([]*llmv1.Model, len(models))}
	for i, m := range models {
		resp.Models[i] = &llmv1.Model{Id: m.ID, Vision: m.Vision, ContextTokens: int32(m.ContextTokens)}
	}
	return resp, nil
}

func (s *server) Complete(ctx context.Context, req *llmv1.CompleteRequest) (*llmv1.CompleteResponse, error) {
	r := Request{
		Model:       req.Model,
		Messages:    make([]Message, len(req.Messages)),
		SchemaName:  req.SchemaName,
		MaxTokens:   int(req.MaxTokens),
		Temperature: req.Temperature,
	}
	if len(req.Schema) > 0 {
		r.Schema = req.Schema
	}
	for i, m := range req.Messages {
		r.Messages[i] = Message{Role: m.Role, Content: string(m.Content)}
		if len(m.Images) > 0 {
			r.Messages[i].Images = make([]Image, len(m.Images))
			for j, img := range m.Images {
				r.Messages[i].Images[j] = Image{ContentType: img.ContentType, Data: img.Data}
			}
		}
	}
	resp, err := s.impl.Complete(ctx, r)
	if err != nil {
		return nil, wire.Status(err)
	}
	if resp == nil {
		// Reported here, in the plugin's words, rather than as an empty answer on the host.
		return nil, wire.Status(errors.New("llm returned neither a response nor an error"))
	}
	return &llmv1.CompleteResponse{
		Content:      []byte(resp.Content),
		FinishReason: resp.FinishReason,
		InputTokens:  int32(resp.InputTokens),
		OutputTokens: int32(resp.OutputTokens),
	}, nil
}
