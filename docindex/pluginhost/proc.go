package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/docindex/docindex/plugins"
)

// errClosed is why a plugin of a closed host cannot be used.
var errClosed = errors.New("plugin host closed")

// maxLaunchFailures is how many launches in a row may fail before a plugin
// is given up (a binary that cannot start will not start on the sixth try).
const maxLaunchFailures = 5

// stableAfter is how long a process must have lived for its exit not to
// count as a crash loop; quicker exits make the next restart wait longer.
const stableAfter = 10 * time.Second

// instance is one running process of a plugin.
type instance struct {
	client   *plugin.Client
	raw      any // what go-plugin dispensed: an embedder or connector client
	done     <-chan struct{}
	pid      int
	protocol int
	started  time.Time
	killOnce sync.Once
}

func (i *instance) exited() bool {
	select {
	case <-i.done:
		return true
	default:
		return false
	}
}

// kill ends the process (gracefully, then by force after two seconds) and
// returns once it has exited. Concurrent callers all wait for the one kill.
func (i *instance) kill() {
	i.killOnce.Do(i.client.Kill)
}

// proc supervises the processes of one plugin executable: a goroutine (run)
// launches it, restarts it when it exits, and kills it on close; callers
// take the current instance with get.
type proc struct {
	name    string
	kind    plugins.Kind
	path    string
	log     *slog.Logger
	env     []string
	timeout time.Duration
	backoff [2]time.Duration // first and longest delay between restarts

	// sets returns a fresh client-side plugin set per launch.
	sets func() map[int]plugin.PluginSet
	// onStart runs once per new instance before callers see it, to refresh
	// what the host caches about the plugin (its models, its description).
	onStart func(ctx context.Context, raw any)

	quit chan struct{}
	done chan struct{} // closed when run has returned

	mu       sync.Mutex
	inst     *instance
	err      error         // why there is no instance; nil while (re)starting
	changed  chan struct{} // closed and replaced whenever inst or err change
	restarts int
	launches int
	gaveUp   bool
}

func (p *proc) set(inst *instance, err error) {
	p.mu.Lock()
	p.inst, p.err = inst, err
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// run is the supervisor. ready is closed after the first launch attempt.
func (p *proc) run(ready chan<- struct{}) {
	defer close(p.done)
	signal := sync.OnceFunc(func() { close(ready) })
	defer signal()
	delay := p.backoff[0]
	failures := 0
	for {
		inst, err := p.launch()
		if err != nil {
			failures++
			p.log.Error("plugin failed to start", "path", p.path, "attempt", failures, "error", err)
			if failures >= maxLaunchFailures {
				p.mu.Lock()
				p.gaveUp = true
				p.mu.Unlock()
				p.set(nil, fmt.Errorf("gave up after %d failed starts: %w", failures, err))
				p.log.Error("giving up on plugin; fix it and restart the server", "path", p.path)
				signal()
				<-p.quit
				return
			}
			p.set(nil, err)
			signal()
			if !p.sleep(delay) {
				return
			}
			delay = min(2*delay, p.backoff[1])
			continue
		}
		failures = 0
		p.log.Info("plugin started", "pid", inst.pid, "protocol", inst.protocol)
		ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
		p.onStart(ctx, inst.raw)
		cancel()
		p.set(inst, nil)
		signal()

		select {
		case <-p.quit:
			inst.kill()
			p.set(nil, errClosed)
			return
		case <-inst.done:
		}
		lived := time.Since(inst.started)
		p.mu.Lock()
		p.restarts++
		p.mu.Unlock()
		p.set(nil, nil) // callers wait for the restart instead of failing
		p.log.Error("plugin process exited; restarting it", "pid", inst.pid, "uptime", lived.Round(time.Millisecond).String())
		inst.kill() // releases the client's resources; the process is gone
		if lived < stableAfter {
			if !p.sleep(delay) {
				return
			}
			delay = min(2*delay, p.backoff[1])
		} else {
			delay = p.backoff[0]
		}
	}
}

// sleep waits d unless the host closes first; it reports whether to go on.
func (p *proc) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.quit:
		p.set(nil, errClosed)
		return false
	}
}

