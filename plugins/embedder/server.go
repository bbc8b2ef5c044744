package embedder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"
	"unsafe"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/docindex/docindex/plugins"
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
	return s.embed(ctx, req)
}

// EmbedStream serves protocol version 2: Embed calls, one after the other,
// on one stream. Each call gets a context that ends with the stream (the
// host cancels a call by cancelling its stream) or at the call's own
// deadline, and fails or panics on its own without ending the stream.
func (s *server) EmbedStream(stream grpc.BidiStreamingServer[embedderv1.EmbedStreamRequest, embedderv1.EmbedStreamResponse]) error {
	for {
		call, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil // the host closed an idle stream
		}
		if err != nil {
			return err
		}
		resp, err := s.streamCall(stream.Context(), call)
		out := &embedderv1.EmbedStreamResponse{Response: resp}
		if err != nil {
			st := status.Convert(err)
			out = &embedderv1.EmbedStreamResponse{Code: int32(st.Code()), Message: st.Message()}
		}
		if err := stream.Send(out); err != nil {
			return err
		}
	}
}

// streamCall runs one call of EmbedStream, with the panic recovery that the
// unary Embed gets from the server's interceptor.
func (s *server) streamCall(ctx context.Context, call *embedderv1.EmbedStreamRequest) (resp *embedderv1.EmbedResponse, err error) {
	if call.TimeoutNanos > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(call.TimeoutNanos))
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			method := embedderv1.Embedder_EmbedStream_FullMethodName
			plugins.Logger().Error("panic in plugin call", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			resp, err = nil, status.Errorf(codes.Internal, "plugin panicked in %s: %v", method, r)
		}
	}()
	if call.Request == nil {
		return nil, status.Error(codes.InvalidArgument, "embed stream: call without a request")
	}
	return s.embed(ctx, call.Request)
}

// embed is Embed of both protocol versions; errors are status errors.
func (s *server) embed(ctx context.Context, req *embedderv1.EmbedRequest) (*embedderv1.EmbedResponse, error) {
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
