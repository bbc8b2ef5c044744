package embedder

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/internal/pb/embedderv1"
	"github.com/docindex/docindex/plugins/internal/wire"
)

// ProtocolVersion is the newest embedder protocol version this SDK speaks.
//
// Version 2 embeds over EmbedStream (see the proto file); version 1, the
// unary Embed, is still served and spoken for plugins and hosts built with
// an older SDK. go-plugin picks the newest version both sides offer.
const ProtocolVersion = 2

// Serve serves impl as a plugin: call it from main and nothing else. It
// returns only if the process was not started by a docindex host (it then
// explains so on standard error and exits with status 1).
func Serve(impl Embedder) {
	wire.Serve(VersionedPlugins(impl))
}

// VersionedPlugins is the go-plugin plugin set per protocol version. A
// plugin passes its implementation; a host passes nil and dispenses an
// Embedder under the name plugins.KindEmbedder.
func VersionedPlugins(impl Embedder) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		1: {string(plugins.KindEmbedder): &grpcPlugin{impl: impl}},
		2: {string(plugins.KindEmbedder): &grpcPlugin{impl: impl, stream: true}},
	}
}

// grpcPlugin binds the Embedder interface to a protocol version. Both
// versions serve the same gRPC service (version 2 only adds a method); they
// differ in how the host calls Embed.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl   Embedder
	stream bool // version 2: Embed over EmbedStream
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	embedderv1.RegisterEmbedderServer(s, &server{impl: p.impl})
	return nil
}

func (p *grpcPlugin) GRPCClient(ctx context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	cl := &client{rpc: embedderv1.NewEmbedderClient(c)}
	if !p.stream {
		return cl, nil
	}
	return &streamClient{client: cl, base: ctx}, nil
}
