// Package store holds the bun models of the docindex schema and the queries on them. Every
// function takes a bun.IDB so callers choose whether it runs inside a transaction.
package store
