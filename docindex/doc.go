// Package docindex keeps documents and tables in collections and indexes them for retrieval.
//
// A Service is built from a *bun.DB (PostgreSQL with pgvector) and options; its methods are the
// operations of the HTTP interface, each taking the caller (an *access.Principal) and enforcing
// the permission rules. The HTTP module (package httpapi) mounts them on a bunrouter group, so a
// host application can serve docindex next to its own routes, or call the Service directly.
//
//	db, _ := docindex.OpenDB(ctx, url)
//	_ = docindex.Migrate(ctx, db)
//	svc, _ := docindex.New(db, docindex.WithJWTSecret(secret))
//	httpapi.Mount(router.NewGroup(""), svc)
//
// Errors returned by Service methods are *Error values whose Kind (ErrInvalid, ErrNotFound, ...)
// decides the HTTP status.
package docindex
