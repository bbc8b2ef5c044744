// Package connector is the SDK for source connectors: the Connector interface
// a connector implements, Serve for its one-line main, the host-side client
// that implements the same interface across the process boundary, and
// helpers for configuration (decoding, validation problems, secret fields).
//
// A connector binary is named docindex-connector-<type> and looks like
//
//	func main() { connector.Serve(rss.New()) }
//
// # The contract
//
// A connector is stateless: the source's configuration (a JSON object whose
// JSON Schema Describe returns) comes with every call, and the only memory
// between syncs is the cursor the connector hands back in checkpoints.
//
// Sync enumerates the source as a stream of events:
//
//   - Upsert(item): the item exists with this metadata. Item.Version changes
//     whenever the content changes; the host skips items whose version it
//     already holds and fetches the others with Fetch (or takes Item.Inline).
//   - Delete(id): the item is gone.
//   - Checkpoint(cursor): everything before this event is complete; a later
//     sync may resume from cursor. The host stores a cursor only after it has
//     handled every event before it, so a connector may send one as often as
//     it likes (after each page of an API listing, say).
//   - Snapshot(): sent first, it says that this run lists every item of the
//     source; once the run ends without error, the host deletes the items it
//     holds that the run did not upsert. Without it, the host deletes only on
//     Delete events. Forgetting it leaves stale items; it never loses any.
//
// With an empty cursor a connector lists everything. A connector with the
// incremental capability may, given a cursor, send only what changed since.
//
// Fetch streams one item's content. Errors wrap the errors of package plugins
// (plugins.ErrNotFound for an item that disappeared, plugins.ErrUnauthenticated
// for rejected credentials, ErrInvalidConfig for a bad configuration) so the
// host can tell them apart.
//
// Test a connector with plugintest.RunConnectorSuite.
package connector
