package main

import (
	"example.com/rssconnector/rss"
	"github.com/docindex/docindex/plugins/connector"
)

func main() {
	connector.Serve(rss.New())
}
