package docindex

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/store"
	"github.com/docindex/docindex/plugins/connector"
)

// Connectors gives the service the source connectors it may use; *pluginhost.Host fits through a
// small adapter that lists its connector types.
type Connectors interface {
	Connector(typ string) (connector.Connector, bool)
	ConnectorTypes() []string
}

// WithConnectors sets the source connectors.
func WithConnectors(c Connectors) Option { return func(s *Service) { s.connectors = c } }

// WithSecretKey sets the key that seals secret source settings at rest (DOCINDEX_SECRET_KEY).
// Without one, sources whose configuration holds a secret are refused.
func WithSecretKey(key string) Option { return func(s *Service) { s.secretKey = key } }

// SourceTypes are the types the interface names. A connector plugin of another type (a
// third-party one) extends them while it is loaded.
var SourceTypes = []string{"webcrawl", "docsuite", "filecloud", "git"}

// checkType accepts the interface's source types and the types of loaded connectors.
func (s *Service) checkType(typ string) error {
	if slices.Contains(SourceTypes, typ) {
		return nil
	}
	if s.connectors != nil && slices.Contains(s.connectors.ConnectorTypes(), typ) {
		return nil
	}
	return invalid("Invalid request: type must be one of %s or the type of a loaded connector plugin (got %q)",
		strings.Join(SourceTypes, ", "), typ)
}

// Mask replaces secret values in every response.
const Mask = "********"

var (
	errSourceNotFound = Errorf(ErrNotFound, "Source not found")
	schedules         = []string{"hourly", "daily", "weekly"}
)

// SourceInput is the body of a source create.
type SourceInput struct {
	Name         string          `json:"name"`
	Type         string          `json:"type"`
	Config       json.RawMessage `json:"config"`
	Enabled      *bool           `json:"enabled"`
	SyncSchedule *string         `json:"syncSchedule"`
	CollectionID *string         `json:"collectionId"`
}

// SourceUpdate is the body of a source update. SyncSchedule: absent or null leaves it, "" clears
// it; CollectionID: absent leaves it, null detaches the source.
type SourceUpdate struct {
	Name         *string          `json:"name"`
	Config       json.RawMessage  `json:"config"`
	Enabled      *bool            `json:"enabled"`
	SyncSchedule *string          `json:"syncSchedule"`
	CollectionID Optional[string] `json:"collectionId"`
}

// Optional tells an absent JSON field from an explicit null.
type Optional[T any] struct {
	Set   bool
	Value *T
}

// UnmarshalJSON records that the field was present.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Value = nil
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	o.Value = &v
	return nil
}

// connectorFor returns the connector of a source type and its description.
func (s *Service) connectorFor(ctx context.Context, typ string) (connector.Connector, connector.Description, error) {
	if s.connectors == nil {
		return nil, connector.Description{}, invalid("no connector for source type %q is installed", typ)
	}
	c, ok := s.connectors.Connector(typ)
	if !ok {
		return nil, connector.Description{}, invalid("no connector for source type %q is installed", typ)
	}
	d, err := c.Describe(ctx)
	if err != nil {
		return nil, connector.Description{}, fmt.Errorf("describe connector %s: %w", typ, err)
	}
	return c, d, nil
}

// SourceType is a loaded connector as GET /api/source-types shows it.
type SourceType struct {
	Type         string          `json:"type"`
	Version      string          `json:"version"`
	DisplayName  string          `json:"displayName"`
	Description  string          `json:"description"`
	Capabilities []string        `json:"capabilities"`
	ConfigSchema json.RawMessage `json:"configSchema"`
}

// SourceTypesAvailable describes every loaded connector.
func (s *Service) SourceTypesAvailable(ctx context.Context) ([]SourceType, error) {
	out := []SourceType{}
	if s.connectors == nil {
		return out, nil
	}
	types := s.connectors.ConnectorTypes()
	sort.Strings(types)
	for _, t := range types {
		_, d, err := s.connectorFor(ctx, t)
		if err != nil {
			return nil, err
		}
		caps := make([]string, len(d.Capabilities))
		for i, c := range d.Capabilities {
			caps[i] = string(c)
		}
		out = append(out, SourceType{Type: d.Type, Version: d.Version, DisplayName: d.DisplayName,
			Description: d.Description, Capabilities: caps, ConfigSchema: d.ConfigSchema})
	}
	return out, nil
}

