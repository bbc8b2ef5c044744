package main

import (
	"os"

	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/openai"
)

func main() {
	embedder.Serve(openai.FromEnv(openai.EnvPrefixFor(os.Args[0])))
}
