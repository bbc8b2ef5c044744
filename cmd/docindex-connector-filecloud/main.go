// Command docindex-connector-filecloud serves the filecloud connector
// (WebDAV folders and S3-compatible buckets) as a docindex plugin. Put it in
// the server's plugin directory; it is not meant to be run by hand.
package main

import (
	"github.com/docindex/docindex/connectors/filecloud"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

func main() {
	connector.Serve(filecloud.New(filecloud.WithLogger(plugins.Logger())))
}
