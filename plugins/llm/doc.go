// Package llm is the SDK of language-model plugins (docindex-llm-<provider>): chat completion with
// optional images (vision) and JSON-Schema structured output. docindex uses it to pull typed
// fields out of documents into tables and to describe images.
package llm
