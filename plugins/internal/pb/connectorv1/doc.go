// Package connectorv1 is the Go code generated from
// plugins/proto/docindex/connector/v1/connector.proto (scripts/protoc.sh gen).
// It is internal: plugin authors use package connector.
package connectorv1
