// Package openai is an embedding provider for any server that speaks the
// OpenAI embeddings API (POST {base}/embeddings): OpenAI itself, Azure
// OpenAI, Ollama, vLLM, text-embeddings-inference, LM Studio and others.
//
// The base URL, API key and models come from options or, in the plugin
// binary, from the environment (see FromEnv). Requests are split to the
// provider's batch and size limits; 429 and 5xx answers and network errors
// are retried with exponential backoff that honours Retry-After; errors
// carry the server's own message and wrap the SDK's errors
// (plugins.ErrUnauthenticated, plugins.ErrRateLimited, ...).
//
// Vectors are asked for in base64 (encoding_format), as OpenAI's own
// clients do: a third of the bytes of decimal floats and no number parsing,
// which at a batch of 256 vectors is most of the client's CPU for a call.
// Servers that ignore the field send floats, which read as well; one that
// refuses it is asked for floats from then on.
package openai
