// Command docindex-connector-webcrawl serves the web crawler connector
// (source type webcrawl) as a docindex plugin. Put it in the server's plugin
// directory; it is not meant to be run by hand.
package main

import (
	"github.com/docindex/docindex/connectors/webcrawl"
	"github.com/docindex/docindex/plugins/connector"
)

func main() { connector.Serve(webcrawl.New()) }
