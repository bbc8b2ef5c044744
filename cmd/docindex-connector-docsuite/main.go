package main

import (
	"github.com/docindex/docindex/connectors/docsuite"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

func main() { connector.Serve(docsuite.New(docsuite.WithLogger(plugins.Logger()))) }
