// Command docindex-embedder-hash serves the hash embedding provider (models
// hash-256 and hash-1024) as a docindex plugin. Put it in the server's plugin
// directory; it is not meant to be run by hand.
package main
