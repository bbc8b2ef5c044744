// Command docindex-llm-openai serves an OpenAI-compatible chat-completions API (OpenAI, Azure
// OpenAI, Ollama, vLLM, llama.cpp, LM Studio, ...) as a docindex language-model plugin,
// configured by DOCINDEX_LLM_OPENAI_* environment variables (see package plugins/llms/openai).
// A copy under another name, such as docindex-llm-ollama, reads DOCINDEX_LLM_OLLAMA_* instead.
package main
