package wire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/docindex/docindex/plugins"
)

// Local serves the newest protocol version of sets inside this process, over
// real gRPC on a local socket, with the same server configuration as a plugin
// binary, and returns the host-side object go-plugin dispenses for kind.
// stop shuts the client and the server down and waits for both.
//
// It uses go-plugin's test mode (no subprocess, no handshake cookie, no mTLS)
// and attaches the client through a runner that stands for the in-process
// server, so that closing the client goes through the same graceful shutdown
// as with a real process.
func Local(ctx context.Context, kind plugins.Kind, sets map[int]plugin.PluginSet, logger hclog.Logger) (raw any, stop func(), err error) {
	version := -1
	for v := range sets {
		version = max(version, v)
	}
	if version < 0 {
		return nil, nil, errors.New("serve locally: no protocol version to serve")
	}
	set := sets[version]
	cfg := ServeConfig(map[int]plugin.PluginSet{version: set}, logger)

	ctx, cancel := context.WithCancel(ctx)
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	cfg.Test = &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed}
	go plugin.Serve(cfg)

	var rc *plugin.ReattachConfig
	select {
	case rc = <-reattach:
	case <-closed:
		cancel()
		return nil, nil, errors.New("serve locally: the plugin server stopped before it was ready")
	case <-time.After(30 * time.Second):
		cancel()
		return nil, nil, errors.New("serve locally: the plugin server did not start within 30s")
	}
	rc.Test = false // let Kill shut the server down through the runner below
	rc.Pid = 0
	rc.ReattachFunc = func() (runner.AttachedRunner, error) {
		return &localRunner{closed: closed, cancel: cancel}, nil
	}

	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  plugins.Handshake(),
		Plugins:          set,
		Reattach:         rc,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           logger,
		GRPCDialOptions:  DialOptions(),
	})
	stop = func() {
		client.Kill()
		cancel()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
		}
	}
	proto, err := client.Client()
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("serve locally: connect: %w", err)
	}
	raw, err = proto.Dispense(string(kind))
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("serve locally: dispense %s: %w", kind, err)
	}
	return raw, stop, nil
}

// localRunner stands for a plugin served inside this process: it "exits"
// when the server has stopped, and killing it stops the server.
type localRunner struct {
	closed <-chan struct{}
	cancel context.CancelFunc
}

func (r *localRunner) Wait(ctx context.Context) error {
	select {
	case <-r.closed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *localRunner) Kill(context.Context) error {
	r.cancel()
	<-r.closed
	return nil
}

func (r *localRunner) ID() string { return "in-process" }

func (r *localRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *localRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
