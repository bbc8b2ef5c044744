package docindex

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/access"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/store"
	"github.com/docindex/docindex/plugins/connector"
)

func holderID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Sync timings: a running sync renews its heartbeat; one whose heartbeat is older than
// syncStale is taken as dead and its source freed.
const (
	syncHeartbeat = 10 * time.Second
	syncStale     = 60 * time.Second
	maxRunErrors  = 100
)

var errSyncRunning = Errorf(ErrConflict, "A sync of this source is already running")

// StartSync starts a sync of a source now, in the background of this process, and returns its run.
func (s *Service) StartSync(ctx context.Context, p *access.Principal, id uuid.UUID) (*store.SyncRun, error) {
	if !p.CanWrite() {
		return nil, errKeyReadOnly
	}
	src, see, change, err := s.sourceAccess(ctx, s.db, p, id)
	if err != nil {
		return nil, err
	}
	if !see {
		return nil, errSourceNotFound
	}
	if !change {
		return nil, errAccessDenied
	}
	if !src.CollectionID.Valid {
		return nil, invalid("the source feeds no collection: set collectionId first")
	}
	run, err := s.beginRun(ctx, src.ID, "manual")
	if err != nil {
		return nil, err
	}
	go s.executeRun(context.WithoutCancel(ctx), run)
	return run, nil
}

// beginRun claims a source for a sync; the partial unique index refuses a second running run.
func (s *Service) beginRun(ctx context.Context, sourceID uuid.UUID, trigger string) (*store.SyncRun, error) {
	if err := s.reapRuns(ctx); err != nil {
		return nil, err
	}
	run := &store.SyncRun{SourceID: sourceID, Trigger: trigger, Status: "running", Holder: s.holder, Errors: json.RawMessage("[]")}
	_, err := s.db.NewInsert().Model(run).Returning("*").Exec(ctx)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return nil, errSyncRunning
	}
	if err != nil {
		return nil, fmt.Errorf("begin sync: %w", err)
	}
	return run, nil
}

// reapRuns fails runs whose process stopped renewing them, freeing their sources.
func (s *Service) reapRuns(ctx context.Context) error {
	_, err := s.db.NewUpdate().Model((*store.SyncRun)(nil)).
		Set("status = 'failed', error = 'the sync stopped: its process died or lost the database', finished_at = now()").
		Where("status = 'running' AND heartbeat_at < now() - ?::interval", fmt.Sprintf("%d seconds", int(syncStale.Seconds()))).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("reap sync runs: %w", err)
	}
	return nil
}

// runState accumulates a run's counts; flushed with every heartbeat and at the end.
type runState struct {
	run    *store.SyncRun
	errors []map[string]string
}

func (r *runState) itemError(id string, err error) {
	r.run.Failed++
	if len(r.errors) < maxRunErrors {
		r.errors = append(r.errors, map[string]string{"item": id, "error": err.Error()})
	}
}

func (s *Service) flushRun(ctx context.Context, st *runState, final bool, runErr error) {
	errs := st.errors
	if errs == nil {
		// An empty list, not JSON null: clients read errors as an array.
		errs = []map[string]string{}
	}
	st.run.Errors, _ = json.Marshal(errs)
	q := s.db.NewUpdate().Model(st.run).
		Column("seen", "created", "updated", "deleted", "skipped", "failed", "errors", "full_listing").
		Set("heartbeat_at = now()").WherePK()
	if final {
		status := "completed"
		var msg *string
		if runErr != nil {
			status = "failed"
			m := truncate(runErr.Error(), 2000)
			msg = &m
		}
		st.run.Status, st.run.Error = status, msg
		q = q.Column("status", "error").Set("finished_at = now()")
	}
	if _, err := q.Exec(ctx); err != nil {
		s.log.WarnContext(ctx, "record sync run", "run", st.run.ID, "err", err)
	}
}

// executeRun performs a claimed run to its end.
func (s *Service) executeRun(ctx context.Context, run *store.SyncRun) {
	st := &runState{run: run}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(syncHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				s.flushRun(ctx, st, false, nil)
			}
		}
	}()
	err := s.reconcile(ctx, st)
	close(stop)
	<-done
	s.flushRun(ctx, st, true, err)
	if err == nil {
		_, _ = s.db.NewUpdate().Model((*store.Source)(nil)).Set("last_sync_at = now()").Where("id = ?", run.SourceID).Exec(ctx)
	}
	s.log.InfoContext(ctx, "sync finished", "source", run.SourceID, "run", run.ID, "status", st.run.Status,
		"seen", run.Seen, "created", run.Created, "updated", run.Updated, "deleted", run.Deleted,
		"skipped", run.Skipped, "failed", run.Failed, "err", err)
}

