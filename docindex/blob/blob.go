package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	gcblob "gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// ErrNotFound is returned (wrapped) by Open for a key that holds no blob.
var ErrNotFound = errors.New("blob: not found")

// ErrInvalidKey is wrapped by every error about a malformed key.
var ErrInvalidKey = errors.New("blob: invalid key")

// Store holds blobs under string keys.
type Store interface {
	// Put streams r into the blob at key, replacing any previous one, and
	// returns the bytes written. An empty contentType is sniffed from the
	// first 512 bytes. When r fails or ctx ends, nothing is stored and the
	// previous blob, if any, stays.
	Put(ctx context.Context, key string, r io.Reader, contentType string) (int64, error)
	// Open returns a reader of the blob at key, or an error wrapping
	// ErrNotFound. Reads are bound to ctx.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes the blob at key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// Exists reports whether a blob is stored at key.
	Exists(ctx context.Context, key string) (bool, error)
	// Close releases the store's resources.
	Close() error
}

const (
	// maxKeyLen is S3's limit, the tighter of the two backends.
	maxKeyLen = 1024
	// partSize and partConcurrency bound an S3 upload's memory to about
	// partSize * (partConcurrency + 1). 5 MiB is S3's smallest part.
	partSize        = 5 << 20
	partConcurrency = 2
)

// CheckKey reports whether key is acceptable to every Store: a relative,
// slash-separated path of at most 1024 bytes of UTF-8 without control
// characters or backslashes, with no empty, "." or ".." segment (so it can
// never leave the store's directory), and not ending in ".attrs" (the
// directory store keeps attributes in such files).
func CheckKey(key string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, why) }
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case len(key) > maxKeyLen:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidKey, len(key), maxKeyLen)
	case !utf8.ValidString(key):
		return bad("not UTF-8")
	case strings.HasPrefix(key, "/"):
		return bad("absolute path")
	case strings.ContainsRune(key, '\\'):
		return bad("backslash")
	case strings.HasSuffix(key, ".attrs"):
		return bad(`ends in ".attrs"`)
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return bad("control character")
		}
	}
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "":
			return bad("empty path segment")
		case ".", "..":
			return bad(`"." or ".." segment`)
		}
	}
	return nil
}

// store implements Store over a gocloud bucket.
type store struct {
	bucket *gcblob.Bucket
	where  string // for errors; never holds credentials
	root   string // the directory of a directory store; "" for object stores
}

func (s *store) Put(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	if err := CheckKey(key); err != nil {
		return 0, err
	}
	// gocloud aborts a write when the writer's context is cancelled before
	// Close: that is how a failed copy avoids storing a truncated blob.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.bucket.NewWriter(wctx, key, &gcblob.WriterOptions{
		ContentType:    contentType,
		BufferSize:     partSize,
		MaxConcurrency: partConcurrency,
	})
	if err != nil {
		return 0, fmt.Errorf("blob: put %q in %s: %w", key, s.where, err)
	}
	n, err := io.Copy(w, r)
	if err != nil {
		cancel()
		_ = w.Close() // reports the cancellation; the copy error is the news
		return n, fmt.Errorf("blob: put %q in %s: %w", key, s.where, err)
	}
	if err := w.Close(); err != nil {
		return n, fmt.Errorf("blob: put %q in %s: %w", key, s.where, err)
	}
	return n, nil
}

func (s *store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	r, err := s.bucket.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("blob: open %q in %s: %w", key, s.where, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("blob: open %q in %s: %w", key, s.where, err)
	}
	return r, nil
}

func (s *store) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	err := s.bucket.Delete(ctx, key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("blob: delete %q in %s: %w", key, s.where, err)
	}
	s.pruneDirs(key)
	return nil
}

// pruneDirs removes the directories of a deleted key that are now empty, in a directory store:
// object stores have no directories, but on a disk every uploaded file ("files/<id>/<name>")
// would otherwise leave its own empty directory behind. Removal stops at the first directory
// that is not empty (os.Remove refuses those) and never takes a top-level one ("files"), which a
// concurrent Put may be creating a directory in.
func (s *store) pruneDirs(key string) {
	if s.root == "" {
		return
	}
	for dir := path.Dir(key); strings.Contains(dir, "/"); dir = path.Dir(dir) {
		if os.Remove(filepath.Join(s.root, filepath.FromSlash(dir))) != nil {
			return
		}
	}
}

func (s *store) Exists(ctx context.Context, key string) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	ok, err := s.bucket.Exists(ctx, key)
	if err != nil {
		return false, fmt.Errorf("blob: exists %q in %s: %w", key, s.where, err)
	}
	return ok, nil
}

func (s *store) Close() error {
	if err := s.bucket.Close(); err != nil {
		return fmt.Errorf("blob: close %s: %w", s.where, err)
	}
	return nil
}
