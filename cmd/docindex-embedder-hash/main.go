package main

import (
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
)

func main() {
	embedder.Serve(hash.New(hash.WithDimensions(hash.DefaultDimensions), hash.WithDimensions(1024)))
}
