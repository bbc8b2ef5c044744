// Package embedbatch coalesces concurrent embedding calls into fewer, larger
// ones.
//
// An embedder behind a network (an OpenAI-compatible server, a plugin
// process) costs a fixed latency per call and little per text, so a worker
// that embeds one file's handful of chunks per call leaves most of the
// embedder's throughput unused. A Batcher wraps any embedder.Embedder:
// concurrent Embed calls for the same model are merged into one call of up
// to MaxBatch texts, sent when the batch is full or when its oldest text has
// waited the linger time, and each caller gets its own vectors back in
// order. A caller larger than the batch is split across calls.
//
// At most MaxInFlight calls per model run at once (default 1): while one is
// running, new texts accumulate, so the batch size grows with the load
// instead of the number of calls. The error of a call goes to every caller
// with texts in it. A caller whose context ends returns at once; the texts
// it had not yet sent are dropped, and a call goes on for the others in its
// batch (it is cancelled only when every caller in it has gone). Memory is
// bounded: callers wait while MaxPending texts are queued for a model.
package embedbatch
