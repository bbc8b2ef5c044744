package main

import (
	"os"

	"github.com/docindex/docindex/plugins/llm"
	"github.com/docindex/docindex/plugins/llms/openai"
)

func main() {
	llm.Serve(openai.FromEnv(openai.EnvPrefixFor(os.Args[0])))
}
