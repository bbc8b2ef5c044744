package httpapi

import (
	"log/slog"
	"net/http"
	"strconv"

	"github.com/uptrace/bunrouter"

	"github.com/docindex/docindex/docindex"
)

// Option configures the HTTP module.
type Option func(*api)

// WithLogger sets the logger of the request log and of internal errors.
func WithLogger(l *slog.Logger) Option { return func(a *api) { a.log = l } }

type api struct {
	svc *docindex.Service
	log *slog.Logger
}

// Mount registers every endpoint on g. Paths are those of the interface: /api/..., /files...,
// /jobs..., /admin/..., plus the unauthenticated /healthz and /openapi.json.
func Mount(g *bunrouter.Group, svc *docindex.Service, opts ...Option) {
	a := &api{svc: svc, log: slog.Default()}
	for _, o := range opts {
		o(a)
	}
	base := g.Use(logRequests(a.log), handleErrors(a.log))
	base.GET("/healthz", a.healthz)
	base.GET("/openapi.json", serveSpec)
	base.GET("/openapi.yaml", serveSpecYAML)

	authed := base.Use(authenticate(svc))
	authed.WithGroup("/api", func(g *bunrouter.Group) {
		g.POST("/collections", a.createCollection)
		g.GET("/collections", a.listCollections)
		g.GET("/collections/:id", a.getCollection)
		g.PUT("/collections/:id", a.updateCollection)
		g.DELETE("/collections/:id", a.deleteCollection)
		g.POST("/collections/:id/shares", a.createShare)
		g.GET("/collections/:id/shares", a.listShares)
		g.PUT("/collections/:id/shares/:shareId", a.updateShare)
		g.DELETE("/collections/:id/shares/:shareId", a.deleteShare)
		g.GET("/embedding-models", a.embeddingModels)
		g.POST("/collections/:id/search", a.search)
		g.POST("/sources", a.createSource)
		g.GET("/sources", a.listSources)
		g.GET("/sources/:id", a.getSource)
		g.PUT("/sources/:id", a.updateSource)
		g.DELETE("/sources/:id", a.deleteSource)
		g.POST("/sources/:id/sync", a.syncSource)
		g.GET("/sources/:id/syncs", a.listSyncRuns)
		g.GET("/source-types", a.sourceTypes)
		g.POST("/ingest/:collectionName/:tableName", a.ingest)
		g.GET("/collections/:id/tables", a.listTables)
		g.GET("/collections/:id/tables/:table/rows", a.readRows)
	})
	// Change notifications carry the source's shared secret instead of a bearer token.
	base.POST("/api/sources/:id/events", a.sourceEvent)
	authed.POST("/files", a.uploadFile)
	authed.GET("/files", a.listFiles)
	authed.POST("/files/bulk-delete", a.bulkDelete)
	authed.GET("/files/:id", a.getFile)
	authed.DELETE("/files/:id", a.deleteFile)
	authed.POST("/files/:id/reindex", a.reindexFile)
	authed.GET("/jobs", a.listJobs)
	authed.POST("/jobs/retry-all-failed", a.retryFailed)
	authed.DELETE("/jobs/failed", a.deleteFailed)
	authed.GET("/jobs/:id", a.getJob)
	authed.DELETE("/jobs/:id", a.deleteJob)
	authed.POST("/reindex-all", a.reindexAll)
	authed.WithGroup("/admin", func(g *bunrouter.Group) {
		g.POST("/api-keys", a.createAPIKey)
		g.GET("/api-keys", a.listAPIKeys)
		g.DELETE("/api-keys/:id", a.revokeAPIKey)
	})
}

