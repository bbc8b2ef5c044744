package docindex

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/auth"
	"github.com/docindex/docindex/docindex/store"
)

var errAdminRequired = Errorf(ErrForbidden, "Admin access required")

// NewAPIKey is the answer to a key creation: the raw key appears only here.
type NewAPIKey struct {
	ID          uuid.UUID `json:"id"`
	Key         string    `json:"key"`
	ClientName  string    `json:"clientName"`
	Permissions []string  `json:"permissions"`
}

// APIKeyItem is a key as listed to administrators.
type APIKeyItem struct {
	ID          uuid.UUID  `json:"id"`
	UserID      uuid.UUID  `json:"userId"`
	UserEmail   string     `json:"userEmail"`
	ClientName  string     `json:"clientName"`
	Permissions []string   `json:"permissions"`
	CreatedAt   time.Time  `json:"createdAt"`
	LastUsedAt  *time.Time `json:"lastUsedAt"`
	Revoked     bool       `json:"revoked"`
}

// CreateAPIKey creates a key for the calling administrator.
func (s *Service) CreateAPIKey(ctx context.Context, p *access.Principal, clientName string, perms []string) (*NewAPIKey, error) {
	if !p.IsAdmin() {
		return nil, errAdminRequired
	}
	return s.IssueAPIKey(ctx, p.UserID, clientName, perms)
}

// IssueAPIKey creates a key for a user without a permission check: for the CLI and for host
// applications that manage keys themselves.
func (s *Service) IssueAPIKey(ctx context.Context, userID uuid.UUID, clientName string, perms []string) (*NewAPIKey, error) {
	clientName = strings.TrimSpace(clientName)
	if clientName == "" {
		return nil, invalid("clientName is required")
	}
	if len(clientName) > 200 {
		return nil, invalid("clientName is longer than 200 characters")
	}
	if perms == nil {
		perms = []string{access.PermRead}
	}
	if len(perms) == 0 {
		return nil, invalid("permissions must not be empty")
	}
	clean := make([]string, 0, len(perms))
	for _, pm := range perms {
		if !slices.Contains(access.Permissions, pm) {
			return nil, invalid("unknown permission %q (valid: read, write, admin)", pm)
		}
		if !slices.Contains(clean, pm) {
			clean = append(clean, pm)
		}
	}
	raw, hash, err := auth.NewKey()
	if err != nil {
		return nil, err
	}
	k := &store.APIKey{UserID: userID, ClientName: clientName, KeyHash: hash, Permissions: clean}
	if _, err := s.db.NewInsert().Model(k).Returning("id, created_at").Exec(ctx); err != nil {
		return nil, fmt.Errorf("create api key: %w", err)
	}
	return &NewAPIKey{ID: k.ID, Key: raw, ClientName: clientName, Permissions: clean}, nil
}

// ListAPIKeys lists every key, newest first; revoked ones only when asked.
func (s *Service) ListAPIKeys(ctx context.Context, p *access.Principal, includeRevoked bool) ([]APIKeyItem, error) {
	if !p.IsAdmin() {
		return nil, errAdminRequired
	}
	var keys []store.APIKey
	q := s.db.NewSelect().Model(&keys).Relation("User").OrderExpr("k.created_at DESC, k.id")
	if !includeRevoked {
		q = q.Where("k.revoked_at IS NULL")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	out := make([]APIKeyItem, len(keys))
	for i, k := range keys {
		out[i] = APIKeyItem{ID: k.ID, UserID: k.UserID, UserEmail: k.User.Email, ClientName: k.ClientName,
			Permissions: k.Permissions, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, Revoked: k.RevokedAt != nil}
	}
	return out, nil
}

// RevokeAPIKey revokes a key; it is refused from the next request on.
func (s *Service) RevokeAPIKey(ctx context.Context, p *access.Principal, id uuid.UUID) error {
	if !p.IsAdmin() {
		return errAdminRequired
	}
	res, err := s.db.NewUpdate().Model((*store.APIKey)(nil)).
		Set("revoked_at = now()").Where("id = ?", id).Where("revoked_at IS NULL").Exec(ctx)
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		exists, err := s.db.NewSelect().Model((*store.APIKey)(nil)).Where("id = ?", id).Exists(ctx)
		if err != nil {
			return fmt.Errorf("revoke api key: %w", err)
		}
		if !exists {
			return Errorf(ErrNotFound, "API key not found")
		}
	}
	return nil
}
