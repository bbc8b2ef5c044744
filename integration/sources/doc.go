// Package sources holds the end-to-end tests of data sources: the service (package docindex) with
// a real connector library registered, syncing from a real server on loopback, into a real
// PostgreSQL, with the worker pool indexing what the sync queued.
//
// One test per source type (webcrawl over a static copy of Debian's PostgreSQL manual, git over
// git http-backend, filecloud over rclone's WebDAV server and the versitygw S3 gateway, docsuite
// over Debian's MediaWiki) walks the same life cycle: a first sync indexes everything, a second
// sync with no change re-embeds nothing and queues no job, a changed item is reindexed and a
// deleted one disappears from search. One more test runs the git connector as a plugin process
// behind the plugin host, so the whole path crosses gRPC.
//
// The package has tests only. Run them with a database:
//
//	DOCINDEX_TEST_DATABASE_URL=$(bash scripts/devdb.sh url) go test ./integration/sources/
//
// The servers come from scripts/webcrawl-deps.sh, scripts/git-deps.sh, scripts/filecloud-deps.sh
// and scripts/docsuite-deps.sh (scripts/sources-deps.sh runs them all).
package sources
