// Command fixture-connector is a connector plugin for the host's tests: a
// fixed set of generated items, and configuration switches that make the
// process crash in the middle of a call or log through the SDK's logger.
package main
