// Package access decides who may do what: the caller's identity (Principal), the role it holds on a
// collection (owner, admin, viewer) and the permission table of the interface's part 5.
//
// Role resolution: the owner is owner; a global admin acts as admin on every collection; otherwise
// the highest role among the caller's user share (e-mail, case-insensitive), its directory-group
// shares and public shares; a collection with visibility "public" makes every caller at least a
// viewer. The same rules exist once in Go (Resolve) and once in SQL (RoleSQL) so lists can filter
// in the database; tests hold the two together.
package access
