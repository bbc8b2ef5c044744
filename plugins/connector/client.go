package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/docindex/docindex/plugins/internal/pb/connectorv1"
	"github.com/docindex/docindex/plugins/internal/wire"
)

// client is the host side of the protocol: a Connector whose calls go to a
// plugin process.
type client struct {
	rpc connectorv1.ConnectorClient
}

func (c *client) Describe(ctx context.Context) (Description, error) {
	resp, err := c.rpc.Describe(ctx, &connectorv1.DescribeRequest{})
	if err != nil {
		return Description{}, wire.Error(ctx, "connector describe", err)
	}
	return Description{
		Type:         resp.Type,
		Version:      resp.Version,
		DisplayName:  resp.DisplayName,
		Description:  resp.Description,
		Capabilities: capsFromStrings(resp.Capabilities),
		ConfigSchema: resp.ConfigSchema,
		SDKVersion:   resp.SdkVersion,
	}, nil
}

func (c *client) Validate(ctx context.Context, config json.RawMessage) error {
	resp, err := c.rpc.Validate(ctx, &connectorv1.ValidateRequest{Config: config})
	if err != nil {
		return wire.Error(ctx, "connector validate", err, ErrInvalidConfig)
	}
	if len(resp.Problems) == 0 {
		return nil
	}
	ve := &ValidationError{}
	for _, p := range resp.Problems {
		ve.Problems = append(ve.Problems, Problem{Field: p.Field, Message: p.Message})
	}
	return ve
}

func (c *client) CheckHealth(ctx context.Context, config json.RawMessage) (Health, error) {
	resp, err := c.rpc.CheckHealth(ctx, &connectorv1.CheckHealthRequest{Config: config})
	if err != nil {
		return Health{}, wire.Error(ctx, "connector health check", err, ErrInvalidConfig)
	}
	return Health{Status: HealthStatus(resp.Status), Message: resp.Message}, nil
}

func (c *client) Sync(ctx context.Context, req SyncRequest) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		// Leaving the loop early cancels the stream, which ends the plugin's
		// enumeration too.
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := c.rpc.Sync(sctx, &connectorv1.SyncRequest{Config: req.Config, Cursor: req.Cursor})
		if err != nil {
			yield(Event{}, wire.Error(ctx, "connector sync", err, ErrInvalidConfig))
			return
		}
		for {
			msg, err := stream.Recv()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Event{}, wire.Error(ctx, "connector sync", err, ErrInvalidConfig))
				return
			}
			ev, err := eventFromPB(msg)
			if err != nil {
				yield(Event{}, fmt.Errorf("connector sync: %w", err))
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (c *client) Fetch(ctx context.Context, req FetchRequest) (*Content, error) {
	item, err := itemToPB(req.Item)
	if err != nil {
		return nil, fmt.Errorf("connector fetch: %w", err)
	}
	op := fmt.Sprintf("connector fetch %q", req.Item.ID)
	sctx, cancel := context.WithCancel(ctx)
	stream, err := c.rpc.Fetch(sctx, &connectorv1.FetchRequest{Config: req.Config, Item: item})
	if err != nil {
		cancel()
		return nil, wire.Error(ctx, op, err)
	}
	first, err := stream.Recv()
	if err != nil {
		cancel()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: the plugin ended the stream without a header", op)
		}
		return nil, wire.Error(ctx, op, err)
	}
	h := first.GetHeader()
	if h == nil {
		cancel()
		return nil, fmt.Errorf("%s: the plugin sent data before the header", op)
	}
	return &Content{
		ContentType: h.ContentType,
		Name:        h.Name,
		Size:        h.Size,
		Version:     h.Version,
		Body:        &body{ctx: ctx, op: op, stream: stream, cancel: cancel},
	}, nil
}

// body reads the data chunks of a Fetch stream.
type body struct {
	ctx     context.Context
	op      string
	stream  connectorv1.Connector_FetchClient
	cancel  context.CancelFunc
	pending []byte
	err     error
}

func (b *body) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		msg, err := b.stream.Recv()
		switch {
		case err == io.EOF:
			b.err = io.EOF
			b.cancel()
		case err != nil:
			b.err = wire.Error(b.ctx, b.op, err)
			b.cancel()
		case msg.GetHeader() != nil:
			b.err = fmt.Errorf("%s: the plugin sent a second header", b.op)
			b.cancel()
		default:
			b.pending = msg.GetData()
		}
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

func (b *body) Close() error {
	b.cancel()
	if b.err == nil {
		b.err = errors.New("read after close")
	}
	return nil
}
