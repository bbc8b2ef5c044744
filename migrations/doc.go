// Package migrations embeds the SQL migrations of the docindex schema.
//
// Files are named <timestamp>_<name>.tx.up.sql so bun/migrate runs each in a transaction; library
// tables live in the schema "docindex". Run them with docindex.Migrate, which serializes servers
// that start together with an advisory lock and marks a migration applied only when it succeeded.
package migrations
