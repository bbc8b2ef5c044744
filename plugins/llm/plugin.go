package llm

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/internal/pb/llmv1"
	"github.com/docindex/docindex/plugins/internal/wire"
)

// ProtocolVersion is the newest LLM protocol version this SDK speaks.
const ProtocolVersion = 1

// Serve serves impl as a plugin: call it from main and nothing else. It returns only if the
// process was not started by a docindex host (it then explains so on standard error and exits
// with status 1).
func Serve(impl LLM) {
	wire.Serve(VersionedPlugins(impl))
}

// VersionedPlugins is the go-plugin plugin set per protocol version. A plugin passes its
// implementation; a host passes nil and dispenses an LLM under the name plugins.KindLLM.
func VersionedPlugins(impl LLM) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		1: {string(plugins.KindLLM): &grpcPlugin{impl: impl}},
	}
}

// grpcPlugin binds the LLM interface to protocol version 1.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl LLM
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	llmv1.RegisterLLMServer(s, &server{impl: p.impl})
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &client{rpc: llmv1.NewLLMClient(c)}, nil
}
