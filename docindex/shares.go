package docindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/store"
)

// ShareInput is the body of a share create.
type ShareInput struct {
	Type          string `json:"type"`
	Target        string `json:"target"`
	TargetDisplay string `json:"targetDisplay"`
	Role          string `json:"role"`
}

var (
	errNotOwner      = Errorf(ErrForbidden, "Forbidden: only the collection owner manages shares")
	errShareNotFound = Errorf(ErrNotFound, "Not found")
)

// CreateShare shares a collection; the owner only. Roles: viewer, admin.
func (s *Service) CreateShare(ctx context.Context, p *access.Principal, collectionID uuid.UUID, in ShareInput) (*store.Share, error) {
	sh, err := validShare(in)
	if err != nil {
		return nil, err
	}
	if !p.CanWrite() {
		return nil, errKeyReadOnly
	}
	_, role, err := s.collectionRole(ctx, s.db, p, collectionID)
	if err != nil {
		return nil, err
	}
	if role != access.Owner {
		return nil, errNotOwner
	}
	sh.CollectionID = collectionID
	_, err = s.db.NewInsert().Model(sh).
		On("CONFLICT (collection_id, type, lower(target)) DO NOTHING").Returning("*").Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("create share: %w", err)
	}
	if sh.ID == uuid.Nil {
		return nil, Errorf(ErrConflict, "Already exists: a share for this target exists")
	}
	return sh, nil
}

func validShare(in ShareInput) (*store.Share, error) {
	if err := oneOf("type", in.Type, "user", "directory_group", "public"); err != nil {
		return nil, err
	}
	if err := validRole(in.Role); err != nil {
		return nil, err
	}
	target := strings.TrimSpace(in.Target)
	switch in.Type {
	case "public":
		target = ""
	case "user":
		if target == "" {
			return nil, invalid("target is required for a user share")
		}
		if !strings.Contains(target, "@") {
			return nil, invalid("target of a user share must be an e-mail address")
		}
	case "directory_group":
		if target == "" {
			return nil, invalid("target is required for a directory_group share")
		}
	}
	display := strings.TrimSpace(in.TargetDisplay)
	if display == "" {
		display = target
		if in.Type == "public" {
			display = "Everyone"
		}
	}
	return &store.Share{Type: in.Type, Target: target, TargetDisplay: display, Role: in.Role}, nil
}

func validRole(role string) error { return oneOf("role", role, "viewer", "admin") }

// UpdateShare changes a share's role; the owner only.
func (s *Service) UpdateShare(ctx context.Context, p *access.Principal, collectionID, shareID uuid.UUID, role string) (*store.Share, error) {
	if err := validRole(role); err != nil {
		return nil, err
	}
	if !p.CanWrite() {
		return nil, errKeyReadOnly
	}
	_, r, err := s.collectionRole(ctx, s.db, p, collectionID)
	if err != nil {
		return nil, err
	}
	if r != access.Owner {
		return nil, errNotOwner
	}
	sh := &store.Share{}
	err = s.db.NewUpdate().Model(sh).Set("role = ?", role).
		Where("id = ? AND collection_id = ?", shareID, collectionID).Returning("*").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errShareNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("update share: %w", err)
	}
	return sh, nil
}

// ListShares lists a collection's shares to its owner and admins.
func (s *Service) ListShares(ctx context.Context, p *access.Principal, collectionID uuid.UUID) ([]store.Share, error) {
	_, role, err := s.collectionRole(ctx, s.db, p, collectionID)
	if err != nil {
		return nil, err
	}
	if role == access.None {
		return nil, errAccessDenied
	}
	if !role.AtLeast(access.Admin) {
		return nil, Errorf(ErrForbidden, "Forbidden: only the owner and collection admins see shares")
	}
	shares := []store.Share{}
	if err := s.db.NewSelect().Model(&shares).Where("collection_id = ?", collectionID).
		OrderExpr("created_at, id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list shares: %w", err)
	}
	return shares, nil
}

// DeleteShare removes a share; the owner only.
func (s *Service) DeleteShare(ctx context.Context, p *access.Principal, collectionID, shareID uuid.UUID) error {
	if !p.CanWrite() {
		return errKeyReadOnly
	}
	_, r, err := s.collectionRole(ctx, s.db, p, collectionID)
	if err != nil {
		return err
	}
	if r != access.Owner {
		return errNotOwner
	}
	res, err := s.db.NewDelete().Model((*store.Share)(nil)).
		Where("id = ? AND collection_id = ?", shareID, collectionID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete share: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errShareNotFound
	}
	return nil
}