// splitSecrets separates the secret fields (per the connector's schema) from the rest.
func splitSecrets(schema, config json.RawMessage) (public map[string]any, secrets map[string]any, err error) {
	fields, err := connector.SecretFields(schema)
	if err != nil {
		return nil, nil, fmt.Errorf("secret fields: %w", err)
	}
	public = map[string]any{}
	if len(config) > 0 && string(config) != "null" {
		if err := json.Unmarshal(config, &public); err != nil || public == nil {
			return nil, nil, invalid("config must be a JSON object")
		}
	}
	secrets = map[string]any{}
	for _, f := range fields {
		// Secret fields are top-level keys (JSON pointers "/name"); nested ones are not used by
		// the first-party connectors.
		key := strings.TrimPrefix(f, "/")
		if v, ok := public[key]; ok {
			delete(public, key)
			// null or "" means no secret (that is how an update removes one): storing it would
			// show a mask for a value that is not there.
			if v != nil && v != "" {
				secrets[key] = v
			}
		}
	}
	return public, secrets, nil
}

// sealSecrets encrypts the secret part of a source's config, bound to the source id.
func (s *Service) sealSecrets(id uuid.UUID, secrets map[string]any) ([]byte, error) {
	if len(secrets) == 0 {
		return nil, nil
	}
	if s.box == nil {
		return nil, Errorf(ErrInvalid, "this server has no secret key (DOCINDEX_SECRET_KEY), so it cannot store secret settings")
	}
	raw, err := json.Marshal(secrets)
	if err != nil {
		return nil, err
	}
	sealed, err := s.box.Seal(raw, id[:])
	if err != nil {
		return nil, Errorf(ErrInvalid, "cannot store secret settings: %v", err)
	}
	return sealed, nil
}

// openConfig returns a source's whole config, secrets included, for a connector call.
func (s *Service) openConfig(src *store.Source) (json.RawMessage, error) {
	cfg := map[string]any{}
	if err := json.Unmarshal(src.Config, &cfg); err != nil {
		return nil, fmt.Errorf("source config: %w", err)
	}
	if len(src.Secrets) > 0 {
		if s.box == nil {
			return nil, errors.New("source has secret settings but the server has no secret key")
		}
		plain, err := s.box.Open(src.Secrets, src.ID[:])
		if err != nil {
			return nil, err
		}
		var sec map[string]any
		if err := json.Unmarshal(plain, &sec); err != nil {
			return nil, fmt.Errorf("source secrets: %w", err)
		}
		for k, v := range sec {
			cfg[k] = v
		}
	}
	return json.Marshal(cfg)
}

// maskedConfig is the config as responses show it: secret fields present as Mask.
func (s *Service) maskedConfig(src *store.Source) json.RawMessage {
	cfg := map[string]any{}
	_ = json.Unmarshal(src.Config, &cfg)
	if len(src.Secrets) > 0 && s.box != nil {
		if plain, err := s.box.Open(src.Secrets, src.ID[:]); err == nil {
			var sec map[string]any
			if json.Unmarshal(plain, &sec) == nil {
				for k := range sec {
					cfg[k] = Mask
				}
			}
		}
	}
	raw, _ := json.Marshal(cfg)
	return raw
}

// SourceView is a source as responses show it (config masked).
type SourceView struct {
	*store.Source
	MaskedConfig json.RawMessage
}

func (s *Service) view(src *store.Source) *SourceView {
	return &SourceView{Source: src, MaskedConfig: s.maskedConfig(src)}
}

// validateConfig checks a full configuration against the connector's JSON Schema, then with the
// connector's own Validate.
func (s *Service) validateConfig(ctx context.Context, c connector.Connector, d connector.Description, cfg json.RawMessage) error {
	if err := checkSchema(d.ConfigSchema, cfg); err != nil {
		return invalid("invalid config: %v", err)
	}
	if err := c.Validate(ctx, cfg); err != nil {
		var ve *connector.ValidationError
		if errors.As(err, &ve) || errors.Is(err, connector.ErrInvalidConfig) {
			return invalid("invalid config: %v", err)
		}
		return fmt.Errorf("validate config: %w", err)
	}
	return nil
}

