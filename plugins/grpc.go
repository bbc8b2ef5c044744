package plugins

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// Plugin connections carry messages of 32 KiB to a few MiB (a batch of
// texts, its vectors, a document chunk). gRPC's default buffer pool has no
// size between 32 KiB and 1 MiB and zeroes the whole buffer it hands out, so
// each such message cost a 1 MiB clear, on both sides, send and receive;
// that was most of the CPU of an Embed call. Plugin connections use a pool
// with a tier at every power of two instead, for the transport and for the
// codec (which always takes the global default pool otherwise).

// Flow control. gRPC starts every connection and stream with a 64 KiB
// window and, unless a window is set, grows it by estimating the bandwidth
// with a PING per burst of data received. On a plugin socket that cost more
// than it bought: calls carried PINGs, their acks and WINDOW_UPDATEs, and a
// message over the window (a batch of 64 texts is about 66 KiB) had to wait
// for credit mid-way; every extra frame is a write and a wake-up of the
// other process. A fixed window turns the estimation off and lets a request
// or response go out at once. The window bounds what a peer may send that
// has not been read yet (per connection too), not what is allocated.
const windowSize = 16 << 20

// BufferPool returns the buffer pool of plugin connections.
func BufferPool() mem.BufferPool {
	exps := make([]uint8, 0, 20)
	for e := uint8(8); e <= 26; e++ { // 256 B .. 64 MiB, the message limit
		exps = append(exps, e)
	}
	pool, err := mem.NewBinaryTieredBufferPool(exps...)
	if err != nil {
		panic("plugins: buffer pool: " + err.Error()) // fixed, valid exponents
	}
	return pool
}

// Codec returns the protobuf codec of plugin connections: gRPC's own, with
// its buffers from pool. Its wire format and name ("proto") are gRPC's, so
// either side may use the stock codec.
func Codec(pool mem.BufferPool) encoding.CodecV2 { return codec{pool: pool} }

type codec struct{ pool mem.BufferPool }

func (codec) Name() string { return "proto" }

func message(v any) (proto.Message, error) {
	switch m := v.(type) {
	case proto.Message:
		return m, nil
	case protoadapt.MessageV1:
		return protoadapt.MessageV2Of(m), nil
	}
	return nil, fmt.Errorf("proto codec: %T is not a protobuf message", v)
}

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	m, err := message(v)
	if err != nil {
		return nil, err
	}
	// Size first, so that UseCachedSize below is safe.
	size := proto.Size(m)
	opts := proto.MarshalOptions{UseCachedSize: true}
	if mem.IsBelowBufferPoolingThreshold(size) {
		b, err := opts.Marshal(m)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	buf := c.pool.Get(size)
	b, err := opts.MarshalAppend((*buf)[:0], m)
	if err != nil {
		c.pool.Put(buf)
		return nil, err
	}
	*buf = b
	return mem.BufferSlice{mem.NewBuffer(buf, c.pool)}, nil
}

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, err := message(v)
	if err != nil {
		return err
	}
	buf := data.MaterializeToBuffer(c.pool)
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

// DialOptions are the gRPC client options of a host's plugin connections
// (go-plugin's ClientConfig.GRPCDialOptions).
func DialOptions() []grpc.DialOption {
	pool := BufferPool()
	return []grpc.DialOption{
		experimental.WithBufferPool(pool),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(Codec(pool))),
		grpc.WithInitialWindowSize(windowSize),
		grpc.WithInitialConnWindowSize(windowSize),
	}
}

// ServerOptions are the matching gRPC server options of a plugin.
func ServerOptions() []grpc.ServerOption {
	pool := BufferPool()
	return []grpc.ServerOption{
		experimental.BufferPool(pool),
		grpc.ForceServerCodecV2(Codec(pool)),
		grpc.InitialWindowSize(windowSize),
		grpc.InitialConnWindowSize(windowSize),
	}
}
