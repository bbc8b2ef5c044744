// Command docindex is the reference server and admin CLI of docindex: serve, worker, migrate,
// apikey and plugins. It is wiring only; the logic lives in the library packages.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "docindex:", err)
		os.Exit(1)
	}
}
