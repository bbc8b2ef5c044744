// Command embed-in-app shows docindex inside an existing bunrouter application: the host keeps
// its own routes and middleware, and mounts the docindex HTTP module under /docindex.
//
//	DATABASE_URL=postgres://... JWT_SECRET=... ADDR=127.0.0.1:8090 go run ./examples/embed-in-app
package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/uptrace/bunrouter"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/auth"
	"github.com/docindex/docindex/docindex/httpapi"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, log); err != nil {
		log.Error("embed-in-app", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger) error {
	db, err := docindex.OpenDB(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := docindex.Migrate(ctx, db); err != nil {
		return err
	}
	svc, err := docindex.New(db,
		docindex.WithLogger(log),
		docindex.WithVerifier(auth.NewHS256([]byte(os.Getenv("JWT_SECRET")))),
		// An in-process embedder: no plugin processes needed.
		docindex.WithEmbedders(hash.New()),
	)
	if err != nil {
		return err
	}

	// The host application's own router and routes.
	router := bunrouter.New()
	router.GET("/hello", func(w http.ResponseWriter, req bunrouter.Request) error {
		_, err := w.Write([]byte("hello from the host app\n"))
		return err
	})
	// docindex under a prefix of the host's choosing.
	httpapi.Mount(router.NewGroup("/docindex"), svc, httpapi.WithLogger(log))

	srv := &http.Server{Addr: os.Getenv("ADDR"), Handler: router, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("listening", "addr", srv.Addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