// launch starts one process and connects to it.
func (p *proc) launch() (*instance, error) {
	p.mu.Lock()
	p.launches++
	p.mu.Unlock()
	cmd := exec.Command(p.path)
	// The environment is built here (SkipHostEnv below) so that the host's
	// additions win over inherited variables of the same name.
	cmd.Env = append(os.Environ(), p.env...)
	killWithParent(cmd)

	var doneCtx context.Context
	sets := watchSets(p.sets(), &doneCtx)
	out := &lineWriter{log: func(l string) { p.log.Info(l, "stream", "stdout") }}
	errw := &lineWriter{log: func(l string) { p.log.Info(l, "stream", "stderr") }}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  plugins.Handshake(),
		VersionedPlugins: sets,
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     p.timeout,
		Logger:           newHCLog(p.log),
		SyncStdout:       out,
		SyncStderr:       errw,
		GRPCDialOptions:  plugins.DialOptions(),
	})
	started := time.Now()
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("start %s: %w", p.path, err)
	}
	raw, err := rpc.Dispense(string(p.kind))
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("start %s: %w", p.path, err)
	}
	if doneCtx == nil {
		client.Kill()
		return nil, fmt.Errorf("start %s: no gRPC client was created", p.path)
	}
	inst := &instance{
		client:   client,
		raw:      raw,
		done:     doneCtx.Done(),
		protocol: client.NegotiatedVersion(),
		started:  started,
	}
	if cmd.Process != nil {
		inst.pid = cmd.Process.Pid
	}
	return inst, nil
}

// get returns a live instance, waiting while the plugin (re)starts.
func (p *proc) get(ctx context.Context) (*instance, error) {
	for {
		p.mu.Lock()
		inst, err, changed := p.inst, p.err, p.changed
		p.mu.Unlock()
		switch {
		case inst != nil && !inst.exited():
			return inst, nil
		case inst == nil && err != nil:
			return nil, fmt.Errorf("plugin %s: %w: %v", p.name, plugins.ErrUnavailable, err)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("plugin %s: waiting for it to start: %w", p.name, ctx.Err())
		case <-p.quit:
			return nil, fmt.Errorf("plugin %s: %w: %v", p.name, plugins.ErrUnavailable, errClosed)
		}
	}
}

// do runs fn against a live instance. When fn fails because the process
// went away, it waits for the restarted process and runs fn once more: every
// plugin call the host makes is safe to repeat.
func (p *proc) do(ctx context.Context, fn func(raw any) error) error {
	for attempt := 0; ; attempt++ {
		inst, err := p.get(ctx)
		if err != nil {
			return err
		}
		err = fn(inst.raw)
		if err == nil || attempt > 0 || ctx.Err() != nil || !p.broken(inst, err) {
			return err
		}
		p.log.Warn("plugin call failed because the plugin process went away; retrying", "pid", inst.pid, "error", err)
	}
}

// broken reports whether err says that inst can no longer serve calls, and
// then makes sure the process is gone, so that the supervisor starts a new one.
func (p *proc) broken(inst *instance, err error) bool {
	if !errors.Is(err, plugins.ErrUnavailable) && !inst.exited() {
		return false
	}
	inst.kill()
	return true
}

// info is the supervision part of PluginInfo.
func (p *proc) info() (pid, protocol, restarts int, status Status, lastErr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	restarts = p.restarts
	switch {
	case p.inst != nil && !p.inst.exited():
		return p.inst.pid, p.inst.protocol, restarts, StatusRunning, ""
	case p.gaveUp:
		status = StatusFailed
	case p.err != nil && errors.Is(p.err, errClosed):
		status = StatusStopped
	default:
		status = StatusStarting
	}
	if p.err != nil {
		lastErr = p.err.Error()
	}
	return 0, 0, restarts, status, lastErr
}

// watchSets wraps the plugins of sets so that the context go-plugin hands to
// the gRPC client, which ends when the process exits, is stored in *done.
func watchSets(sets map[int]plugin.PluginSet, done *context.Context) map[int]plugin.PluginSet {
	out := make(map[int]plugin.PluginSet, len(sets))
	for v, set := range sets {
		ws := make(plugin.PluginSet, len(set))
		for name, pl := range set {
			if g, ok := pl.(plugin.GRPCPlugin); ok {
				ws[name] = &watched{inner: g, done: done}
			}
		}
		out[v] = ws
	}
	return out
}

type watched struct {
	plugin.NetRPCUnsupportedPlugin
	inner plugin.GRPCPlugin
	done  *context.Context
}

func (w *watched) GRPCServer(b *plugin.GRPCBroker, s *grpc.Server) error {
	return w.inner.GRPCServer(b, s)
}

func (w *watched) GRPCClient(ctx context.Context, b *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	*w.done = ctx
	return w.inner.GRPCClient(ctx, b, c)
}
