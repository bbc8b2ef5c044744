package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// ErrUndocumented is returned by Contract.Check for a request no operation of the document
// describes (an unknown path, or a method the path does not have).
var ErrUndocumented = errors.New("undocumented endpoint")

// uuidFormat checks format: uuid, which kin-openapi leaves unchecked by default. The server
// writes uuids in the canonical lower-case form only, so anything else is a contract breach.
var uuidFormat = openapi3.NewRegexpFormatValidator(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Contract validates HTTP exchanges against the embedded openapi.yaml. It checks responses
// only: by the time a test sees a response the server has consumed the request body, and
// tests send malformed requests on purpose. It is safe for concurrent use.
type Contract struct {
	doc      *openapi3.T
	router   routers.Router
	basePath string
}

// ContractOption configures a Contract.
type ContractOption func(*Contract)

// WithBasePath strips prefix from request paths before they are matched, for a module
// mounted on a bunrouter group below the root (e.g. "/docindex").
func WithBasePath(prefix string) ContractOption {
	return func(c *Contract) { c.basePath = strings.TrimSuffix(prefix, "/") }
}

// NewContract loads the embedded document and validates it; an invalid document is an error.
func NewContract(opts ...ContractOption) (*Contract, error) {
	doc, err := LoadOpenAPI()
	if err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi router: %w", err)
	}
	c := &Contract{doc: doc, router: router}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// LoadOpenAPI parses the embedded openapi.yaml and validates it as an OpenAPI document.
func LoadOpenAPI() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("load openapi.yaml: %w", err)
	}
	// Examples and defaults are checked too: a wrong example would mislead readers.
	if err := doc.Validate(loader.Context, openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("validate openapi.yaml: %w", err)
	}
	return doc, nil
}

// Doc returns the loaded document (do not modify it).
func (c *Contract) Doc() *openapi3.T { return c.doc }

// Check validates one exchange: req must match a documented operation (else ErrUndocumented),
// status must be one of its documented responses, and header (Content-Type, documented
// headers) and body must match that response. req's body is not read.
func (c *Contract) Check(req *http.Request, status int, header http.Header, body []byte) error {
	where := fmt.Sprintf("%s %s -> %d", req.Method, req.URL.Path, status)
	route, params, err := c.findRoute(req)
	if err != nil {
		return fmt.Errorf("contract: %s: %w (%v)", where, ErrUndocumented, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: params,
			Route:      route,
		},
		Status: status,
		Header: header,
		Options: &openapi3filter.Options{
			// An undocumented status is as much a breach as a wrong body.
			IncludeResponseStatus: true,
			MultiError:            true,
			// No request validation runs (see Contract), so no AuthenticationFunc and no
			// ExcludeRequestBody are needed: security and the consumed body are never looked at.
			SchemaValidationOptions: []openapi3.SchemaValidationOption{
				openapi3.WithStringFormatValidator("uuid", uuidFormat),
			},
		},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("contract: %s (operation %s): %w\nbody: %s", where, route.Operation.OperationID, err, clip(body))
	}
	return nil
}

func (c *Contract) findRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	if c.basePath != "" {
		p, ok := strings.CutPrefix(req.URL.Path, c.basePath)
		if !ok {
			return nil, nil, fmt.Errorf("path is not under %s", c.basePath)
		}
		r := req.Clone(req.Context())
		r.URL.Path, r.URL.RawPath = p, ""
		req = r
	}
	return c.router.FindRoute(req)
}

// Transport returns a RoundTripper (over base, or http.DefaultTransport when nil) that checks
// every response it carries and reports a mismatch with t.Errorf. The caller still gets the
// response, body intact, so the test's own assertions run as well.
func (c *Contract) Transport(base http.RoundTripper, t testing.TB) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &checkingTransport{base: base, c: c, t: t}
}

type checkingTransport struct {
	base http.RoundTripper
	c    *Contract
	t    testing.TB
}

func (ct *checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := ct.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("contract: read response of %s %s: %w", req.Method, req.URL.Path, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := ct.c.Check(req, resp.StatusCode, resp.Header, body); err != nil {
		// Errorf, not Fatalf: RoundTrip may run outside the test's goroutine.
		ct.t.Errorf("%v", err)
	}
	return resp, nil
}

// clip shortens a body for an error message.
func clip(b []byte) string {
	const max = 2000
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
