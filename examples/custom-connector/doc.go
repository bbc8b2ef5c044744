// Command docindex-connector-rss is a docindex source connector for RSS and
// Atom feeds, written against the plugin SDK alone. Build it into the
// server's plugin directory under that name; see README.md.
package main
