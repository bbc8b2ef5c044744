// Package dataset turns table definitions (the `tables` field of a collection) into PostgreSQL
// tables: validation of names and types, and the DDL that provisions or drops them.
//
// Each collection with tables gets its own schema, named after its id (Schema), holding one table
// per definition with exactly the defined column names, so SQL users can query them directly.
// Identifiers are checked against ^[a-z_][a-z0-9_]{0,62}$ and always quoted; nothing from a request
// is ever spliced into SQL unquoted.
package dataset
