package access

import (
	"slices"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Role on a collection. The empty role means no access.
type Role string

const (
	None   Role = ""
	Viewer Role = "viewer"
	Admin  Role = "admin"
	Owner  Role = "owner"
)

func (r Role) rank() int {
	switch r {
	case Viewer:
		return 1
	case Admin:
		return 2
	case Owner:
		return 3
	}
	return 0
}

// AtLeast reports whether r grants at least the rights of min.
func (r Role) AtLeast(min Role) bool { return r.rank() >= min.rank() }

// Key permissions. A JWT carries all of them; an API key only those it was created with.
const (
	PermRead  = "read"
	PermWrite = "write"
	PermAdmin = "admin"
)

// Permissions lists every valid key permission.
var Permissions = []string{PermRead, PermWrite, PermAdmin}

// Principal is the authenticated caller.
type Principal struct {
	UserID uuid.UUID
	Email  string
	Name   string
	Groups []string
	// GlobalAdmin: roles claim contains "admin" (JWT), or the key's user is an administrator.
	GlobalAdmin bool
	// KeyID is set when the caller used an API key; Perms then limits what it may do.
	KeyID uuid.NullUUID
	Perms []string
}

func (p *Principal) has(perm string) bool {
	if !p.KeyID.Valid {
		return true
	}
	return slices.Contains(p.Perms, perm)
}

// CanRead: any key permission allows reads.
func (p *Principal) CanRead() bool { return !p.KeyID.Valid || len(p.Perms) > 0 }

// CanWrite: mutations need the write permission on a key (a JWT always has it).
func (p *Principal) CanWrite() bool { return p.has(PermWrite) }

// IsAdmin: the administrator endpoints need a global admin, and on a key the admin permission.
func (p *Principal) IsAdmin() bool { return p.GlobalAdmin && p.has(PermAdmin) }

// ShareGrant is what Resolve needs to know of one share.
type ShareGrant struct {
	Type   string
	Target string
	Role   Role
}

// Resolve computes the caller's role on a collection from its owner, visibility and shares.
func Resolve(p *Principal, ownerID uuid.UUID, visibility string, shares []ShareGrant) Role {
	if p.UserID == ownerID {
		return Owner
	}
	if p.GlobalAdmin {
		return Admin
	}
	best := None
	if visibility == "public" {
		best = Viewer
	}
	for _, s := range shares {
		if s.Role.rank() <= best.rank() || !p.matches(s) {
			continue
		}
		best = s.Role
	}
	return best
}

func (p *Principal) matches(s ShareGrant) bool {
	switch s.Type {
	case "public":
		return true
	case "user":
		return equalFold(s.Target, p.Email)
	case "directory_group":
		return slices.Contains(p.Groups, s.Target)
	}
	return false
}

// RoleSQL is an SQL expression, for a collection aliased c, that evaluates to the caller's role
// ('owner', 'admin', 'viewer') or NULL: Resolve in SQL, so lists filter in the database.
func RoleSQL(p *Principal) (string, []any) {
	groups := p.Groups
	if groups == nil {
		groups = []string{}
	}
	return `(CASE
	WHEN c.owner_id = ? THEN 'owner'
	WHEN ? THEN 'admin'
	ELSE COALESCE(
		(SELECT CASE WHEN bool_or(s.role = 'admin') THEN 'admin' WHEN count(*) > 0 THEN 'viewer' END
		 FROM docindex.shares s
		 WHERE s.collection_id = c.id AND (s.type = 'public'
		   OR (s.type = 'user' AND lower(s.target) = lower(?))
		   OR (s.type = 'directory_group' AND s.target = ANY(?)))),
		CASE WHEN c.visibility = 'public' THEN 'viewer' END)
	END)`, []any{p.UserID, p.GlobalAdmin, p.Email, pgdialect.Array(groups)}
}
