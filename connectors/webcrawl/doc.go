// Package webcrawl is the docindex connector of source type "webcrawl": it
// crawls web sites and lists their HTML pages as items.
//
// # What a sync does
//
// The crawl starts at the configured start URLs and at the pages listed by
// the configured sitemaps (sitemap indexes are followed; gzipped sitemaps
// and any XML encoding are read), all at depth 0, and follows <a href> and
// <area href> links breadth first up to maxDepth links away, requesting at
// most maxPages pages. With sameHost (the default) it stays on the hosts
// of the start and sitemap URLs; redirects that leave them are not
// followed. Links to files that are never HTML (images, style sheets,
// archives, PDFs) are not requested, and only HTML responses become items.
//
// exclude patterns keep URLs from being requested at all. include patterns,
// when set, decide which pages are listed; pages that do not match are still
// crawled for their links, so a crawl can start at a home page and list only
// /docs/. Both are Go regular expressions matched against the absolute URL.
//
// With respectRobots (the default) robots.txt is read once per host and
// crawl and its rules for the user agent are honoured, Crawl-delay included
// (capped at a minute); so are robots meta tags and X-Robots-Tag headers
// (noindex: not listed; nofollow: links not followed). Requests to one host
// are spaced by 1/requestsPerSecond across every sync and fetch of the
// connector, and a sync has at most two requests in flight (WithConcurrency).
// Answers 429 and 503 are retried twice after their Retry-After.
//
// # Items
//
// An item's ID is the page's canonical URL: its <link rel="canonical">
// when that is within the crawl's scope, else the URL it was served from
// after redirects. Two URLs with one canonical URL are one item. The
// Version is the ETag ("etag:..."), else the Last-Modified time
// ("modified:..."), else the SHA-256 of the page ("sha256:..."). Metadata
// holds url (the canonical URL), fetchUrl (where the content is fetched),
// title, description and language; Fetch streams fetchUrl.
//
// Every sync is a full listing (a Snapshot). Its closing checkpoint carries
// the validators and links of the pages seen; given that cursor back, the
// next crawl sends conditional requests (If-None-Match, If-Modified-Since)
// and reuses what a 304 answer confirms. The connector is therefore not
// "incremental": a cursor saves downloads, never changes the listing.
//
// A page that cannot be crawled (a 5xx answer, a timeout, an unreadable
// robots.txt), a start URL that lists nothing (404, disallowed, off-site
// redirect, not HTML) or a sitemap that cannot be read makes the sync end
// with a *CrawlError after every other page was listed, so that the host
// keeps the items the crawl could not confirm instead of deleting them. A
// linked page that answers 404 or 410 is simply not listed: its item goes.
//
// # Private networks
//
// Unless a source sets allowPrivateNetworks, the crawler refuses to connect
// to private, loopback, link-local and other non-public addresses. The
// check runs in the dialer, on the address DNS resolved, for every
// connection, so a host name pointing at 127.0.0.1 and a redirect to an
// internal address are refused like a literal one, with a
// *PrivateAddressError that says how to allow it. Validate refuses literal
// private addresses early. No proxy from the environment is used: the
// check has to see the real destination. WithAllowedNetworks opens chosen
// networks for every source.
//
// The plugin binary is cmd/docindex-connector-webcrawl.
package webcrawl
