package connector

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/internal/pb/connectorv1"
	"github.com/docindex/docindex/plugins/internal/wire"
)

// chunkSize is the size of the data messages of a Fetch stream: large enough
// that per-message costs vanish, far below the message limit.
const chunkSize = 256 << 10

// server adapts a Connector to the generated gRPC service.
type server struct {
	connectorv1.UnimplementedConnectorServer
	impl Connector
}

func (s *server) Describe(ctx context.Context, _ *connectorv1.DescribeRequest) (*connectorv1.DescribeResponse, error) {
	d, err := s.impl.Describe(ctx)
	if err != nil {
		return nil, wire.Status(err)
	}
	if d.Version == "" {
		d.Version = wire.Version()
	}
	return &connectorv1.DescribeResponse{
		Type:         d.Type,
		Version:      d.Version,
		DisplayName:  d.DisplayName,
		Description:  d.Description,
		Capabilities: capsToStrings(d.Capabilities),
		ConfigSchema: d.ConfigSchema,
		SdkVersion:   plugins.SDKVersion,
	}, nil
}

func (s *server) Validate(ctx context.Context, req *connectorv1.ValidateRequest) (*connectorv1.ValidateResponse, error) {
	err := s.impl.Validate(ctx, req.Config)
	if err == nil {
		return &connectorv1.ValidateResponse{}, nil
	}
	// Problems travel as data, so the host gets them field by field.
	var ve *ValidationError
	switch {
	case errors.As(err, &ve) && len(ve.Problems) > 0:
		resp := &connectorv1.ValidateResponse{}
		for _, p := range ve.Problems {
			resp.Problems = append(resp.Problems, &connectorv1.Problem{Field: p.Field, Message: p.Message})
		}
		return resp, nil
	case errors.Is(err, plugins.ErrInvalidArgument):
		return &connectorv1.ValidateResponse{Problems: []*connectorv1.Problem{{Message: err.Error()}}}, nil
	default:
		return nil, wire.Status(err)
	}
}

func (s *server) CheckHealth(ctx context.Context, req *connectorv1.CheckHealthRequest) (*connectorv1.CheckHealthResponse, error) {
	h, err := s.impl.CheckHealth(ctx, req.Config)
	if err != nil {
		return nil, wire.Status(err)
	}
	return &connectorv1.CheckHealthResponse{Status: string(h.Status), Message: h.Message}, nil
}

func (s *server) Sync(req *connectorv1.SyncRequest, stream connectorv1.Connector_SyncServer) error {
	for ev, err := range s.impl.Sync(stream.Context(), SyncRequest{Config: req.Config, Cursor: req.Cursor}) {
		if err != nil {
			return wire.Status(err)
		}
		msg, err := eventToPB(ev)
		if err != nil {
			return wire.Status(err)
		}
		if err := stream.Send(msg); err != nil {
			return err
		}
	}
	return nil
}

func (s *server) Fetch(req *connectorv1.FetchRequest, stream connectorv1.Connector_FetchServer) error {
	item, err := itemFromPB(req.Item)
	if err != nil {
		return wire.Status(fmt.Errorf("fetch: %w: %w", plugins.ErrInvalidArgument, err))
	}
	c, err := s.impl.Fetch(stream.Context(), FetchRequest{Config: req.Config, Item: item})
	if err != nil {
		return wire.Status(err)
	}
	if c == nil || c.Body == nil {
		return wire.Status(fmt.Errorf("fetch %q: connector returned no content", item.ID))
	}
	defer c.Body.Close()
	header := &connectorv1.FetchHeader{ContentType: c.ContentType, Name: c.Name, Size: c.Size, Version: c.Version}
	if err := stream.Send(&connectorv1.FetchChunk{Chunk: &connectorv1.FetchChunk_Header{Header: header}}); err != nil {
		return err
	}
	// Send serialises the message before it returns, so one buffer serves
	// every chunk.
	buf := make([]byte, chunkSize)
	for {
		n, err := io.ReadFull(c.Body, buf)
		if n > 0 {
			if serr := stream.Send(&connectorv1.FetchChunk{Chunk: &connectorv1.FetchChunk_Data{Data: buf[:n]}}); serr != nil {
				return serr
			}
		}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return nil
		case err != nil:
			return wire.Status(fmt.Errorf("fetch %q: read content: %w", item.ID, err))
		}
	}
}
