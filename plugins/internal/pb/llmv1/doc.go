// Package llmv1 is the Go code generated from
// plugins/proto/docindex/llm/v1/llm.proto (scripts/protoc.sh gen).
// It is internal: plugin authors use package llm.
package llmv1
