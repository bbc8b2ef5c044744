package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newPlugins() *cobra.Command {
	cmd := &cobra.Command{Use: "plugins", Short: "Inspect plugins"}
	cfg, cfgErr := loadConfig()
	if cfg == nil {
		cfg = &config{}
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "Start every plugin of the plugin directory and print what it offers",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfgErr != nil {
				return cfgErr
			}
			log := cfg.logger()
			h, err := cfg.plugins(cmd.Context(), log)
			if err != nil {
				return err
			}
			defer h.Close()
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tVERSION\tSTATUS\tCAPABILITIES\tPATH")
			for _, p := range h.Plugins() {
				path := p.Path
				if path == "" {
					path = "(in-process)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Kind, p.Version, p.Status, strings.Join(p.Capabilities, ","), path)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&cfg.PluginDir, "plugin-dir", cfg.PluginDir, "directory of plugin executables (DOCINDEX_PLUGIN_DIR)")
	cmd.AddCommand(list)
	return cmd
}
