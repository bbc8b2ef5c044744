package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/caarlos0/env/v11"
	"github.com/spf13/cobra"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/auth"
	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/images"
	"github.com/docindex/docindex/docindex/pluginhost"
	"github.com/docindex/docindex/docindex/vectorstore"
	"github.com/docindex/docindex/docindex/worker"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

// config is read from the environment; flags of the same meaning override it.
type config struct {
	DatabaseURL     string        `env:"DOCINDEX_DATABASE_URL"`
	Addr            string        `env:"DOCINDEX_ADDR" envDefault:"127.0.0.1:8080"`
	DataDir         string        `env:"DOCINDEX_DATA_DIR" envDefault:".data"`
	PluginDir       string        `env:"DOCINDEX_PLUGIN_DIR" envDefault:"bin/plugins"`
	JWTSecret       string        `env:"DOCINDEX_JWT_SECRET"`
	OIDCIssuer      string        `env:"DOCINDEX_OIDC_ISSUER"`
	OIDCAudience    string        `env:"DOCINDEX_OIDC_AUDIENCE"`
	EmbeddingModel  string        `env:"DOCINDEX_EMBEDDING_MODEL"`
	BlobURL         string        `env:"DOCINDEX_BLOB_URL"`
	MaxUploadBytes  int64         `env:"DOCINDEX_MAX_UPLOAD_BYTES" envDefault:"104857600"`
	Workers         int           `env:"DOCINDEX_WORKERS" envDefault:"2"`
	WaitingJobs     int           `env:"DOCINDEX_WAITING_JOBS" envDefault:"-1"`
	MaxUnmerged     int           `env:"DOCINDEX_MAX_UNMERGED_CHUNKS" envDefault:"20000"`
	SecretKey       string        `env:"DOCINDEX_SECRET_KEY"`
	ExtractionModel string        `env:"DOCINDEX_EXTRACTION_MODEL"`
	SchedulerEvery  time.Duration `env:"DOCINDEX_SCHEDULER_INTERVAL" envDefault:"30s"`
	LogLevel        string        `env:"DOCINDEX_LOG_LEVEL" envDefault:"info"`
	LogFormat       string        `env:"DOCINDEX_LOG_FORMAT" envDefault:"json"`
}

// poolOptions configures a worker pool of n workers.
func (c *config) poolOptions(n int, log *slog.Logger) []worker.Option {
	opts := []worker.Option{worker.WithWorkers(n), worker.WithLogger(log)}
	if c.WaitingJobs >= 0 { // else the pool's default, 32 per worker
		opts = append(opts, worker.WithMaxWaiting(c.WaitingJobs))
	}
	return opts
}

func loadConfig() (*config, error) {
	var c config
	if err := env.Parse(&c); err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	return &c, nil
}

func bindFlags(cmd *cobra.Command, c *config) {
	f := cmd.Flags()
	f.StringVar(&c.DatabaseURL, "database-url", c.DatabaseURL, "PostgreSQL URL (DOCINDEX_DATABASE_URL)")
	f.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory for blobs and local state (DOCINDEX_DATA_DIR)")
	f.StringVar(&c.PluginDir, "plugin-dir", c.PluginDir, "directory of plugin executables (DOCINDEX_PLUGIN_DIR)")
}

func (c *config) logger() *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, opts))
}

func (c *config) openDB(ctx context.Context) (*bun.DB, error) {
	if c.DatabaseURL == "" {
		return nil, fmt.Errorf("no database: set DOCINDEX_DATABASE_URL or --database-url (`make run` starts a local one)")
	}
	return docindex.OpenDB(ctx, c.DatabaseURL)
}

// blobs opens the blob store: DOCINDEX_BLOB_URL (file:///dir or s3://bucket?...), else the
// directory blobs/ in the data directory.
func (c *config) blobs(ctx context.Context) (blob.Store, error) {
	if c.BlobURL != "" {
		return blob.Open(ctx, c.BlobURL)
	}
	dir, err := filepath.Abs(filepath.Join(c.DataDir, "blobs"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	return blob.NewDir(dir)
}

// service builds the library service with everything configured: database (migrated), tokens,
// plugins and blobs. The returned close func releases them in reverse order.
func (c *config) service(ctx context.Context, log *slog.Logger) (*docindex.Service, func(), error) {
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fail := func(err error) (*docindex.Service, func(), error) {
		closeAll()
		return nil, nil, err
	}
	db, err := c.openDB(ctx)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { db.Close() })
	if err := docindex.Migrate(ctx, db); err != nil {
		return fail(err)
	}
	verifier, err := c.verifier(ctx)
	if err != nil {
		return fail(err)
	}
	host, err := c.plugins(ctx, log)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { host.Close() })
	blobs, err := c.blobs(ctx)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { blobs.Close() })
	opts := []docindex.Option{docindex.WithEmbedBatching()}
	// Language-model plugins, when any offers a model, fill extraction tables; a vision model
	// describes images (otherwise OCR with tesseract does, when installed).
	if models, err := host.LLMModels(ctx); err == nil && len(models) > 0 {
		opts = append(opts, docindex.WithLLM(host.LLM()), docindex.WithExtractionModel(c.ExtractionModel))
		if vm, err := images.VisionModel(ctx, host.LLM()); err == nil {
			opts = append(opts, docindex.WithImageDescriber(images.NewVision(host.LLM(), vm)))
		}
	}
	opts = append(opts, docindex.WithLogger(log), docindex.WithVerifier(verifier),
		docindex.WithEmbedders(host), docindex.WithDefaultEmbeddingModel(c.EmbeddingModel, "glove-100d", "hash-256"),
		docindex.WithBlobStore(blobs), docindex.WithMaxUploadBytes(c.MaxUploadBytes),
		docindex.WithConnectors(host), docindex.WithSecretKey(c.SecretKey),
		docindex.WithVectorStoreOptions(vectorstore.WithMaxPending(c.MaxUnmerged)))
	svc, err := docindex.New(db, opts...)
	if err != nil {
		return fail(err)
	}
	return svc, closeAll, nil
}

// verifier builds the JWT verification from the configuration: HS256 with the secret, OIDC with
// the issuer, or both.
func (c *config) verifier(ctx context.Context) (auth.Verifier, error) {
	var vs []auth.Verifier
	if c.JWTSecret != "" {
		vs = append(vs, auth.NewHS256([]byte(c.JWTSecret)))
	}
	if c.OIDCIssuer != "" {
		v, err := auth.NewOIDC(ctx, c.OIDCIssuer, c.OIDCAudience)
		if err != nil {
			return nil, fmt.Errorf("oidc issuer %s: %w", c.OIDCIssuer, err)
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return nil, nil
	}
	return auth.Chain(vs...), nil
}

// plugins starts the plugin host on the plugin directory. The built-in hash embedder is
// registered in-process when no embedder plugin offers a model, so a server always has one.
func (c *config) plugins(ctx context.Context, log *slog.Logger) (*pluginhost.Host, error) {
	dir, err := filepath.Abs(c.PluginDir)
	if err != nil {
		return nil, err
	}
	h := pluginhost.New(pluginhost.WithDir(dir), pluginhost.WithLogger(log))
	if err := h.Start(ctx); err != nil {
		return nil, fmt.Errorf("start plugins: %w", err)
	}
	if models, err := h.Models(ctx); err != nil || len(models) == 0 {
		log.Info("no embedder plugin offers a model; using the built-in hash embedder", "plugin_dir", dir)
		h.RegisterEmbedder("hash", hash.New())
	}
	return h, nil
}
