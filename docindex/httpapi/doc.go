// Package httpapi is the HTTP module of docindex: Mount registers the interface's endpoints on a
// bunrouter group, so a host application can serve them next to its own routes.
//
// Handlers decode the wire shapes of the interface (dto.go), call the Service and encode the
// answer. One middleware authenticates the bearer token; one maps errors to status codes and
// {"error": "..."} bodies: invalid input 400, unauthenticated 401, forbidden 403, not found 404,
// conflict 409, too large 413, anything else 500 (logged, never shown to the caller).
package httpapi
