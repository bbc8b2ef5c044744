package filecloud

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// errShortListing marks a PROPFIND answer that ended before its end. The
// WebDAV client stops parsing silently at a broken or cut-off document; a
// listing missing entries would make the host delete their files.
var errShortListing = errors.New("the folder listing ended early (connection lost or malformed XML)")

// callTransport is the transport of one call's WebDAV client. gowebdav has
// no context parameters, so the call's context is attached here; it also
// checks that every folder listing was read to its end, and keeps the
// headers of the last GET for Fetch.
type callTransport struct {
	ctx  context.Context
	base http.RoundTripper

	mu       sync.Mutex
	listErr  error
	get      http.Header
	getSize  int64
	getFound bool
}

func (t *callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req.WithContext(t.ctx))
	if err != nil {
		return nil, err
	}
	switch {
	case req.Method == "PROPFIND" && resp.StatusCode == http.StatusMultiStatus:
		resp.Body = &checkedBody{rc: resp.Body, t: t}
	case req.Method == http.MethodGet:
		size := resp.ContentLength
		if resp.Uncompressed {
			size = -1
		}
		t.mu.Lock()
		t.get, t.getSize, t.getFound = resp.Header.Clone(), size, true
		t.mu.Unlock()
	}
	return resp, nil
}

// takeListErr returns (and forgets) the first problem with a listing body
// since the last call.
func (t *callTransport) takeListErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.listErr
	t.listErr = nil
	return err
}

func (t *callTransport) failList(err error) {
	t.mu.Lock()
	if t.listErr == nil {
		t.listErr = err
	}
	t.mu.Unlock()
}

// lastGet returns the headers and size of the last GET response.
func (t *callTransport) lastGet() (http.Header, int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.get, t.getSize, t.getFound
}

// checkedBody records a multistatus body that fails, is closed before its
// end, or ends without the closing tag of its root element (a response cut
// short that still ended cleanly, as a chunked one can).
type checkedBody struct {
	rc   io.ReadCloser
	t    *callTransport
	eof  bool
	tail []byte // the last bytes read, for the closing tag
}

// tailSize holds "</D:multistatus>" with room for a long namespace prefix
// and trailing white space.
const tailSize = 128

func (b *checkedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.tail = append(b.tail, p[:n]...)
	if len(b.tail) > tailSize {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-tailSize:]...)
	}
	switch {
	case err == io.EOF:
		b.eof = true
		if !bytes.HasSuffix(bytes.TrimSpace(b.tail), []byte("multistatus>")) {
			b.t.failList(errShortListing)
		}
	case err != nil:
		b.t.failList(err)
	}
	return n, err
}

func (b *checkedBody) Close() error {
	if !b.eof {
		b.t.failList(errShortListing)
	}
	return b.rc.Close()
}
