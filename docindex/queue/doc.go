// Package queue is the docindex job queue: one global FIFO queue kept in the table
// docindex.jobs of PostgreSQL, shared by every server and worker process.
//
// Jobs are enqueued inside the caller's transaction, so a file row and its index job commit (or
// roll back) together, and a NOTIFY wakes idle workers at commit. Workers claim the oldest
// eligible jobs by seq with one UPDATE ... FROM (SELECT ... FOR UPDATE SKIP LOCKED LIMIT n)
// statement; a claimed job carries a lease (worker id and heartbeat time) and no transaction is
// held while it runs. Every later move of a running job (complete, fail, release, heartbeat) is
// guarded by status = 'running' and the lease owner, so a worker that lost its job (rescued after
// a missed heartbeat, cancelled because its file was deleted) cannot overwrite the new state: it
// gets ErrLeaseLost.
//
// States and moves:
//
//	queued  -> running            Claim
//	running -> completed          Complete
//	running -> queued             Fail (retryable, retries left: run_after = now + backoff, same seq),
//	                              Release (worker shutting down; no retry counted),
//	                              Rescue (lease expired; counts as a retry)
//	running -> failed             Fail (permanent, or retries exhausted), Rescue (retries exhausted)
//	queued, running -> cancelled  CancelFileJobs (the worker of a running job stops at its next heartbeat)
//	failed  -> queued             Retry (manual: tail of the queue, retry count reset)
//
// FIFO means: a worker never claims a job while an older (lower seq) job is eligible (queued,
// committed, run_after reached) and not being claimed by someone else. A job waiting for its
// backoff keeps its seq, so it runs before younger jobs once it is due. seq is taken when the
// job is inserted, so a job whose transaction commits late is ordered by its insert, not its
// commit.
//
// Every time comes from the database clock (now()), so workers on machines with skewed clocks
// agree on leases and backoff.
//
// Singleton background work (the rescuer, the sync scheduler) runs on one process at a time
// through Lead, a lease row in docindex.leaders.
package queue
