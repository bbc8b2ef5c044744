// Package embedderv1 is the Go code generated from
// plugins/proto/docindex/embedder/v1/embedder.proto (scripts/protoc.sh gen).
// It is internal: plugin authors use package embedder.
package embedderv1