// attachable checks that the caller may feed a collection: owner or admin of it.
func (s *Service) attachable(ctx context.Context, db bun.IDB, p *access.Principal, raw string) (uuid.NullUUID, error) {
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.NullUUID{}, invalid("collectionId is not a valid id")
	}
	c, role, err := s.collectionRole(ctx, db, p, id)
	if err != nil {
		return uuid.NullUUID{}, err
	}
	if !role.AtLeast(access.Admin) {
		return uuid.NullUUID{}, errCollectionNotFound
	}
	if c.Type != "rag" {
		return uuid.NullUUID{}, invalid("sources feed rag collections")
	}
	return uuid.NullUUID{UUID: id, Valid: true}, nil
}

func checkSchedule(d connector.Description, typ string, sched *string) error {
	if sched == nil || *sched == "" {
		return nil
	}
	if err := oneOf("syncSchedule", *sched, schedules...); err != nil {
		return err
	}
	if typ == "docsuite" || !d.Has(connector.CapSchedule) {
		return invalid("Invalid request: %s sources sync on demand and by change notifications, not on a schedule", typ)
	}
	return nil
}

// CreateSource creates a data source owned by the caller. Its config is validated by the
// connector before it is stored; secret fields are sealed.
func (s *Service) CreateSource(ctx context.Context, p *access.Principal, in SourceInput) (*SourceView, error) {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		return nil, invalid("Invalid request: name is required")
	}
	if err := s.checkType(in.Type); err != nil {
		return nil, err
	}
	if in.Type == "docsuite" && in.SyncSchedule != nil && *in.SyncSchedule != "" {
		return nil, invalid("Invalid request: docsuite sources do not take a syncSchedule")
	}
	if !p.CanWrite() {
		return nil, errKeyReadOnly
	}
	c, d, err := s.connectorFor(ctx, in.Type)
	if err != nil {
		return nil, err
	}
	if err := checkSchedule(d, in.Type, in.SyncSchedule); err != nil {
		return nil, err
	}
	if len(in.Config) == 0 {
		in.Config = json.RawMessage("{}")
	}
	if err := s.validateConfig(ctx, c, d, in.Config); err != nil {
		return nil, err
	}
	public, secrets, err := splitSecrets(d.ConfigSchema, in.Config)
	if err != nil {
		return nil, err
	}
	src := &store.Source{ID: uuid.New(), Name: in.Name, SourceType: in.Type, Enabled: true,
		CreatedBy: uuid.NullUUID{UUID: p.UserID, Valid: true}}
	if in.Enabled != nil {
		src.Enabled = *in.Enabled
	}
	if in.SyncSchedule != nil && *in.SyncSchedule != "" {
		src.SyncSchedule = in.SyncSchedule
	}
	if src.Config, err = json.Marshal(public); err != nil {
		return nil, err
	}
	if src.Secrets, err = s.sealSecrets(src.ID, secrets); err != nil {
		return nil, err
	}
	if in.CollectionID != nil && *in.CollectionID != "" {
		if src.CollectionID, err = s.attachable(ctx, s.db, p, *in.CollectionID); err != nil {
			return nil, err
		}
	}
	if _, err := s.db.NewInsert().Model(src).Returning("*").Exec(ctx); err != nil {
		return nil, fmt.Errorf("create source: %w", err)
	}
	return s.view(src), nil
}

// sourceVisibleSQL: sources the caller created, or that feed a collection the caller can see.
func sourceVisibleSQL(p *access.Principal) (string, []any) {
	expr, args := access.RoleSQL(p)
	return `(src.created_by = ? OR ? OR EXISTS (SELECT 1 FROM docindex.collections c
		WHERE c.id = src.collection_id AND ` + expr + ` IS NOT NULL))`, append([]any{p.UserID, p.GlobalAdmin}, args...)
}

