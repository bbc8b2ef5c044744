// Package plugintest lets a plugin author test a plugin without a docindex
// server and without building a binary.
//
// StartEmbedder, StartConnector and StartLLM serve an implementation inside the test
// process over real gRPC (go-plugin's test mode, the same server options as
// a plugin binary: message limits, panic recovery) and return the host-side
// client, so that a test exercises exactly what the server will see, errors
// and streaming included.
//
// RunEmbedderSuite, RunConnectorSuite and RunLLMSuite are the conformance suites that
// every first-party plugin passes; a third-party author runs them on theirs:
//
//	func TestConformance(t *testing.T) {
//		c := plugintest.StartConnector(t, rss.New())
//		plugintest.RunConnectorSuite(t, c, plugintest.WithConfig(cfg))
//	}
package plugintest
