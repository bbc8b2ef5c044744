package embedder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unsafe"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/docindex/docindex/plugins/internal/pb/embedderv1"
	"github.com/docindex/docindex/plugins/internal/wire"
)

// client is the host side of protocol version 1: an Embedder whose calls go
// to a plugin process, each Embed a unary call.
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
	resp, err := c.rpc.Embed(ctx, embedRequest(model, texts))
	if err != nil {
		return nil, wire.Error(ctx, embedOp(model), err, ErrUnknownModel)
	}
	return vectors(model, resp, len(texts))
}

func embedOp(model string) string { return fmt.Sprintf("embed with %q", model) }

func embedRequest(model string, texts []string) *embedderv1.EmbedRequest {
	req := &embedderv1.EmbedRequest{Model: model, Texts: make([][]byte, len(texts))}
	for i, t := range texts {
		// Marshalling only reads the bytes, so the string's own memory can
		// be lent to the request instead of copying every text.
		req.Texts[i] = unsafe.Slice(unsafe.StringData(t), len(t))
	}
	return req
}

// vectors checks resp against the n texts of the request and splits it.
func vectors(model string, resp *embedderv1.EmbedResponse, n int) ([][]float32, error) {
	dims := int(resp.Dimensions)
	if dims <= 0 || len(resp.Vectors) != 4*dims*n {
		return nil, fmt.Errorf("embed with %q: plugin returned %d bytes of vectors of %d dimensions for %d texts", model, len(resp.Vectors), dims, n)
	}
	// One allocation for all vectors: the rows share the decoded array, each
	// capped so that appending to one cannot overwrite the next.
	values := bytesToFloats(resp.Vectors)
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = values[i*dims : (i+1)*dims : (i+1)*dims]
	}
	return vecs, nil
}

// maxIdleStreams is how many idle EmbedStream streams a client keeps open
// for the next calls; more concurrent calls open more and close them after.
const maxIdleStreams = 8

// streamClient is the host side of protocol version 2: Embed calls go over
// EmbedStream, one call at a time per stream, on streams kept open between
// calls. A call takes an idle stream (or opens one), so concurrent calls
// each have their own and their answers cannot mix; a cancelled call's
// stream is cancelled with it and not reused.
type streamClient struct {
	*client
	base context.Context // ends when the plugin process is gone

	mu   sync.Mutex
	idle []*callStream
}

type callStream struct {
	rpc    grpc.BidiStreamingClient[embedderv1.EmbedStreamRequest, embedderv1.EmbedStreamResponse]
	cancel context.CancelFunc
}

func (s *callStream) close() {
	_ = s.rpc.CloseSend() // the plugin's handler returns on end of stream
	s.cancel()
}

func (c *streamClient) take() (s *callStream, reused bool, err error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		s = c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return s, true, nil
	}
	c.mu.Unlock()
	ctx, cancel := context.WithCancel(c.base)
	rpc, err := c.rpc.EmbedStream(ctx)
	if err != nil {
		cancel()
		return nil, false, err
	}
	return &callStream{rpc: rpc, cancel: cancel}, false, nil
}

func (c *streamClient) put(s *callStream) {
	c.mu.Lock()
	if len(c.idle) < maxIdleStreams {
		c.idle = append(c.idle, s)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	s.close()
}

func (c *streamClient) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", embedOp(model), err)
	}
	req := &embedderv1.EmbedStreamRequest{Request: embedRequest(model, texts)}
	for attempt := 0; ; attempt++ {
		resp, reused, err := c.call(ctx, req)
		if err != nil && reused && attempt == 0 && ctx.Err() == nil {
			// An idle stream may have broken before the call reached the
			// plugin. One more try on a new stream (Embed is safe to
			// repeat) tells that from a connection that is gone.
			continue
		}
		if err != nil {
			return nil, wire.Error(ctx, embedOp(model), err, ErrUnknownModel)
		}
		if resp.Code != int32(codes.OK) {
			// The error the unary Embed would have returned, mapped the same way.
			err := status.Error(codes.Code(resp.Code), resp.Message)
			return nil, wire.Error(ctx, embedOp(model), err, ErrUnknownModel)
		}
		if resp.Response == nil {
			return nil, fmt.Errorf("%s: plugin answered without a response", embedOp(model))
		}
		return vectors(model, resp.Response, len(texts))
	}
}

// call makes one round trip on a stream of the pool. err is a transport
// error (the stream is then dropped); an error of the call itself is in
// resp.
func (c *streamClient) call(ctx context.Context, req *embedderv1.EmbedStreamRequest) (resp *embedderv1.EmbedStreamResponse, reused bool, err error) {
	s, reused, err := c.take()
	if err != nil {
		return nil, false, err
	}
	req.TimeoutNanos = 0
	if dl, ok := ctx.Deadline(); ok {
		req.TimeoutNanos = max(int64(time.Until(dl)), 1)
	}
	// The caller's cancellation or deadline cancels the stream, which ends
	// a waiting Recv here and the call's context in the plugin.
	stop := context.AfterFunc(ctx, s.cancel)
	resp, err = roundTrip(s, req)
	if stop() && err == nil {
		c.put(s)
	} else {
		s.cancel() // broken, or cancelled (maybe just after the answer)
	}
	return resp, reused, err
}

func roundTrip(s *callStream, req *embedderv1.EmbedStreamRequest) (*embedderv1.EmbedStreamResponse, error) {
	if err := s.rpc.Send(req); err != nil {
		if !errors.Is(err, io.EOF) {
			return nil, err
		}
		// The stream has ended; Recv says why.
	}
	resp, err := s.rpc.Recv()
	if errors.Is(err, io.EOF) {
		return nil, status.Error(codes.Unavailable, "the plugin ended the embed stream")
	}
	return resp, err
}