// reconcile walks the connector's events and brings the source's files in step with them.
func (s *Service) reconcile(ctx context.Context, st *runState) error {
	src := &store.Source{}
	if err := s.db.NewSelect().Model(src).Where("id = ?", st.run.SourceID).Scan(ctx); err != nil {
		return fmt.Errorf("load source: %w", err)
	}
	if !src.CollectionID.Valid {
		return errors.New("the source feeds no collection")
	}
	conn, d, err := s.connectorFor(ctx, src.SourceType)
	if err != nil {
		return err
	}
	cfg, err := s.openConfig(src)
	if err != nil {
		return err
	}
	// The stored cursor goes back to every connector: an incremental one sends only changes since
	// it, others use it as a cache (a crawler's ETags) and still send a full listing.
	cursor := src.Cursor
	_ = d
	seen := map[string]bool{}
	for ev, err := range conn.Sync(ctx, connector.SyncRequest{Config: cfg, Cursor: cursor}) {
		if err != nil {
			return fmt.Errorf("sync: %w", err)
		}
		switch ev.Kind {
		case connector.EventSnapshot:
			st.run.FullListing = true
		case connector.EventUpsert:
			st.run.Seen++
			seen[ev.Item.ID] = true
			if err := s.upsertItem(ctx, conn, cfg, src, ev.Item, st); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				st.itemError(ev.Item.ID, err)
			}
		case connector.EventDelete:
			if err := s.deleteItem(ctx, src.ID, ev.ID, st); err != nil {
				st.itemError(ev.ID, err)
			}
		case connector.EventCheckpoint:
			if _, err := s.db.NewUpdate().Model((*store.Source)(nil)).Set("cursor = ?", ev.Cursor).
				Where("id = ?", src.ID).Exec(ctx); err != nil {
				return fmt.Errorf("store cursor: %w", err)
			}
		}
	}
	if st.run.FullListing {
		var stale []store.File
		if err := s.db.NewSelect().Model(&stale).Where("source_id = ?", src.ID).Scan(ctx); err != nil {
			return fmt.Errorf("list source files: %w", err)
		}
		for i := range stale {
			if stale[i].ExternalID != nil && !seen[*stale[i].ExternalID] {
				if err := s.teardownFile(ctx, &stale[i]); err != nil {
					st.itemError(*stale[i].ExternalID, err)
					continue
				}
				st.run.Deleted++
			}
		}
	}
	return nil
}

func (s *Service) deleteItem(ctx context.Context, sourceID uuid.UUID, externalID string, st *runState) error {
	f := &store.File{}
	err := s.db.NewSelect().Model(f).Where("source_id = ? AND external_id = ?", sourceID, externalID).Scan(ctx)
	if err != nil {
		if errors.Is(err, errNoRows) {
			return nil
		}
		return err
	}
	if err := s.teardownFile(ctx, f); err != nil {
		return err
	}
	st.run.Deleted++
	return nil
}

// itemMetadata is what a synced file keeps in sourceMetadata: the connector's metadata, where the
// item lives, and its access list under "acl" (which search honours).
func itemMetadata(src *store.Source, it connector.Item) json.RawMessage {
	m := map[string]any{}
	for k, v := range it.Metadata {
		m[k] = v
	}
	m["source"] = map[string]any{"id": src.ID, "type": src.SourceType, "externalId": it.ID, "url": it.URL, "path": it.Path}
	if it.Access != nil {
		users := make([]string, len(it.Access.Users))
		for i, u := range it.Access.Users {
			users[i] = strings.ToLower(strings.TrimSpace(u))
		}
		groups := it.Access.Groups
		if groups == nil {
			groups = []string{}
		}
		m["acl"] = map[string]any{"public": it.Access.Public, "users": users, "groups": groups}
	}
	raw, _ := json.Marshal(m)
	return raw
}

// hashingReader hashes what is read through it.
type hashingReader struct {
	r io.Reader
	h interface {
		io.Writer
		Sum([]byte) []byte
	}
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	return n, err
}

