// Package pluginhost runs docindex's plugins: it discovers plugin
// executables in a directory, launches them through hashicorp/go-plugin
// (gRPC, AutoMTLS, versioned protocols), keeps them running, and offers
// what they provide behind the plain SDK interfaces.
//
// A Host is itself an embedder.Embedder over every model of every provider:
// Embed routes to the provider of the model, splits batches to the model's
// limit, and when the plugin process died under the call (a crash, a kill),
// waits for the restarted process and retries once, so the caller sees no
// error. Connectors are returned by source type with the same retry.
// Language-model providers (docindex-llm-*) are served the same way:
// LLMModels is their catalog, Complete routes a request by model id (and
// refuses images for models without vision before any call), and LLM returns
// the host as an llm.LLM for code that wants the plain interface.
//
// Plugin processes are supervised: one that exits is restarted at once (with
// a growing delay if it keeps dying quickly); Close kills them all, and on
// Linux they are also killed if the server itself dies, so none is left
// behind. Their log lines appear in the host's slog with the plugin's name.
//
// Library users who prefer no subprocess register implementations in
// process with RegisterEmbedder, RegisterConnector and RegisterLLM; these take precedence
// over discovered plugins of the same name.
package pluginhost
