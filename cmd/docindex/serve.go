package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"github.com/uptrace/bunrouter"

	"github.com/docindex/docindex/docindex/httpapi"
	"github.com/docindex/docindex/docindex/worker"
)

func newServe() *cobra.Command {
	cfg, cfgErr := loadConfig()
	if cfg == nil {
		cfg = &config{}
	}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP server (migrates the database first)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfgErr != nil {
				return cfgErr
			}
			return serve(cmd.Context(), cfg)
		},
	}
	bindFlags(cmd, cfg)
	cmd.Flags().StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (DOCINDEX_ADDR)")
	return cmd
}

func serve(ctx context.Context, cfg *config) error {
	log := cfg.logger()
	svc, closeAll, err := cfg.service(ctx, log)
	if err != nil {
		return err
	}
	defer closeAll()
	router := bunrouter.New()
	httpapi.Mount(router.NewGroup(""), svc, httpapi.WithLogger(log))

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{Handler: router, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("docindex serving", "addr", ln.Addr().String(), "workers", cfg.Workers)

	// Workers stop claiming when ctx ends and finish what they run within their grace period.
	workersDone := make(chan struct{})
	go func() {
		defer close(workersDone)
		if cfg.Workers > 0 {
			pool := worker.New(svc.Queue(), svc, cfg.poolOptions(cfg.Workers, log)...)
			if err := pool.Run(ctx); err != nil && ctx.Err() == nil {
				errc <- fmt.Errorf("workers: %w", err)
			}
		}
	}()

	// Chunks written by any process's workers are merged into the HNSW index by every server.
	go svc.RunIndexMerge(ctx)
	// Every server runs the scheduler; only the leader of the moment starts due syncs.
	go func() { _ = svc.RunScheduler(ctx, cfg.SchedulerEvery) }()

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	<-workersDone
	return nil
}

func newWorker() *cobra.Command {
	cfg, cfgErr := loadConfig()
	if cfg == nil {
		cfg = &config{}
	}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run job workers without the HTTP server",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfgErr != nil {
				return cfgErr
			}
			ctx := cmd.Context()
			log := cfg.logger()
			svc, closeAll, err := cfg.service(ctx, log)
			if err != nil {
				return err
			}
			defer closeAll()
			n := max(cfg.Workers, 1)
			log.Info("docindex workers running", "workers", n)
			go svc.RunIndexMerge(ctx)
			return worker.New(svc.Queue(), svc, cfg.poolOptions(n, log)...).Run(ctx)
		},
	}
	bindFlags(cmd, cfg)
	cmd.Flags().IntVar(&cfg.Workers, "workers", cfg.Workers, "concurrent jobs (DOCINDEX_WORKERS)")
	return cmd
}
