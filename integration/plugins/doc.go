// Package plugins holds integration tests of the indexing pipeline with embedding providers
// running as real plugin processes.
package plugins
