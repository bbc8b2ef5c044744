package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bunrouter"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/store"
)

// fileDTO is spec 2.5.
type fileDTO struct {
	ID             uuid.UUID       `json:"id"`
	Name           string          `json:"name"`
	BlobPath       string          `json:"blobPath"`
	SizeBytes      *int64          `json:"sizeBytes"`
	ContentType    *string         `json:"contentType"`
	Status         string          `json:"status"`
	CollectionID   *uuid.UUID      `json:"collectionId"`
	CollectionName *string         `json:"collectionName"`
	CreatedAt      time.Time       `json:"createdAt"`
	UpdatedAt      time.Time       `json:"updatedAt"`
	LastIndexedAt  *time.Time      `json:"lastIndexedAt"`
	SourceMetadata json.RawMessage `json:"sourceMetadata,omitempty"`
	PageCount      *int            `json:"pageCount,omitempty"`
	Warning        string          `json:"warning,omitempty"`
}

func newFile(f *store.File) *fileDTO {
	if f == nil {
		return nil
	}
	meta := f.SourceMetadata
	if len(meta) == 0 || string(meta) == "{}" || string(meta) == "null" {
		meta = nil
	}
	return &fileDTO{ID: f.ID, Name: f.Name, BlobPath: f.BlobPath, SizeBytes: f.SizeBytes, ContentType: f.ContentType,
		Status: f.Status, CollectionID: nullUUID(f.CollectionID), CollectionName: f.CollectionName,
		CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt, LastIndexedAt: f.LastIndexedAt, SourceMetadata: meta,
		PageCount: f.PageCount, Warning: f.Warning}
}

// jobDTO is spec 2.4 without the list-only fields (file and job detail).
type jobDTO struct {
	ID          uuid.UUID  `json:"id"`
	FileID      *uuid.UUID `json:"fileId"`
	Type        string     `json:"type"`
	Status      string     `json:"status"`
	RetryCount  int        `json:"retryCount"`
	MaxRetries  int        `json:"maxRetries"`
	Error       *string    `json:"error"`
	CreatedAt   time.Time  `json:"createdAt"`
	StartedAt   *time.Time `json:"startedAt"`
	CompletedAt *time.Time `json:"completedAt"`
}

// jobItemDTO is a job of the job list: the list-only fields of spec 2.4 are nullable there, so
// they are always sent, null when they do not apply (queuePosition of a job that is not queued).
type jobItemDTO struct {
	jobDTO
	FileName       *string    `json:"fileName"`
	CollectionID   *uuid.UUID `json:"collectionId"`
	CollectionName *string    `json:"collectionName"`
	QueuePosition  *int       `json:"queuePosition"`
}

func newJob(j *queue.Job) jobDTO {
	return jobDTO{ID: j.ID, FileID: nullUUID(j.FileID), Type: j.Type, Status: j.Status, RetryCount: j.RetryCount,
		MaxRetries: j.MaxRetries, Error: j.Error, CreatedAt: j.CreatedAt, StartedAt: j.StartedAt, CompletedAt: j.CompletedAt}
}

// multipartOverhead is what the form fields and boundaries may add to the file's size.
const multipartOverhead = 1 << 20

func (a *api) uploadFile(w http.ResponseWriter, req bunrouter.Request) error {
	limit := a.svc.MaxUploadBytes()
	if req.ContentLength > limit+multipartOverhead {
		return docindex.Errorf(docindex.ErrTooLarge, "File too large (limit %d bytes)", limit)
	}
	req.Body = http.MaxBytesReader(w, req.Body, limit+multipartOverhead)
	mr, err := req.MultipartReader()
	if err != nil {
		return docindex.Errorf(docindex.ErrInvalid, "Invalid request: a multipart/form-data body is required")
	}
	// Fields may come in any order, but the file is streamed as it arrives: the form fields that
	// decide where it goes must come first (curl -F sends them in the order given).
	var up docindex.Upload
	var collectionID string
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return tooLargeOr(err, "Invalid request: malformed multipart body")
		}
		switch part.FormName() {
		case "collectionId":
			collectionID, err = smallField(part)
		case "metadata":
			var m string
			m, err = smallField(part)
			up.Metadata = json.RawMessage(m)
		case "file":
			if collectionID == "" {
				return docindex.Errorf(docindex.ErrInvalid, "Invalid request: collectionId must be sent before the file")
			}
			id, perr := uuid.Parse(collectionID)
			if perr != nil {
				return docindex.Errorf(docindex.ErrInvalid, "Invalid request: invalid collectionId")
			}
			up.CollectionID, up.Name, up.ContentType, up.Body = id, part.FileName(), part.Header.Get("Content-Type"), part
			res, err := a.svc.UploadFile(req.Context(), principal(req), up)
			if err != nil {
				return tooLargeOr(err, "")
			}
			writeJSON(w, http.StatusCreated, map[string]any{"file": newFile(res.File), "jobId": res.JobID})
			return nil
		}
		if err != nil {
			return tooLargeOr(err, "Invalid request: malformed form field")
		}
	}
	if collectionID == "" {
		return docindex.Errorf(docindex.ErrInvalid, "Invalid request: collectionId is required")
	}
	return docindex.Errorf(docindex.ErrInvalid, "Invalid request: the file field is missing")
}

