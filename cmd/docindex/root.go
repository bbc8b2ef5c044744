package main

import (
	"github.com/spf13/cobra"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "docindex",
		Short:         "docindex keeps documents and tables in collections and indexes them for retrieval",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServe(), newWorker(), newMigrate(), newAPIKey(), newPlugins(), newSources())
	return root
}
