package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/docindex/docindex/docindex"
)

func newMigrate() *cobra.Command {
	cfg, cfgErr := loadConfig()
	if cfg == nil {
		cfg = &config{}
	}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfgErr != nil {
				return cfgErr
			}
			db, err := cfg.openDB(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			if err := docindex.Migrate(cmd.Context(), db); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "migrations applied")
			return nil
		},
	}
	bindFlags(cmd, cfg)
	return cmd
}

func newAPIKey() *cobra.Command {
	cmd := &cobra.Command{Use: "apikey", Short: "Manage API keys"}
	cfg, cfgErr := loadConfig()
	if cfg == nil {
		cfg = &config{}
	}
	var email, client, name, perms string
	var admin bool
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an API key for a user (created when missing) and print it",
		Long: "Create an API key for the user with --email, creating the user when missing.\n" +
			"--admin makes the user a global admin. The raw key is printed once; only its hash is stored.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfgErr != nil {
				return cfgErr
			}
			ctx := cmd.Context()
			db, err := cfg.openDB(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			if err := docindex.Migrate(ctx, db); err != nil {
				return err
			}
			svc, err := docindex.New(db)
			if err != nil {
				return err
			}
			u, err := svc.EnsureUser(ctx, email, name, admin)
			if err != nil {
				return err
			}
			var list []string
			if perms != "" {
				for _, p := range strings.Split(perms, ",") {
					list = append(list, strings.TrimSpace(p))
				}
			} else if admin {
				list = []string{"read", "write", "admin"}
			} else {
				list = []string{"read", "write"}
			}
			k, err := svc.IssueAPIKey(ctx, u.ID, client, list)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), k.Key)
			return nil
		},
	}
	bindFlags(create, cfg)
	create.Flags().StringVar(&email, "email", "", "e-mail of the key's user (required)")
	create.Flags().StringVar(&name, "name", "", "display name of the user")
	create.Flags().StringVar(&client, "client-name", "cli", "name of the client the key is for")
	create.Flags().BoolVar(&admin, "admin", false, "make the user a global admin")
	create.Flags().StringVar(&perms, "permissions", "", "comma-separated: read,write,admin (default read,write; with --admin read,write,admin)")
	_ = create.MarkFlagRequired("email")
	cmd.AddCommand(create)
	return cmd
}
