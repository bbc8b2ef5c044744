package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bunrouter"

	"github.com/docindex/docindex/docindex"
	"github.com/docindex/docindex/docindex/access"
)

// maxJSONBody bounds ordinary JSON request bodies; uploads and ingest have their own limits.
const maxJSONBody = 1 << 20

type ctxKey int

const principalKey ctxKey = 0

// principal returns the authenticated caller of a request that passed authenticate.
func principal(req bunrouter.Request) *access.Principal {
	p, _ := req.Context().Value(principalKey).(*access.Principal)
	return p
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests writes one structured line per request, after it finished.
func logRequests(log *slog.Logger) bunrouter.MiddlewareFunc {
	return func(next bunrouter.HandlerFunc) bunrouter.HandlerFunc {
		return func(w http.ResponseWriter, req bunrouter.Request) error {
			start := time.Now()
			sw := &statusWriter{ResponseWriter: w}
			err := next(sw, req)
			level := slog.LevelInfo
			if sw.status >= 500 {
				level = slog.LevelError
			}
			attrs := []any{"method", req.Method, "path", req.URL.Path, "route", req.Route(),
				"status", sw.status, "bytes", sw.bytes, "duration_ms", float64(time.Since(start).Microseconds()) / 1000}
			if p := principal(req); p != nil {
				attrs = append(attrs, "user", p.Email)
			}
			log.Log(req.Context(), level, "request", attrs...)
			return err
		}
	}
}

// handleErrors turns a handler's error into the status and {"error": "..."} body, and a panic
// into a 500: the server keeps serving. Internal errors are logged, never shown.
func handleErrors(log *slog.Logger) bunrouter.MiddlewareFunc {
	return func(next bunrouter.HandlerFunc) bunrouter.HandlerFunc {
		return func(w http.ResponseWriter, req bunrouter.Request) (err error) {
			defer func() {
				if r := recover(); r != nil {
					log.ErrorContext(req.Context(), "panic in handler", "panic", fmt.Sprint(r), "path", req.URL.Path)
					writeError(w, errors.New("panic"), log, req)
				}
			}()
			if err := next(w, req); err != nil {
				writeError(w, err, log, req)
			}
			return nil
		}
	}
}

func writeError(w http.ResponseWriter, err error, log *slog.Logger, req bunrouter.Request) {
	status, msg := http.StatusInternalServerError, "Server error"
	var de *docindex.Error
	if errors.As(err, &de) {
		msg = de.Msg
		switch de.Kind {
		case docindex.ErrInvalid:
			status = http.StatusBadRequest
		case docindex.ErrUnauthorized:
			status = http.StatusUnauthorized
		case docindex.ErrForbidden:
			status = http.StatusForbidden
		case docindex.ErrNotFound:
			status = http.StatusNotFound
		case docindex.ErrConflict:
			status = http.StatusConflict
		case docindex.ErrTooLarge:
			status = http.StatusRequestEntityTooLarge
		case docindex.ErrUnavailable:
			status = http.StatusServiceUnavailable
		}
	}
	switch status {
	case http.StatusInternalServerError:
		log.ErrorContext(req.Context(), "request failed", "err", err, "path", req.URL.Path)
	case http.StatusServiceUnavailable:
		log.WarnContext(req.Context(), "request failed: a dependency did not answer", "err", err, "path", req.URL.Path)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="docindex"`)
	}
	writeJSON(w, status, map[string]string{"error": msg})
}

// authenticate requires a valid bearer token and puts the caller into the request context.
func authenticate(svc *docindex.Service) bunrouter.MiddlewareFunc {
	return func(next bunrouter.HandlerFunc) bunrouter.HandlerFunc {
		return func(w http.ResponseWriter, req bunrouter.Request) error {
			token, ok := bearer(req.Header.Get("Authorization"))
			if !ok {
				return docindex.Errorf(docindex.ErrUnauthorized, "Unauthorized: missing bearer token")
			}
			p, err := svc.Authenticate(req.Context(), token)
			if err != nil {
				return err
			}
			ctx := context.WithValue(req.Context(), principalKey, p)
			return next(w, req.WithContext(ctx))
		}
	}
}

func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body into v; anything malformed is a 400 that says what is wrong.
func decode(req bunrouter.Request, v any) error {
	body := http.MaxBytesReader(nil, req.Body, maxJSONBody)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		var ute *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF):
			return docindex.Errorf(docindex.ErrInvalid, "Invalid request: a JSON body is required")
		case errors.As(err, &mbe):
			return docindex.Errorf(docindex.ErrTooLarge, "Request body too large (limit %d bytes)", maxJSONBody)
		case errors.As(err, &ute):
			return docindex.Errorf(docindex.ErrInvalid, "Invalid request: field %q must be %s", ute.Field, ute.Type.String())
		default:
			return docindex.Errorf(docindex.ErrInvalid, "Invalid request: malformed JSON body: %v", err)
		}
	}
	if dec.More() {
		return docindex.Errorf(docindex.ErrInvalid, "Invalid request: trailing data after the JSON body")
	}
	return nil
}

// pathID parses a uuid path parameter; msg is the error for a malformed one.
func pathID(req bunrouter.Request, name, msg string) (uuid.UUID, error) {
	id, err := uuid.Parse(req.Param(name))
	if err != nil {
		return uuid.Nil, docindex.Errorf(docindex.ErrInvalid, "%s", msg)
	}
	return id, nil
}
