// Package embedder is the SDK for embedding providers: the Embedder
// interface a provider implements, Serve for the provider's one-line main, and
// the host-side client that implements the same interface across the process
// boundary.
//
// A provider binary is named docindex-embedder-<provider> and looks like
//
//	package main
//
//	import (
//		"github.com/docindex/docindex/plugins/embedder"
//		"example.com/mymodel"
//	)
//
//	func main() { embedder.Serve(mymodel.New()) }
//
// Dropped into the server's plugin directory, its models appear in the
// catalog (GET /api/embedding-models) and collections can be created with
// them. Test it with plugintest.RunEmbedderSuite.
package embedder
