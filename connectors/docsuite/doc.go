// Package docsuite is the connector for page-oriented document suites:
// Confluence (Cloud REST v2 and Data Center REST) and MediaWiki (the
// action API). It is the library behind the docindex-connector-docsuite
// plugin:
//
//	func main() { connector.Serve(docsuite.New(docsuite.WithLogger(plugins.Logger()))) }
//
// Document suites are synced on demand and when they push a change
// notification, never on a schedule (the connector lacks
// connector.CapSchedule). The host verifies pushed notifications with
// ParseEvent and then starts a sync.
//
// # Confluence
//
// Items are the current pages of the configured spaces (all readable
// spaces when none are configured), served as HTML documents made from the
// storage format, and with includeAttachments their attachments, streamed
// as stored. The item id is the page id ("att…" ids for attachments).
//
// Access lists come from page read restrictions, which Confluence
// inherits down the page tree: an unrestricted page (and its ancestors) is
// public; a restricted one lists the users (by e-mail address where the
// suite discloses it, else by account id or user name) and groups that
// appear in every restriction on its way to the root. Attachments carry
// their page's list. Item versions are the Confluence version number, with
// a digest of the restriction appended for restricted pages, so that a
// restriction change, which Confluence does not count as a new version,
// still reaches the host.
//
// Confluence offers no change feed that reports deletions and restriction
// changes, so every Confluence sync is a full listing (a Snapshot): the
// host skips unchanged items by version and deletes the vanished ones.
// Cloud reads restrictions with one v1 request per page (REST v2 has
// none); Data Center expands them into the page listing.
//
// # MediaWiki
//
// Items are the pages of the configured namespaces except redirects,
// rendered by the wiki (action=parse) and served as HTML so that headings
// survive. The item id is the page id, the version the latest revision id.
// A wiki that anonymous users may read makes every page public; on a
// private wiki (read right withheld from anonymous users) the connector
// cannot tell who may read what and reports no access list.
//
// A sync without a cursor lists everything and ends with a checkpoint
// holding the server's time; a sync from that cursor reads recent changes
// since then and upserts edited, created, moved, restored and imported
// pages, and deletes deleted pages and pages moved out of the namespaces
// or turned into redirects. A cursor older than 30 days, or written for
// other namespaces, leads to a full listing again.
//
// # Credentials
//
// Confluence Cloud: username (e-mail) and apiToken (API token), basic
// authentication. Confluence Data Center: username and password, or a
// personal access token in apiToken alone. MediaWiki: a bot password
// (username User@appid, apiToken its password), or an OAuth 2 access token
// in apiToken alone. Credentials are sent only to the configured host; no
// error or log line contains them.
package docsuite