// upsertItem stores a new or changed item as a file and queues its indexing; an unchanged item
// (same version, or same content hash when the connector gives no version) is skipped without
// re-embedding.
func (s *Service) upsertItem(ctx context.Context, conn connector.Connector, cfg json.RawMessage, src *store.Source, it connector.Item, st *runState) error {
	existing := &store.File{}
	err := s.db.NewSelect().Model(existing).Where("source_id = ? AND external_id = ?", src.ID, it.ID).Scan(ctx)
	switch {
	case errors.Is(err, errNoRows):
		existing = nil
	case err != nil:
		return err
	}
	meta := itemMetadata(src, it)
	if existing != nil && it.Version != "" && existing.Version == it.Version && existing.Status != "failed" {
		st.run.Skipped++
		// Metadata and access lists may change without the content: keep them current.
		if string(existing.SourceMetadata) != string(meta) {
			_, err := s.db.NewUpdate().Model(existing).Set("source_metadata = ?, updated_at = now()", meta).WherePK().Exec(ctx)
			return err
		}
		return nil
	}

	var body io.ReadCloser
	ctype := it.ContentType
	name := it.Name
	version := it.Version
	if it.Inline != nil {
		body = io.NopCloser(strings.NewReader(string(it.Inline)))
	} else {
		c, err := conn.Fetch(ctx, connector.FetchRequest{Config: cfg, Item: it})
		if err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		body = c.Body
		if c.ContentType != "" {
			ctype = c.ContentType
		}
		if c.Name != "" {
			name = c.Name
		}
		if c.Version != "" && version == "" {
			version = c.Version
		}
	}
	defer body.Close()
	if name == "" {
		name = it.ID
	}
	fileID := uuid.New()
	if existing != nil {
		fileID = existing.ID
	}
	key := fmt.Sprintf("sources/%s/%s/%s", src.ID, fileID, uuid.NewString()[:8]+"-"+safeName(name))
	hr := &hashingReader{r: &countingReader{r: body, limit: s.maxUpload}, h: sha256.New()}
	size, err := s.blobs.Put(ctx, key, hr, ctype)
	if err != nil {
		_ = s.blobs.Delete(context.WithoutCancel(ctx), key)
		return fmt.Errorf("store content: %w", err)
	}
	hash := hex.EncodeToString(hr.h.Sum(nil))
	if existing != nil && existing.ContentHash == hash && existing.Status != "failed" {
		_ = s.blobs.Delete(ctx, key)
		st.run.Skipped++
		_, err := s.db.NewUpdate().Model(existing).Set("version = ?, source_metadata = ?, updated_at = now()", version, meta).WherePK().Exec(ctx)
		return err
	}
	var ctp *string
	if ctype != "" {
		ctp = &ctype
	}
	ext := it.ID
	err = s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		jobType := queue.TypeIndex
		if existing == nil {
			f := &store.File{ID: fileID, CollectionID: src.CollectionID, Name: name, BlobPath: key, SizeBytes: &size,
				ContentType: ctp, Status: "pending", SourceID: uuid.NullUUID{UUID: src.ID, Valid: true},
				ExternalID: &ext, Version: version, ContentHash: hash, SourceMetadata: meta, CreatedBy: src.CreatedBy}
			if _, err := tx.NewInsert().Model(f).Exec(ctx); err != nil {
				return fmt.Errorf("insert file: %w", err)
			}
		} else {
			jobType = queue.TypeReindex
			if _, err := tx.NewUpdate().Model((*store.File)(nil)).
				Set("name = ?, blob_path = ?, size_bytes = ?, content_type = ?, version = ?, content_hash = ?", name, key, size, ctp, version, hash).
				Set("source_metadata = ?, collection_id = ?, status = 'pending', updated_at = now()", meta, src.CollectionID).
				Where("id = ?", fileID).Exec(ctx); err != nil {
				return fmt.Errorf("update file: %w", err)
			}
			if err := s.queue.CancelFileJobs(ctx, tx, fileID); err != nil {
				return err
			}
		}
		_, err := s.queue.Enqueue(ctx, tx, queue.NewJob{Type: jobType, FileID: uuid.NullUUID{UUID: fileID, Valid: true}, CollectionID: src.CollectionID})
		return err
	})
	if err != nil {
		_ = s.blobs.Delete(context.WithoutCancel(ctx), key)
		return err
	}
	if existing != nil {
		st.run.Updated++
		if existing.BlobPath != key {
			_ = s.blobs.Delete(ctx, existing.BlobPath)
		}
	} else {
		st.run.Created++
	}
	return nil
}

