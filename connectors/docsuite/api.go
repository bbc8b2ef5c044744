package docsuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/docindex/docindex/plugins"
)

// maxJSON bounds a JSON answer read into memory (a listing page, a page
// with its body): far above what the suites send, low enough that a broken
// server cannot exhaust memory.
const maxJSON = 64 << 20

// api sends the requests of one operation (a sync, a fetch, a health
// check): authentication, retries of throttled requests, and errors that
// wrap the plugins errors and never contain a secret.
type api struct {
	hc *http.Client
	// origin is the suite's scheme://host: credentials go to it only, never
	// to another host a link in an answer may name.
	origin  string
	auth    func(*http.Request)
	secrets []string
	log     *slog.Logger
	retries int
	maxWait time.Duration
}

// do sends req (a GET or a POST whose body can be replayed through
// GetBody) and returns a response with a 2xx status; the caller closes its
// body. Throttled requests (429, 503) are retried after the server's
// Retry-After.
func (a *api) do(req *http.Request) (*http.Response, error) {
	if a.auth != nil && sameOrigin(a.origin, req.URL.String()) {
		a.auth(req)
	}
	req.Header.Set("Accept", "application/json")
	label := req.Method + " " + redactURL(req.URL)
	for attempt := 0; ; attempt++ {
		resp, err := a.hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", label, a.scrubErr(err))
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		snippet := a.snippet(resp)
		throttled := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
		if throttled && attempt < a.retries {
			wait := retryAfter(resp.Header.Get("Retry-After"), attempt)
			if wait > a.maxWait {
				wait = a.maxWait
			}
			a.log.Debug("docsuite: throttled, retrying", "request", label, "status", resp.StatusCode, "wait", wait)
			if err := sleep(req.Context(), wait); err != nil {
				return nil, fmt.Errorf("%s: %w", label, err)
			}
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, fmt.Errorf("%s: replay body: %w", label, err)
				}
				req.Body = body
			}
			continue
		}
		return nil, statusError(label, resp.StatusCode, snippet)
	}
}

// getJSON GETs u and decodes its JSON answer into v.
func (a *api) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("docsuite: request: %w", err)
	}
	resp, err := a.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return a.decode(resp, v)
}

func (a *api) decode(resp *http.Response, v any) error {
	label := resp.Request.Method + " " + redactURL(resp.Request.URL)
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJSON+1))
	if err != nil {
		return fmt.Errorf("%s: read answer: %w", label, a.scrubErr(err))
	}
	if len(data) > maxJSON {
		return fmt.Errorf("%s: answer larger than %d MiB", label, maxJSON>>20)
	}
	if err := json.Unmarshal(data, v); err != nil {
		ct := resp.Header.Get("Content-Type")
		return fmt.Errorf("%s: answer is not the expected JSON (content type %q): %w", label, ct, err)
	}
	return nil
}

// snippet reads the start of an error answer for the error message, with
// secrets masked (a server may echo a request).
func (a *api) snippet(resp *http.Response) string {
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	s := strings.Join(strings.Fields(string(data)), " ")
	return a.scrub(s)
}

func (a *api) scrub(s string) string {
	for _, secret := range a.secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "***")
		}
	}
	return s
}

// scrubErr masks secrets in an error's message while errors.Is still sees
// the original.
func (a *api) scrubErr(err error) error {
	msg := err.Error()
	if clean := a.scrub(msg); clean != msg {
		return &scrubbed{msg: clean, err: err}
	}
	return err
}

type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

// statusError maps an HTTP status to the plugins error the host acts on.
func statusError(label string, status int, snippet string) error {
	var kind error
	msg := fmt.Sprintf("HTTP %d", status)
	switch {
	case status == http.StatusUnauthorized:
		kind, msg = plugins.ErrUnauthenticated, "the server rejected the credentials (HTTP 401): check username and apiToken"
	case status == http.StatusForbidden:
		kind, msg = plugins.ErrPermissionDenied, "access denied (HTTP 403): the credentials lack the permission"
	case status == http.StatusNotFound || status == http.StatusGone:
		kind, msg = plugins.ErrNotFound, fmt.Sprintf("not found (HTTP %d)", status)
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		kind, msg = plugins.ErrRateLimited, fmt.Sprintf("still throttled after retries (HTTP %d)", status)
	case status == http.StatusBadRequest:
		kind = plugins.ErrInvalidArgument
	}
	if snippet != "" && kind != plugins.ErrUnauthenticated {
		msg += ": " + snippet
	}
	if kind == nil {
		return fmt.Errorf("%s: %s", label, msg)
	}
	return fmt.Errorf("%s: %s: %w", label, msg, kind)
}

// retryAfter reads a Retry-After header (seconds or an HTTP date); without
// one it backs off exponentially from one second.
func retryAfter(h string, attempt int) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return time.Until(t)
	}
	return time.Second << attempt
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// redactURL drops the query of a URL for messages: it can be long, and the
// path says which request failed.
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}

// resolve makes a link from an answer (_links.next, a download link)
// absolute. Confluence writes them relative to a base that may or may not
// include the context path (/wiki on Cloud, /confluence on some Data
// Center sites): a link that already starts with the base's path is taken
// from the host.
func resolve(base, link string) (string, error) {
	if link == "" {
		return "", errors.New("empty link")
	}
	l, err := url.Parse(link)
	if err != nil {
		return "", fmt.Errorf("link %q: %w", link, err)
	}
	if l.IsAbs() {
		return l.String(), nil
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("base %q: %w", base, err)
	}
	prefix := strings.TrimRight(b.Path, "/")
	if prefix == "" || l.Path == prefix || strings.HasPrefix(l.Path, prefix+"/") {
		b.Path, b.RawPath = "", ""
		return b.ResolveReference(l).String(), nil
	}
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(link, "/"), nil
}

// sameOrigin reports whether link points at the host of base, so that
// credentials are only ever sent to the configured suite.
func sameOrigin(base, link string) bool {
	b, err1 := url.Parse(base)
	l, err2 := url.Parse(link)
	return err1 == nil && err2 == nil && strings.EqualFold(b.Scheme, l.Scheme) && strings.EqualFold(b.Host, l.Host)
}
