// Package openai is a language-model provider for any server that speaks OpenAI's
// chat-completions API (POST {base}/chat/completions): OpenAI itself, Azure OpenAI, Ollama,
// vLLM, llama.cpp's server, LM Studio, LiteLLM and others.
//
// Messages go in OpenAI's shapes; images as image_url content parts holding data: URLs, for
// models configured as vision models; a request's JSON Schema as response_format json_schema
// with strict adherence (or, for servers that lack it, JSON mode or instructions: see
// StructuredOutput). The base URL, API key and models come from options or, in the plugin
// binary, from the environment (see FromEnv). 429 and 5xx answers and network errors are
// retried with exponential backoff that honours Retry-After; errors carry the server's own
// message and wrap the SDK's errors (plugins.ErrUnauthenticated, plugins.ErrRateLimited,
// llm.ErrUnknownModel, ...); a refusal is an error wrapping plugins.ErrInvalidArgument.
//
// Package openaitest is a server in OpenAI's published shapes to test against.
package openai
