package llm

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/internal/pb/llmv1"
	"github.com/docindex/docindex/plugins/internal/wire"
)

// client is the host side of the protocol: an LLM whose calls go to a plugin process.
type client struct {
	rpc llmv1.LLMClient
}

func (c *client) info(ctx context.Context) (Info, error) {
	resp, err := c.rpc.Info(ctx, &llmv1.InfoRequest{})
	if err != nil {
		return Info{}, wire.Error(ctx, "llm info", err, ErrUnknownModel)
	}
	return Info{Version: resp.Version, SDKVersion: resp.SdkVersion}, nil
}

func (c *client) Models(ctx context.Context) ([]Model, error) {
	resp, err := c.rpc.Models(ctx, &llmv1.ModelsRequest{})
	if err != nil {
		return nil, wire.Error(ctx, "llm models", err, ErrUnknownModel)
	}
	models := make([]Model, len(resp.Models))
	for i, m := range resp.Models {
		models[i] = Model{ID: m.Id, Vision: m.Vision, ContextTokens: int(m.ContextTokens)}
	}
	return models, nil
}

func (c *client) Complete(ctx context.Context, req Request) (*Response, error) {
	op := fmt.Sprintf("complete with %q", req.Model)
	pr := &llmv1.CompleteRequest{
		Model:       req.Model,
		Messages:    make([]*llmv1.Message, len(req.Messages)),
		Schema:      req.Schema,
		SchemaName:  req.SchemaName,
		MaxTokens:   int32(req.MaxTokens),
		Temperature: req.Temperature,
	}
	for i, m := range req.Messages {
		pm := &llmv1.Message{Role: m.Role, Content: []byte(m.Content)}
		for _, img := range m.Images {
			pm.Images = append(pm.Images, &llmv1.Image{ContentType: img.ContentType, Data: img.Data})
		}
		pr.Messages[i] = pm
	}
	// The plugin's server refuses a larger message with a bare size error; say what is wrong
	// instead, and without sending 64 MiB first.
	if n := proto.Size(pr); n > wire.MaxMessageSize {
		return nil, fmt.Errorf("%s: the request is %d MiB (images included), over the plugin limit of %d MiB: send fewer or smaller images: %w",
			op, n>>20, wire.MaxMessageSize>>20, plugins.ErrInvalidArgument)
	}
	resp, err := c.rpc.Complete(ctx, pr)
	if err != nil {
		return nil, wire.Error(ctx, op, err, ErrUnknownModel)
	}
	return &Response{
		Content:      string(resp.Content),
		FinishReason: resp.FinishReason,
		InputTokens:  int(resp.InputTokens),
		OutputTokens: int(resp.OutputTokens),
	}, nil
}
