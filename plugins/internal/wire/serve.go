package wire

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/docindex/docindex/plugins"
)

// MaxMessageSize bounds one gRPC message either way. gRPC's default (4 MiB
// received) is too small for a batch of long texts; hosts still split
// requests well below this, and anything unbounded (documents, item lists)
// streams instead.
const MaxMessageSize = 64 << 20

// ServeConfig is the go-plugin configuration every docindex plugin is served
// with. sets maps protocol versions to the plugin set of each.
func ServeConfig(sets map[int]plugin.PluginSet, logger hclog.Logger) *plugin.ServeConfig {
	return &plugin.ServeConfig{
		HandshakeConfig:  plugins.Handshake(),
		VersionedPlugins: sets,
		GRPCServer:       GRPCServer(logger),
		Logger:           logger,
	}
}

// Serve serves sets as the plugin process's main loop and never returns
// normally. Its logs are hclog JSON lines on standard error.
func Serve(sets map[int]plugin.PluginSet) {
	// A plugin's live heap is often a few MB, so the default GOGC collects
	// every few MB of request and response buffers: several times per
	// batch. A larger factor costs little memory here and a lot less CPU.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	plugin.Serve(ServeConfig(sets, plugins.NewHCLogger(os.Stderr)))
}

// GRPCServer builds the plugin's gRPC server: raised message limits, and
// recovery from panics in plugin code, which become an Internal error for
// that one call instead of killing the process (and every call in flight).
func GRPCServer(logger hclog.Logger) func([]grpc.ServerOption) *grpc.Server {
	return func(opts []grpc.ServerOption) *grpc.Server {
		opts = append(opts, plugins.ServerOptions()...)
		opts = append(opts,
			grpc.MaxRecvMsgSize(MaxMessageSize),
			grpc.MaxSendMsgSize(MaxMessageSize),
			grpc.ChainUnaryInterceptor(recoverUnary(logger)),
			grpc.ChainStreamInterceptor(recoverStream(logger)),
		)
		return grpc.NewServer(opts...)
	}
}

// DialOptions are the host's gRPC client options matching GRPCServer.
func DialOptions() []grpc.DialOption {
	return append(plugins.DialOptions(), grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(MaxMessageSize),
		grpc.MaxCallSendMsgSize(MaxMessageSize),
	))
}

func panicked(logger hclog.Logger, method string, r any) error {
	logger.Error("panic in plugin call", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	return status.Errorf(codes.Internal, "plugin panicked in %s: %v", method, r)
}

func recoverUnary(logger hclog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				resp, err = nil, panicked(logger, info.FullMethod, r)
			}
		}()
		return handler(ctx, req)
	}
}

func recoverStream(logger hclog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = panicked(logger, info.FullMethod, r)
			}
		}()
		return handler(srv, ss)
	}
}

// Version is the version a plugin reports when its author gave none: the
// main module's version from the build information, or "devel".
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