func (a *api) healthz(w http.ResponseWriter, req bunrouter.Request) error {
	if err := a.svc.Ping(req.Context()); err != nil {
		a.log.WarnContext(req.Context(), "health check: database does not answer", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": "database does not answer"})
		return nil
	}
	writeJSON(w, http.StatusOK, statusDTO{Status: "ok"})
	return nil
}

const errInvalidCollectionID = "Invalid collection ID"

func (a *api) createCollection(w http.ResponseWriter, req bunrouter.Request) error {
	var in docindex.CollectionInput
	if err := decode(req, &in); err != nil {
		return err
	}
	c, err := a.svc.CreateCollection(req.Context(), principal(req), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, newCollectionRecord(c))
	return nil
}

func (a *api) listCollections(w http.ResponseWriter, req bunrouter.Request) error {
	items, err := a.svc.ListCollections(req.Context(), principal(req), req.URL.Query().Get("filter"))
	if err != nil {
		return err
	}
	out := make([]collectionItem, len(items))
	for i := range items {
		out[i] = newCollectionItem(&items[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"collections": out})
	return nil
}

func (a *api) getCollection(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidCollectionID)
	if err != nil {
		return err
	}
	c, err := a.svc.GetCollection(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newCollectionRecord(c))
	return nil
}

func (a *api) updateCollection(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidCollectionID)
	if err != nil {
		return err
	}
	var in docindex.CollectionUpdate
	if err := decode(req, &in); err != nil {
		return err
	}
	c, err := a.svc.UpdateCollection(req.Context(), principal(req), id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newCollectionRecord(c))
	return nil
}

func (a *api) deleteCollection(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidCollectionID)
	if err != nil {
		return err
	}
	if err := a.svc.DeleteCollection(req.Context(), principal(req), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusDTO{Status: "deleted"})
	return nil
}

func (a *api) createShare(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidCollectionID)
	if err != nil {
		return err
	}
	var in docindex.ShareInput
	if err := decode(req, &in); err != nil {
		return err
	}
	sh, err := a.svc.CreateShare(req.Context(), principal(req), id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, newShare(sh))
	return nil
}

func (a *api) listShares(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidCollectionID)
	if err != nil {
		return err
	}
	shares, err := a.svc.ListShares(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	out := make([]shareDTO, len(shares))
	for i := range shares {
		out[i] = newShare(&shares[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"shares": out})
	return nil
}

func (a *api) updateShare(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidCollectionID)
	if err != nil {
		return err
	}
	shareID, err := pathID(req, "shareId", "Invalid share ID")
	if err != nil {
		return err
	}
	var in struct {
		Role string `json:"role"`
	}
	if err := decode(req, &in); err != nil {
		return err
	}
	sh, err := a.svc.UpdateShare(req.Context(), principal(req), id, shareID, in.Role)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newShare(sh))
	return nil
}

func (a *api) deleteShare(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidCollectionID)
	if err != nil {
		return err
	}
	shareID, err := pathID(req, "shareId", "Invalid share ID")
	if err != nil {
		return err
	}
	if err := a.svc.DeleteShare(req.Context(), principal(req), id, shareID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusDTO{Status: "deleted"})
	return nil
}

func (a *api) embeddingModels(w http.ResponseWriter, req bunrouter.Request) error {
	models, err := a.svc.EmbeddingModels(req.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
	return nil
}

func (a *api) createAPIKey(w http.ResponseWriter, req bunrouter.Request) error {
	p := principal(req)
	if !p.IsAdmin() {
		// Checked before the body so a non-admin learns nothing from validation errors.
		return docindex.Errorf(docindex.ErrForbidden, "Admin access required")
	}
	var in struct {
		ClientName  string   `json:"clientName"`
		Permissions []string `json:"permissions"`
	}
	if err := decode(req, &in); err != nil {
		return err
	}
	k, err := a.svc.CreateAPIKey(req.Context(), p, in.ClientName, in.Permissions)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, k)
	return nil
}

func (a *api) listAPIKeys(w http.ResponseWriter, req bunrouter.Request) error {
	include := false
	if v := req.URL.Query().Get("includeRevoked"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return docindex.Errorf(docindex.ErrInvalid, "Invalid request: includeRevoked must be true or false")
		}
		include = b
	}
	keys, err := a.svc.ListAPIKeys(req.Context(), principal(req), include)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, keys)
	return nil
}

func (a *api) revokeAPIKey(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", "Invalid API key ID")
	if err != nil {
		return err
	}
	if err := a.svc.RevokeAPIKey(req.Context(), principal(req), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusDTO{Status: "revoked"})
	return nil
}