func smallField(p *multipart.Part) (string, error) {
	b, err := io.ReadAll(io.LimitReader(p, 64<<10+1))
	if err != nil {
		return "", err
	}
	if len(b) > 64<<10 {
		return "", docindex.Errorf(docindex.ErrInvalid, "Invalid request: form field %s is longer than 64 KiB", p.FormName())
	}
	return string(b), nil
}

func tooLargeOr(err error, msg string) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return docindex.Errorf(docindex.ErrTooLarge, "File too large")
	}
	var de *docindex.Error
	if msg == "" || errors.As(err, &de) {
		return err
	}
	return docindex.Errorf(docindex.ErrInvalid, "%s", msg)
}

func (a *api) getFile(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", "Invalid file ID")
	if err != nil {
		return err
	}
	d, err := a.svc.GetFile(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	jobs := make([]jobDTO, len(d.Jobs))
	for i := range d.Jobs {
		jobs[i] = newJob(&d.Jobs[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"file": newFile(d.File), "jobs": jobs})
	return nil
}

func queryInt(req bunrouter.Request, name string) (int, error) {
	v := req.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, docindex.Errorf(docindex.ErrInvalid, "Invalid request: %s must be an integer", name)
	}
	return n, nil
}

func queryID(req bunrouter.Request, name string) (uuid.NullUUID, error) {
	v := req.URL.Query().Get(name)
	if v == "" {
		return uuid.NullUUID{}, nil
	}
	id, err := uuid.Parse(v)
	if err != nil {
		return uuid.NullUUID{}, docindex.Errorf(docindex.ErrInvalid, "Invalid request: %s is not a valid id", name)
	}
	return uuid.NullUUID{UUID: id, Valid: true}, nil
}

func (a *api) listFiles(w http.ResponseWriter, req bunrouter.Request) error {
	var f docindex.FileFilter
	var err error
	if f.CollectionID, err = queryID(req, "collectionId"); err != nil {
		return err
	}
	if f.Limit, err = queryInt(req, "limit"); err != nil {
		return err
	}
	if f.Offset, err = queryInt(req, "offset"); err != nil {
		return err
	}
	f.Status, f.Search = req.URL.Query().Get("status"), req.URL.Query().Get("search")
	files, err := a.svc.ListFiles(req.Context(), principal(req), f)
	if err != nil {
		return err
	}
	out := make([]*fileDTO, len(files))
	for i := range files {
		out[i] = newFile(&files[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": out})
	return nil
}

func (a *api) reindexFile(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", "Invalid file ID")
	if err != nil {
		return err
	}
	res, err := a.svc.ReindexFile(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "queued", "jobId": res.JobID, "file": newFile(res.File)})
	return nil
}

func (a *api) deleteFile(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", "Invalid file ID")
	if err != nil {
		return err
	}
	if err := a.svc.DeleteFile(req.Context(), principal(req), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusDTO{Status: "deleted"})
	return nil
}

func (a *api) bulkDelete(w http.ResponseWriter, req bunrouter.Request) error {
	var in docindex.BulkDelete
	if err := decode(req, &in); err != nil {
		return err
	}
	res, err := a.svc.BulkDeleteFiles(req.Context(), principal(req), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (a *api) getJob(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", "Invalid job ID")
	if err != nil {
		return err
	}
	d, err := a.svc.GetJob(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	body := map[string]any{"job": newJob(d.Job)}
	if d.File != nil {
		body["file"] = newFile(d.File)
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (a *api) deleteJob(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", "Invalid job ID")
	if err != nil {
		return err
	}
	if err := a.svc.DeleteJob(req.Context(), principal(req), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusDTO{Status: "deleted"})
	return nil
}

func (a *api) listJobs(w http.ResponseWriter, req bunrouter.Request) error {
	var f docindex.JobFilter
	var err error
	if f.CollectionID, err = queryID(req, "collectionId"); err != nil {
		return err
	}
	if f.FileID, err = queryID(req, "fileId"); err != nil {
		return err
	}
	if f.Limit, err = queryInt(req, "limit"); err != nil {
		return err
	}
	if f.Offset, err = queryInt(req, "offset"); err != nil {
		return err
	}
	f.Status = req.URL.Query().Get("status")
	items, err := a.svc.ListJobs(req.Context(), principal(req), f)
	if err != nil {
		return err
	}
	out := make([]jobItemDTO, len(items))
	for i := range items {
		out[i] = jobItemDTO{jobDTO: newJob(&items[i].Job), FileName: items[i].FileName,
			CollectionID: nullUUID(items[i].CollectionID), CollectionName: items[i].CollectionName,
			QueuePosition: items[i].QueuePosition}
	}
	writeJSON(w, http.StatusOK, map[string]any{"jobs": out})
	return nil
}

func (a *api) retryFailed(w http.ResponseWriter, req bunrouter.Request) error {
	n, err := a.svc.RetryFailedJobs(req.Context(), principal(req))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "queued", "count": n})
	return nil
}

func (a *api) deleteFailed(w http.ResponseWriter, req bunrouter.Request) error {
	n, err := a.svc.DeleteFailedJobs(req.Context(), principal(req))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "deleted", "count": n})
	return nil
}

func (a *api) reindexAll(w http.ResponseWriter, req bunrouter.Request) error {
	res, err := a.svc.ReindexAll(req.Context(), principal(req))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (a *api) search(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "id", errInvalidCollectionID)
	if err != nil {
		return err
	}
	var in docindex.SearchInput
	if err := decode(req, &in); err != nil {
		return err
	}
	res, err := a.svc.Search(req.Context(), principal(req), id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": res})
	return nil
}
