package main

import (
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/glove"
)

func main() {
	embedder.Serve(glove.New())
}
