package embedder

import (
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/internal/pb/embedderv1"
)

// OldPlugins is the plugin set of a plugin built with an SDK that spoke
// protocol version 1 only: it offers no other version and its service has
// no EmbedStream.
func OldPlugins(impl Embedder) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{1: {string(plugins.KindEmbedder): &oldPlugin{grpcPlugin{impl: impl}}}}
}

type oldPlugin struct{ grpcPlugin }

func (p *oldPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	embedderv1.RegisterEmbedderServer(s, &oldServer{server{impl: p.impl}})
	return nil
}

type oldServer struct{ server }

func (*oldServer) EmbedStream(grpc.BidiStreamingServer[embedderv1.EmbedStreamRequest, embedderv1.EmbedStreamResponse]) error {
	return status.Error(codes.Unimplemented, "method EmbedStream not implemented")
}

// Streams is how many streams c keeps idle (0 for a version-1 client).
func Streams(e Embedder) int {
	c, ok := e.(*streamClient)
	if !ok {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.idle)
}
