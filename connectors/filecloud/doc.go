// Package filecloud is the docindex source connector for files in the
// cloud: a folder of a WebDAV server (Nextcloud, ownCloud, SharePoint and
// others) or the objects of an S3-compatible bucket below a prefix.
//
// Every sync is a complete listing (a Snapshot): WebDAV is walked with one
// PROPFIND of depth 1 per folder, S3 with a flat ListObjectsV2. An item's ID
// is its path relative to the root (WebDAV) or prefix (S3), with '/'
// between folders; its Version is the server's ETag, or size and
// modification time where a server gives no ETag. The content type comes
// from the server, or from the file extension where the server's is missing
// or generic. Fetch streams the file.
//
// Include and exclude globs follow .gitignore: '*' and '?' stay within a
// path segment and '**' spans segments; a pattern without '/' matches a name
// at any depth ("*.pdf", "drafts"), a pattern with '/' matches from the root
// ("reports/**/*.md"); a pattern that matches a folder covers everything
// below it. With include patterns, a file is listed only if one of them
// covers it; exclude patterns then remove files, and excluded folders are
// not listed at all.
//
// Secrets (password, secretAccessKey) never appear in errors or logs:
// URLs with credentials are refused by Validate, and messages are scrubbed
// of the secrets before they leave the connector.
package filecloud
