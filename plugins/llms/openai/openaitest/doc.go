// Package openaitest is a test server that speaks OpenAI's chat-completions API in its
// published shapes, on loopback, for testing the openai provider, the plugin binary and
// anything above them (structured extraction, image descriptions) without a network or a
// model. It validates requests as OpenAI does, answers schema requests with documents that
// satisfy the schema, and can be scripted: fixed answers per request, and error replies (429
// with Retry-After, 5xx) queued ahead of them.
package openaitest
