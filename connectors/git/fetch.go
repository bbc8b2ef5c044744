package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

// memoryLimit is the largest blob Fetch hands out from memory; larger ones
// are spooled to a temporary file, so that the mirror is not held locked
// while a slow reader consumes the body.
const memoryLimit = 1 << 20

// Fetch returns a file's content. The item's Version (a blob hash) is read
// from the mirror when present; otherwise the path is looked up in the
// branch head, fetched if need be. Files the listing leaves out (filtered,
// binary, too large) are plugins.ErrNotFound.
func (c *Connector) Fetch(ctx context.Context, req connector.FetchRequest) (*connector.Content, error) {
	cfg, err := parseConfig(req.Config)
	if err != nil {
		return nil, err
	}
	p := req.Item.ID
	if p == "" {
		return nil, fmt.Errorf("git: fetch: item without an ID: %w", plugins.ErrInvalidArgument)
	}
	if !cfg.selects(p) {
		return nil, fmt.Errorf("git: fetch %s: excluded by include/exclude: %w", p, plugins.ErrNotFound)
	}
	m, release, err := c.mirrors.acquire(cfg)
	if err != nil {
		return nil, err
	}
	defer release()
	m.mu.Lock()
	defer m.mu.Unlock()

	blob, err := m.blob(ctx, cfg, p, req.Item.Version)
	if err != nil {
		return nil, scrub(cfg, err)
	}
	body, err := c.spool(blob)
	if err != nil {
		return nil, fmt.Errorf("git: fetch %s: %w", p, err)
	}
	ct, _, _ := typeByName(p)
	return &connector.Content{
		ContentType: ct,
		Name:        path.Base(p),
		Size:        blob.Size,
		Version:     blob.Hash.String(),
		Body:        body,
	}, nil
}

// blob finds the content of path p: the blob named by version if the
// mirror has it, else the file in the branch head. Call with m.mu held.
func (m *mirror) blob(ctx context.Context, cfg Config, p, version string) (*object.Blob, error) {
	if plumbing.IsHash(version) {
		if b, err := m.repo.BlobObject(plumbing.NewHash(version)); err == nil {
			return b, nil
		}
	}
	branch, head, err := m.head(ctx, cfg)
	if errors.Is(err, errEmpty) {
		return nil, fmt.Errorf("git: fetch %s: %w: %w", p, err, plugins.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	tree, err := head.Tree()
	if err != nil {
		return nil, fmt.Errorf("git: tree of %s: %w", head.Hash, err)
	}
	e, err := tree.FindEntry(p)
	if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, fmt.Errorf("git: fetch %s: no such file on branch %s: %w", p, branch, plugins.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("git: fetch %s: %w", p, err)
	}
	l := &lister{cfg: cfg, m: m, branch: branch, commit: head.Hash}
	if _, ok, err := l.item(p, *e); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("git: fetch %s: not indexed (not a regular file, binary or larger than maxFileSize): %w", p, plugins.ErrNotFound)
	}
	b, err := m.repo.BlobObject(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("git: blob %s (%s): %w", p, e.Hash, err)
	}
	return b, nil
}

// spool copies a blob out of the mirror: into memory when small, into a
// temporary file removed on Close otherwise.
func (c *Connector) spool(b *object.Blob) (io.ReadCloser, error) {
	r, err := b.Reader()
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", b.Hash, err)
	}
	defer r.Close()
	if b.Size <= memoryLimit {
		var buf bytes.Buffer
		buf.Grow(int(b.Size))
		if _, err := io.Copy(&buf, r); err != nil {
			return nil, fmt.Errorf("read blob %s: %w", b.Hash, err)
		}
		return io.NopCloser(&buf), nil
	}
	f, err := os.CreateTemp(c.mirrors.tempDir(), "blob-*")
	if err != nil {
		return nil, fmt.Errorf("spool blob: %w", err)
	}
	tf := &tempFile{f}
	n, err := io.Copy(f, r)
	if err == nil && n != b.Size {
		err = fmt.Errorf("%d bytes, the blob says %d", n, b.Size)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		tf.Close()
		return nil, fmt.Errorf("spool blob %s: %w", b.Hash, err)
	}
	return tf, nil
}

// tempFile is a spooled blob that removes itself when closed.
type tempFile struct{ *os.File }

func (t *tempFile) Close() error {
	err := t.File.Close()
	if rmErr := os.Remove(t.Name()); err == nil {
		err = rmErr
	}
	return err
}
