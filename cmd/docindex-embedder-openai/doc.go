// Command docindex-embedder-openai serves an OpenAI-compatible embeddings API
// (OpenAI, Azure OpenAI, Ollama, vLLM, text-embeddings-inference, ...) as a
// docindex plugin, configured by DOCINDEX_OPENAI_* environment variables (see
// package plugins/embedders/openai). A copy under another name, such as
// docindex-embedder-ollama, reads DOCINDEX_OLLAMA_* instead.
package main
