// Command docindex-connector-git serves the git connector as a docindex
// plugin. Put it in the server's plugin directory; it is not meant to be run
// by hand.
package main

import (
	"github.com/docindex/docindex/connectors/git"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

func main() {
	c := git.New(git.WithLogger(plugins.Logger()))
	// Serve returns when the host shuts the plugin down: remove the mirrors.
	defer c.Close()
	connector.Serve(c)
}