// ListSources lists the sources the caller may see, optionally of one type.
func (s *Service) ListSources(ctx context.Context, p *access.Principal, typ string) ([]*SourceView, error) {
	if typ != "" {
		if err := s.checkType(typ); err != nil {
			return nil, err
		}
	}
	vis, args := sourceVisibleSQL(p)
	var rows []store.Source
	q := s.db.NewSelect().Model(&rows).ColumnExpr("src.*").
		ColumnExpr("EXISTS (SELECT 1 FROM docindex.sync_runs r WHERE r.source_id = src.id AND r.status = 'running') AS sync_in_progress").
		ColumnExpr("(SELECT u.email FROM docindex.users u WHERE u.id = src.created_by) AS created_by_email").
		Where(vis, args...).OrderExpr("src.created_at DESC, src.id")
	if typ != "" {
		q = q.Where("src.source_type = ?", typ)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	out := make([]*SourceView, len(rows))
	for i := range rows {
		out[i] = s.view(&rows[i])
	}
	return out, nil
}

// sourceAccess loads a source and says whether the caller may see it and change it (creator,
// owner or admin of its collection, global admin).
func (s *Service) sourceAccess(ctx context.Context, db bun.IDB, p *access.Principal, id uuid.UUID) (*store.Source, bool, bool, error) {
	src := &store.Source{}
	err := db.NewSelect().Model(src).ColumnExpr("src.*").
		ColumnExpr("EXISTS (SELECT 1 FROM docindex.sync_runs r WHERE r.source_id = src.id AND r.status = 'running') AS sync_in_progress").
		ColumnExpr("(SELECT u.email FROM docindex.users u WHERE u.id = src.created_by) AS created_by_email").
		Where("src.id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, false, errSourceNotFound
	}
	if err != nil {
		return nil, false, false, fmt.Errorf("load source: %w", err)
	}
	if p.GlobalAdmin || src.CreatedBy.Valid && src.CreatedBy.UUID == p.UserID {
		return src, true, true, nil
	}
	if !src.CollectionID.Valid {
		return src, false, false, nil
	}
	_, role, err := s.collectionRole(ctx, db, p, src.CollectionID.UUID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, false, false, err
	}
	return src, role != access.None, role.AtLeast(access.Admin), nil
}

// GetSource returns a source the caller may see.
func (s *Service) GetSource(ctx context.Context, p *access.Principal, id uuid.UUID) (*SourceView, error) {
	src, see, _, err := s.sourceAccess(ctx, s.db, p, id)
	if err != nil {
		return nil, err
	}
	if !see {
		return nil, errSourceNotFound
	}
	return s.view(src), nil
}

// UpdateSource changes a source. A secret given as Mask (or left out) keeps its stored value.
func (s *Service) UpdateSource(ctx context.Context, p *access.Principal, id uuid.UUID, in SourceUpdate) (*SourceView, error) {
	if in.Name != nil && strings.TrimSpace(*in.Name) == "" {
		return nil, invalid("Invalid request: name must not be empty")
	}
	if in.SyncSchedule != nil && *in.SyncSchedule != "" {
		if err := oneOf("syncSchedule", *in.SyncSchedule, schedules...); err != nil {
			return nil, err
		}
	}
	if !p.CanWrite() {
		return nil, errKeyReadOnly
	}
	var out *store.Source
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		src, see, change, err := s.sourceAccess(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if !see {
			return errSourceNotFound
		}
		if !change {
			return errAccessDenied
		}
		c, d, err := s.connectorFor(ctx, src.SourceType)
		if err != nil {
			return err
		}
		if in.Name != nil {
			src.Name = strings.TrimSpace(*in.Name)
		}
		if in.Enabled != nil {
			src.Enabled = *in.Enabled
		}
		if in.SyncSchedule != nil {
			if err := checkSchedule(d, src.SourceType, in.SyncSchedule); err != nil {
				return err
			}
			if *in.SyncSchedule == "" {
				src.SyncSchedule = nil
			} else {
				src.SyncSchedule = in.SyncSchedule
			}
		}
		if in.CollectionID.Set {
			if in.CollectionID.Value == nil || *in.CollectionID.Value == "" {
				src.CollectionID = uuid.NullUUID{}
			} else if src.CollectionID, err = s.attachable(ctx, tx, p, *in.CollectionID.Value); err != nil {
				return err
			}
		}
		if len(in.Config) > 0 && string(in.Config) != "null" {
			if err := s.mergeConfig(ctx, c, d, src, in.Config); err != nil {
				return err
			}
		}
		_, err = tx.NewUpdate().Model(src).
			Column("name", "enabled", "sync_schedule", "collection_id", "config", "secrets").
			Set("updated_at = now()").WherePK().Returning("*").Exec(ctx)
		if err != nil {
			return fmt.Errorf("update source: %w", err)
		}
		out = src
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.view(out), nil
}

// mergeConfig replaces a source's config; secret fields sent as Mask or left out keep their value.
func (s *Service) mergeConfig(ctx context.Context, c connector.Connector, d connector.Description, src *store.Source, raw json.RawMessage) error {
	next := map[string]any{}
	if err := json.Unmarshal(raw, &next); err != nil || next == nil {
		return invalid("config must be a JSON object")
	}
	old := map[string]any{}
	if cur, err := s.openConfig(src); err == nil {
		_ = json.Unmarshal(cur, &old)
	}
	fields, err := connector.SecretFields(d.ConfigSchema)
	if err != nil {
		return err
	}
	for _, f := range fields {
		key := strings.TrimPrefix(f, "/")
		v, ok := next[key]
		switch {
		case !ok || v == Mask: // kept
			if ov, had := old[key]; had {
				next[key] = ov
			} else {
				delete(next, key)
			}
		case v == nil || v == "": // removed
			delete(next, key)
		}
	}
	merged, _ := json.Marshal(next)
	if err := s.validateConfig(ctx, c, d, merged); err != nil {
		return err
	}
	public, secrets, err := splitSecrets(d.ConfigSchema, merged)
	if err != nil {
		return err
	}
	if src.Config, err = json.Marshal(public); err != nil {
		return err
	}
	src.Secrets, err = s.sealSecrets(src.ID, secrets)
	return err
}

// DeleteSource removes a source; with deleteFiles its files (chunks, blobs) go too, otherwise
// they stay in the collection as plain files.
func (s *Service) DeleteSource(ctx context.Context, p *access.Principal, id uuid.UUID, deleteFiles bool) (int, error) {
	if !p.CanWrite() {
		return 0, errKeyReadOnly
	}
	_, see, change, err := s.sourceAccess(ctx, s.db, p, id)
	if err != nil {
		return 0, err
	}
	if !see {
		return 0, errSourceNotFound
	}
	if !change {
		return 0, errAccessDenied
	}
	n := 0
	if deleteFiles {
		var files []store.File
		if err := s.db.NewSelect().Model(&files).Where("source_id = ?", id).Scan(ctx); err != nil {
			return 0, fmt.Errorf("source files: %w", err)
		}
		for i := range files {
			if err := s.teardownFile(ctx, &files[i]); err != nil {
				return n, err
			}
			n++
		}
	}
	if _, err := s.db.NewDelete().Model((*store.Source)(nil)).Where("id = ?", id).Exec(ctx); err != nil {
		return n, fmt.Errorf("delete source: %w", err)
	}
	return n, nil
}

// ListSyncRuns returns a source's sync history, newest first.
func (s *Service) ListSyncRuns(ctx context.Context, p *access.Principal, id uuid.UUID, limit int) ([]store.SyncRun, error) {
	if _, err := s.GetSource(ctx, p, id); err != nil {
		return nil, err
	}
	switch {
	case limit <= 0:
		limit = 50
	case limit > 500:
		limit = 500
	}
	runs := []store.SyncRun{}
	if err := s.db.NewSelect().Model(&runs).Where("source_id = ?", id).
		OrderExpr("started_at DESC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("sync runs: %w", err)
	}
	return runs, nil
}

// checkSchema validates a config against a connector's JSON Schema (no schema: anything goes).
func checkSchema(schema, cfg json.RawMessage) error {
	if len(schema) == 0 || string(schema) == "null" {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return fmt.Errorf("the connector's config schema is not JSON: %w", err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("config.schema.json", doc); err != nil {
		return fmt.Errorf("the connector's config schema: %w", err)
	}
	sch, err := comp.Compile("config.schema.json")
	if err != nil {
		return fmt.Errorf("the connector's config schema does not compile: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(cfg))
	if err != nil {
		return fmt.Errorf("config is not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(strings.ReplaceAll(ve.Error(), "\n", "; "))
		}
		return err
	}
	return nil
}
