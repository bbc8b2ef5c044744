package docindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/auth"
	"github.com/docindex/docindex/docindex/store"
)

var errUnauthorized = Errorf(ErrUnauthorized, "Unauthorized")

// Authenticate turns a bearer token into the caller: an API key is looked up by its hash on every
// request (so a revoked key fails at once); any other token goes to the configured verifier and
// its user is created or updated on first sight.
func (s *Service) Authenticate(ctx context.Context, token string) (*access.Principal, error) {
	if token == "" {
		return nil, errUnauthorized
	}
	if auth.IsKey(token) {
		return s.authenticateKey(ctx, token)
	}
	if s.verifier == nil {
		return nil, errUnauthorized
	}
	claims, err := s.verifier.Verify(ctx, token)
	if err != nil {
		s.log.DebugContext(ctx, "token rejected", "err", err)
		return nil, errUnauthorized
	}
	u, err := s.upsertUser(ctx, claims)
	if err != nil {
		return nil, err
	}
	return &access.Principal{
		UserID: u.ID, Email: u.Email, Name: u.Name,
		Groups: claims.Groups, GlobalAdmin: slices.Contains(claims.Roles, auth.AdminRole),
	}, nil
}

func (s *Service) authenticateKey(ctx context.Context, token string) (*access.Principal, error) {
	var k store.APIKey
	err := s.db.NewSelect().Model(&k).Relation("User").
		Where("k.key_hash = ?", auth.HashKey(token)).Where("k.revoked_at IS NULL").
		Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, fmt.Errorf("look up api key: %w", err)
	}
	s.touchKey(ctx, k.ID)
	return &access.Principal{
		UserID: k.User.ID, Email: k.User.Email, Name: k.User.Name,
		GlobalAdmin: k.User.IsAdmin,
		KeyID:       uuid.NullUUID{UUID: k.ID, Valid: true}, Perms: k.Permissions,
	}, nil
}

// touchKey records lastUsedAt at most once a minute per key and process.
func (s *Service) touchKey(ctx context.Context, id uuid.UUID) {
	now := time.Now()
	s.lastUsedMu.Lock()
	if t, ok := s.lastUsed[id]; ok && now.Sub(t) < time.Minute {
		s.lastUsedMu.Unlock()
		return
	}
	s.lastUsed[id] = now
	s.lastUsedMu.Unlock()
	_, err := s.db.NewUpdate().Model((*store.APIKey)(nil)).
		Set("last_used_at = now()").Where("id = ?", id).Exec(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "record api key use", "err", err)
	}
}

// upsertUser creates or refreshes the user of a verified token. Users are keyed by e-mail
// (case-insensitive), the identity shares refer to; the roles claim decides global admin. This
// runs on every JWT request, so the common case, a known user whose claims did not change, is
// one read and no write.
func (s *Service) upsertUser(ctx context.Context, c *auth.Claims) (*store.User, error) {
	email := strings.TrimSpace(c.Email)
	admin := slices.Contains(c.Roles, auth.AdminRole)
	u := &store.User{}
	err := s.db.NewSelect().Model(u).Where("lower(email) = lower(?)", email).Scan(ctx)
	if err == nil && u.Subject != nil && *u.Subject == c.Subject && u.Name == c.Name && u.IsAdmin == admin {
		return u, nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("upsert user: %w", err)
	}
	u = &store.User{Email: email, Subject: &c.Subject, Name: c.Name, IsAdmin: admin}
	_, err = s.db.NewInsert().Model(u).
		On("CONFLICT (lower(email)) DO UPDATE").
		Set("subject = EXCLUDED.subject, name = EXCLUDED.name, is_admin = EXCLUDED.is_admin, updated_at = now()").
		Returning("*").Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("upsert user: %w", err)
	}
	return u, nil
}

// EnsureUser returns the user with this e-mail, created when missing; admin, when true, makes it
// a global admin. It serves the CLI's `apikey create`.
func (s *Service) EnsureUser(ctx context.Context, email, name string, admin bool) (*store.User, error) {
	email = strings.TrimSpace(email)
	if !strings.Contains(email, "@") {
		return nil, invalid("invalid e-mail address %q", email)
	}
	u := &store.User{Email: email, Name: name, IsAdmin: admin}
	_, err := s.db.NewInsert().Model(u).
		On("CONFLICT (lower(email)) DO UPDATE").
		Set("is_admin = u.is_admin OR EXCLUDED.is_admin, name = CASE WHEN EXCLUDED.name = '' THEN u.name ELSE EXCLUDED.name END, updated_at = now()").
		Returning("*").Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("ensure user: %w", err)
	}
	return u, nil
}
