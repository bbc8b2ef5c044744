package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bunrouter"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/store"
)

// sourceDTO is spec 2.6; the list-only fields are filled by the list.
type sourceDTO struct {
	ID             uuid.UUID       `json:"id"`
	Name           string          `json:"name"`
	SourceType     string          `json:"sourceType"`
	Config         json.RawMessage `json:"config"`
	Enabled        bool            `json:"enabled"`
	SyncSchedule   *string         `json:"syncSchedule"`
	CollectionID   *uuid.UUID      `json:"collectionId"`
	CreatedBy      *uuid.UUID      `json:"createdBy"`
	CreatedAt      time.Time       `json:"createdAt"`
	UpdatedAt      time.Time       `json:"updatedAt"`
	LastSyncAt     *time.Time      `json:"lastSyncAt"`
	SyncInProgress *bool           `json:"syncInProgress,omitempty"`
	CreatedByEmail *string         `json:"createdByEmail,omitempty"`
}

func newSource(v *docindex.SourceView, listItem bool) sourceDTO {
	d := sourceDTO{ID: v.ID, Name: v.Name, SourceType: v.SourceType, Config: v.MaskedConfig, Enabled: v.Enabled,
		SyncSchedule: v.SyncSchedule, CollectionID: nullUUID(v.CollectionID), CreatedBy: nullUUID(v.Source.CreatedBy),
		CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt, LastSyncAt: v.LastSyncAt}
	if listItem {
		inProgress := v.SyncInProgress
		d.SyncInProgress, d.CreatedByEmail = &inProgress, v.CreatedByEmail
	}
	return d
}

type syncRunDTO struct {
	ID          uuid.UUID       `json:"id"`
	SourceID    uuid.UUID       `json:"sourceId"`
	Trigger     string          `json:"trigger"`
	Status      string          `json:"status"`
	FullListing bool            `json:"fullListing"`
	Seen        int             `json:"seen"`
	Created     int             `json:"created"`
	Updated     int             `json:"updated"`
	Deleted     int             `json:"deleted"`
	Skipped     int             `json:"skipped"`
	Failed      int             `json:"failed"`
	Errors      json.RawMessage `json:"errors"`
	Error       *string         `json:"error"`
	StartedAt   time.Time       `json:"startedAt"`
	FinishedAt  *time.Time      `json:"finishedAt"`
}

func newSyncRun(r *store.SyncRun) syncRunDTO {
	return syncRunDTO{ID: r.ID, SourceID: r.SourceID, Trigger: r.Trigger, Status: r.Status, FullListing: r.FullListing,
		Seen: r.Seen, Created: r.Created, Updated: r.Updated, Deleted: r.Deleted, Skipped: r.Skipped, Failed: r.Failed,
		Errors: r.Errors, Error: r.Error, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
}

const errInvalidSourceID = "Invalid source ID"

func (a *api) createSource(w http.ResponseWriter, req bunrouter.Request) error {
	var in docindex.SourceInput
	if err := decode(req, &in); err != nil {
		return err
	}
	v, err := a.svc.CreateSource(req.Context(), principal(req), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, newSource(v, false))
	return nil
}

func (a *api) listSources(w http.ResponseWriter, req bunrouter.Request) error {
	vs, err := a.svc.ListSources(req.Context(), principal(req), req.URL.Query().Get("type"))
	if err != nil {
		return err
	}
	out := make([]sourceDTO, len(vs))
	for i, v := range vs {
		out[i] = newSource(v, true)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *api) getSource(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidSourceID)
	if err != nil {
		return err
	}
	v, err := a.svc.GetSource(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newSource(v, false))
	return nil
}

func (a *api) updateSource(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidSourceID)
	if err != nil {
		return err
	}
	var in docindex.SourceUpdate
	if err := decode(req, &in); err != nil {
		return err
	}
	v, err := a.svc.UpdateSource(req.Context(), principal(req), id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newSource(v, false))
	return nil
}

func (a *api) deleteSource(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidSourceID)
	if err != nil {
		return err
	}
	deleteFiles := false
	if v := req.URL.Query().Get("deleteFiles"); v != "" {
		if deleteFiles, err = strconv.ParseBool(v); err != nil {
			return docindex.Errorf(docindex.ErrInvalid, "Invalid request: deleteFiles must be true or false")
		}
	}
	n, err := a.svc.DeleteSource(req.Context(), principal(req), id, deleteFiles)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "deleted", "count": n})
	return nil
}

func (a *api) syncSource(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidSourceID)
	if err != nil {
		return err
	}
	run, err := a.svc.StartSync(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newSyncRun(run))
	return nil
}

func (a *api) listSyncRuns(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidSourceID)
	if err != nil {
		return err
	}
	limit, err := queryInt(req, "limit")
	if err != nil {
		return err
	}
	runs, err := a.svc.ListSyncRuns(req.Context(), principal(req), id, limit)
	if err != nil {
		return err
	}
	out := make([]syncRunDTO, len(runs))
	for i := range runs {
		out[i] = newSyncRun(&runs[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"syncs": out})
	return nil
}

func (a *api) sourceTypes(w http.ResponseWriter, req bunrouter.Request) error {
	types, err := a.svc.SourceTypesAvailable(req.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"sourceTypes": types})
	return nil
}

// maxEventBody bounds a pushed change notification.
const maxEventBody = 1 << 20

func (a *api) sourceEvent(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidSourceID)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxEventBody))
	if err != nil {
		return tooLargeOr(err, "Invalid request: unreadable body")
	}
	status, err := a.svc.SourceEvent(req.Context(), id,
		firstHeader(req.Header, "X-Docindex-Signature", "X-Hub-Signature-256", "X-Hub-Signature"),
		firstHeader(req.Header, "X-Docindex-Secret", "X-Docindex-Webhook-Secret"), body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, statusDTO{Status: status})
	return nil
}

// firstHeader returns the first of the named headers that is set. Besides its own headers the
// server takes those the docsuite connector documents for its webhookSecret (X-Hub-Signature,
// X-Hub-Signature-256 as Confluence Data Center and GitHub-style senders sign,
// X-Docindex-Webhook-Secret), so a sender configured per that documentation is accepted.
func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}
