// Package worker runs the jobs of the docindex queue: a Pool claims jobs (oldest first) up to its
// number of workers, runs each through a Handler and records the outcome with a guarded
// transition of the queue.
//
// While a job runs the pool renews its lease with heartbeats and holds no transaction. The
// handler's context is cancelled when the job is lost (rescued by another process after a
// missed lease, cancelled because its file was deleted), when it exceeds the job timeout, or
// when shutdown's grace period is over; the result of a lost job is discarded. A handler
// error fails the job: retried with backoff unless it is Permanent, and a panic counts as a
// retryable error. Handlers must be idempotent: a job whose worker died is run again from the
// start.
//
// A handler that waits on another service (an embedding API, a language model) says so with
// Wait: its worker is free for the next job meanwhile, up to WithMaxWaiting jobs beyond the
// workers, so a few workers keep a slow provider busy without running many CPU-bound jobs at
// once.
//
// The pool sleeps until a notification says jobs were queued (LISTEN), with polling as the
// fallback, and, when asked, runs the rescuer for expired leases on whichever process holds the
// "rescuer" leadership.
package worker
