// Package wire holds what the embedder and connector SDKs share on both sides
// of the gRPC boundary: how errors become status codes and back, the
// go-plugin serve configuration (raised message limits, panic recovery, JSON
// logs), and the harness that serves a plugin inside a test process.
package wire
