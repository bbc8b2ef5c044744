// Package plugins is the root of docindex's plugin SDK: what every plugin and
// every host shares, whatever the plugin's kind.
//
// A plugin is a separate executable that the docindex server starts and talks
// to over gRPC through hashicorp/go-plugin (AutoMTLS, versioned protocols, a
// handshake cookie that never changes). Its name tells its kind and name:
//
//	docindex-embedder-<provider>   an embedding provider (package embedder)
//	docindex-connector-<type>      a source connector (package connector)
//
// Authors implement a plain Go interface and serve it with a one-line main:
//
//	func main() { embedder.Serve(mymodel.New()) }
//
// They never see protobuf types; the generated code stays in plugins/internal.
// Package plugintest runs an implementation behind real gRPC inside a test and
// checks it against the conformance suites every first-party plugin passes.
//
// This package holds the handshake, the protocol-independent errors that cross
// the process boundary, and a logger whose output the host shows in its own
// log under the plugin's name. It imports nothing from the docindex server.
package plugins
