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
const ProtocolVersion = 1

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
	}
}

// grpcPlugin binds the Embedder interface to protocol version 1.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl Embedder
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	embedderv1.RegisterEmbedderServer(s, &server{impl: p.impl})
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &client{rpc: embedderv1.NewEmbedderClient(c)}, nil
}
