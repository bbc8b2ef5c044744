package git

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	gogit "github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/docindex/docindex/plugins/connector"
)

// Type is the source type: the plugin binary is docindex-connector-git.
const Type = "git"

// Version is the connector's own version.
const Version = "1.0.0"

// healthTimeout bounds CheckHealth when the caller's context does not.
const healthTimeout = 30 * time.Second

// Connector reads the files of a branch of a git repository over HTTP(S).
// It is safe for concurrent use. Close it to remove its cache directory.
type Connector struct {
	log     *slog.Logger
	mirrors *mirrors
}

var _ connector.Connector = (*Connector)(nil)

// Option configures a Connector.
type Option func(*Connector)

// WithLogger sets the logger (default slog.Default()). Plugin binaries pass
// plugins.Logger() so that lines reach the host.
func WithLogger(l *slog.Logger) Option { return func(c *Connector) { c.log = l } }

// WithCacheDir sets the directory in which the connector creates its cache
// of repository mirrors (default: the system's temporary directory).
func WithCacheDir(dir string) Option { return func(c *Connector) { c.mirrors.parent = dir } }

// WithMaxMirrors bounds how many repositories the cache keeps (default 8);
// the least recently used unused one is removed first.
func WithMaxMirrors(n int) Option {
	return func(c *Connector) { c.mirrors.max = max(n, 1) }
}

// WithMirrorIdle sets how long an unused mirror stays in the cache
// (default 1h).
func WithMirrorIdle(d time.Duration) Option { return func(c *Connector) { c.mirrors.idle = d } }

// New returns a git connector.
func New(opts ...Option) *Connector {
	c := &Connector{log: slog.Default(), mirrors: &mirrors{max: 8, idle: time.Hour}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Close removes the cache directory. Calls still running fail.
func (c *Connector) Close() error { return c.mirrors.close() }

// Describe implements connector.Connector.
func (c *Connector) Describe(context.Context) (connector.Description, error) {
	return connector.Description{
		Type:         Type,
		Version:      Version,
		DisplayName:  "Git repository",
		Description:  "Indexes the text and document files of one branch of a git repository, fetched over HTTP(S).",
		Capabilities: []connector.Capability{connector.CapSchedule, connector.CapIncremental},
		ConfigSchema: json.RawMessage(configSchema),
	}, nil
}

// Validate implements connector.Connector. It does not contact the server.
func (c *Connector) Validate(_ context.Context, config json.RawMessage) error {
	_, err := parseConfig(config)
	return err
}

// CheckHealth lists the remote's branches with the configured credentials
// and checks that the branch exists. Nothing is downloaded.
func (c *Connector) CheckHealth(ctx context.Context, config json.RawMessage) (connector.Health, error) {
	cfg, err := parseConfig(config)
	if err != nil {
		return connector.Health{}, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, healthTimeout)
		defer cancel()
	}
	remote := gogit.NewRemote(memory.NewStorage(), &gitconfig.RemoteConfig{Name: "origin", URLs: []string{cfg.URL}})
	refs, err := remote.ListContext(ctx, &gogit.ListOptions{Auth: auth(cfg)})
	if err != nil {
		err = scrub(cfg, remoteError("list the branches of", cfg, err))
		if errors.Is(err, errEmpty) {
			return connector.Health{Status: connector.StatusDegraded, Message: err.Error()}, nil
		}
		return connector.Health{Status: connector.StatusDown, Message: err.Error()}, nil
	}
	branch, hash, err := pickBranch(refs, cfg.Branch)
	if err != nil {
		return connector.Health{Status: connector.StatusDown, Message: "git: " + repoLabel(cfg.URL) + ": " + err.Error()}, nil
	}
	return connector.Health{
		Status:  connector.StatusOK,
		Message: "branch " + branch + " is at " + hash.String(),
	}, nil
}