// RunScheduler starts due scheduled syncs until ctx ends. Many servers may run it: only the
// leader of the moment looks for due sources, and a source's running-run index keeps any two
// processes from syncing it at once.
func (s *Service) RunScheduler(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		every = 30 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := s.scheduleOnce(ctx, every); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "scheduler", "err", err)
		}
		select {
		case <-ctx.Done():
			_ = s.queue.Resign(context.WithoutCancel(ctx), "scheduler", s.holder)
			return nil
		case <-t.C:
		}
	}
}

func (s *Service) scheduleOnce(ctx context.Context, every time.Duration) error {
	lead, err := s.queue.Lead(ctx, "scheduler", s.holder, 3*every)
	if err != nil || !lead {
		return err
	}
	if err := s.reapRuns(ctx); err != nil {
		return err
	}
	var due []uuid.UUID
	err = s.db.NewSelect().Model((*store.Source)(nil)).Column("src.id").
		Where("src.enabled AND src.sync_schedule IS NOT NULL AND src.collection_id IS NOT NULL").
		Where(`(src.last_sync_at IS NULL OR src.last_sync_at + (CASE src.sync_schedule
			WHEN 'hourly' THEN interval '1 hour' WHEN 'daily' THEN interval '1 day' ELSE interval '7 days' END) <= now())`).
		Where("NOT EXISTS (SELECT 1 FROM docindex.sync_runs r WHERE r.source_id = src.id AND r.status = 'running')").
		Scan(ctx, &due)
	if err != nil {
		return fmt.Errorf("due sources: %w", err)
	}
	for _, id := range due {
		run, err := s.beginRun(ctx, id, "schedule")
		if errors.Is(err, errSyncRunning) {
			continue
		}
		if err != nil {
			return err
		}
		go s.executeRun(context.WithoutCancel(ctx), run)
	}
	return nil
}

// GetSyncRun returns one run of a source the caller may see.
func (s *Service) GetSyncRun(ctx context.Context, p *access.Principal, sourceID, runID uuid.UUID) (*store.SyncRun, error) {
	if _, err := s.GetSource(ctx, p, sourceID); err != nil {
		return nil, err
	}
	run := &store.SyncRun{}
	if err := s.db.NewSelect().Model(run).Where("id = ? AND source_id = ?", runID, sourceID).Scan(ctx); err != nil {
		if errors.Is(err, errNoRows) {
			return nil, Errorf(ErrNotFound, "Sync run not found")
		}
		return nil, err
	}
	return run, nil
}

// SourceEvent handles a change notification pushed by a source (POST /api/sources/{id}/events).
// It carries no bearer token: the sender proves itself with the source's webhookSecret, either as
// an HMAC-SHA256 of the body in X-Docindex-Signature ("sha256=<hex>") or as the secret itself in
// X-Docindex-Secret. A valid event starts a sync of the source unless one is running already.
func (s *Service) SourceEvent(ctx context.Context, id uuid.UUID, signature, shared string, body []byte) (string, error) {
	src := &store.Source{}
	if err := s.db.NewSelect().Model(src).Where("id = ?", id).Scan(ctx); err != nil {
		if errors.Is(err, errNoRows) {
			return "", errSourceNotFound
		}
		return "", err
	}
	cfg, err := s.openConfig(src)
	if err != nil {
		return "", err
	}
	var c struct {
		WebhookSecret string `json:"webhookSecret"`
	}
	_ = json.Unmarshal(cfg, &c)
	if c.WebhookSecret == "" {
		return "", Errorf(ErrForbidden, "this source takes no events: it has no webhookSecret")
	}
	if !validEventAuth(c.WebhookSecret, signature, shared, body) {
		return "", Errorf(ErrUnauthorized, "Unauthorized: bad event signature")
	}
	if !src.Enabled || !src.CollectionID.Valid {
		return "ignored", nil
	}
	run, err := s.beginRun(ctx, id, "event")
	if errors.Is(err, errSyncRunning) {
		return "running", nil
	}
	if err != nil {
		return "", err
	}
	go s.executeRun(context.WithoutCancel(ctx), run)
	return "started", nil
}

func validEventAuth(secretValue, signature, shared string, body []byte) bool {
	if shared != "" {
		return hmac.Equal([]byte(shared), []byte(secretValue))
	}
	sig, ok := strings.CutPrefix(signature, "sha256=")
	if !ok {
		return false
	}
	want := hmac.New(sha256.New, []byte(secretValue))
	want.Write(body)
	got, err := hex.DecodeString(sig)
	return err == nil && hmac.Equal(got, want.Sum(nil))
}
