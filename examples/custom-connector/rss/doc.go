// Package rss is a docindex connector for RSS 2.0 and Atom 1.0 feeds: each
// entry becomes an item whose HTML content travels inline with the sync.
//
// Syncs are incremental with a cursor that holds the feed's ETag and
// Last-Modified: when the feed has not changed, the server answers 304 and
// the sync sends nothing. Entries that drop off the feed are kept (a feed is
// a window on a longer history), so the connector never sends Snapshot.
package rss
