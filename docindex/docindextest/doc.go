// Package docindextest gives tests a real PostgreSQL with pgvector: each call of NewDB returns a
// fresh, migrated database that is dropped when the test ends.
//
// The server comes from DOCINDEX_TEST_DATABASE_URL when set (`make test` sets it to the project's
// local PostgreSQL); otherwise from a pgvector container started with dockertest when a Docker
// engine answers; otherwise the test fails with instructions. Library users can use it for their
// own tests of code built on docindex.
package docindextest
