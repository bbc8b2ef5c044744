package httpapi

import (
	"net/http"
	"strings"

	"github.com/uptrace/bunrouter"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/dataset"
)

func (a *api) ingest(w http.ResponseWriter, req bunrouter.Request) error {
	if req.ContentLength > dataset.MaxBodyBytes {
		return docindex.Errorf(docindex.ErrTooLarge, "Request too large (limit %d bytes)", dataset.MaxBodyBytes)
	}
	body := http.MaxBytesReader(w, req.Body, dataset.MaxBodyBytes)
	res, err := a.svc.Ingest(req.Context(), principal(req), req.Param("collectionName"), req.Param("tableName"), body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (a *api) listTables(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidCollectionID)
	if err != nil {
		return err
	}
	tables, err := a.svc.ListTables(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"tables": tables})
	return nil
}

// reservedRowParams are the query parameters of a row read that are not column filters.
var reservedRowParams = map[string]bool{"limit": true, "offset": true, "order": true}

func (a *api) readRows(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidCollectionID)
	if err != nil {
		return err
	}
	q := docindex.RowsQuery{Filters: map[string]string{}, Order: req.URL.Query().Get("order")}
	if q.Limit, err = queryInt(req, "limit"); err != nil {
		return err
	}
	if q.Offset, err = queryInt(req, "offset"); err != nil {
		return err
	}
	for k, vs := range req.URL.Query() {
		if reservedRowParams[k] {
			continue
		}
		if len(vs) != 1 {
			return docindex.Errorf(docindex.ErrInvalid, "Invalid request: filter %s given %d times", k, len(vs))
		}
		q.Filters[strings.TrimSpace(k)] = vs[0]
	}
	rows, err := a.svc.ReadRows(req.Context(), principal(req), id, req.Param("table"), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"rows": rows})
	return nil
}
