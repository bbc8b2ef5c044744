// Package llm is the SDK of language-model plugins (docindex-llm-<provider>): chat completion with
// optional images (vision) and JSON-Schema structured output. docindex uses it to pull typed
// fields out of documents into tables and to describe images.
//
// It has the shape of the embedder SDK: the LLM interface a provider implements, Serve for the
// provider's one-line main, and the host-side client that implements the same interface across
// the process boundary. A provider binary is named docindex-llm-<provider> and looks like
//
//	package main
//
//	import (
//		"github.com/docindex/docindex/plugins/llm"
//		"example.com/mymodel"
//	)
//
//	func main() { llm.Serve(mymodel.New()) }
//
// Images travel inside the request (one request holds at most 64 MiB). Request.Validate checks
// what every provider needs of a request; plugintest.RunLLMSuite checks a provider against the
// whole contract. The first-party provider for OpenAI-compatible servers is plugins/llms/openai.
package llm
