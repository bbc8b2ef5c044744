package git

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"path"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/docindex/docindex/plugins/connector"
)

// cursor is what a checkpoint carries: the commit the sync listed, and the
// scope (filters) it was listed under.
type cursor struct {
	Commit string `json:"commit"`
	Scope  string `json:"scope"`
}

// Sync lists the files of the branch head. Without a cursor, or when the
// cursor's commit cannot be had, it sends Snapshot and every file; with a
// cursor it sends upserts and deletes for what changed between the cursor's
// commit and the head. Either ends with a checkpoint of the head.
func (c *Connector) Sync(ctx context.Context, req connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		cfg, err := parseConfig(req.Config)
		if err != nil {
			yield(connector.Event{}, err)
			return
		}
		// The plan is made in full before the first event: the mirror stays
		// locked while it is read, and a host may call Fetch (which needs
		// the mirror) while it consumes the events.
		events, err := c.plan(ctx, cfg, req.Cursor)
		if err != nil {
			yield(connector.Event{}, scrub(cfg, err))
			return
		}
		for _, ev := range events {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (c *Connector) plan(ctx context.Context, cfg Config, rawCursor []byte) ([]connector.Event, error) {
	m, release, err := c.mirrors.acquire(cfg)
	if err != nil {
		return nil, err
	}
	defer release()
	m.mu.Lock()
	defer m.mu.Unlock()

	branch, head, err := m.head(ctx, cfg)
	if errors.Is(err, errEmpty) {
		c.log.Info("git: the repository has no commits: listing nothing", "repository", repoLabel(cfg.URL))
		return []connector.Event{connector.Snapshot()}, nil
	}
	if err != nil {
		return nil, err
	}
	next, err := json.Marshal(cursor{Commit: head.Hash.String(), Scope: cfg.scope()})
	if err != nil {
		return nil, fmt.Errorf("git: cursor: %w", err)
	}
	l := &lister{cfg: cfg, m: m, branch: branch, commit: head.Hash}

	base, why := c.base(ctx, cfg, m, rawCursor)
	if base != nil {
		if base.Hash == head.Hash {
			return []connector.Event{connector.Checkpoint(next)}, nil
		}
		events, err := l.diff(ctx, base, head)
		if err == nil {
			c.log.Info("git: sent the changes since the last sync", "repository", repoLabel(cfg.URL),
				"branch", branch, "from", base.Hash.String(), "to", head.Hash.String(), "events", len(events))
			return append(events, connector.Checkpoint(next)), nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		why = err.Error()
	}
	if why != "" {
		c.log.Info("git: listing every file instead of the changes since the last sync",
			"repository", repoLabel(cfg.URL), "reason", scrub(cfg, errors.New(why)).Error())
	}
	l.skipped = 0
	events, err := l.all(ctx, head)
	if err != nil {
		return nil, err
	}
	c.log.Info("git: listed the branch head", "repository", repoLabel(cfg.URL), "branch", branch,
		"commit", head.Hash.String(), "files", len(events)-1, "skipped", l.skipped)
	return append(events, connector.Checkpoint(next)), nil
}

// base returns the commit of the last sync, from the cursor, or nil and
// why not (empty when there is simply no cursor).
func (c *Connector) base(ctx context.Context, cfg Config, m *mirror, raw []byte) (*object.Commit, string) {
	if len(raw) == 0 {
		return nil, ""
	}
	var cur cursor
	if err := json.Unmarshal(raw, &cur); err != nil || !plumbing.IsHash(cur.Commit) {
		return nil, "the cursor is not one this connector wrote"
	}
	if cur.Scope != cfg.scope() {
		return nil, "include, exclude or maxFileSize changed since the last sync"
	}
	commit, err := m.commitAt(ctx, cfg, plumbing.NewHash(cur.Commit))
	if err != nil {
		return nil, fmt.Sprintf("commit %s of the last sync is not available (history rewritten by a force push, or a server that hands out only branch heads): %v", cur.Commit, err)
	}
	return commit, ""
}

// lister turns the tree entries of one commit into items.
type lister struct {
	cfg     Config
	m       *mirror
	branch  string
	commit  plumbing.Hash
	skipped int
}

// all lists every indexed file of commit, after a Snapshot.
func (l *lister) all(ctx context.Context, commit *object.Commit) ([]connector.Event, error) {
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("git: tree of %s: %w", commit.Hash, err)
	}
	events := []connector.Event{connector.Snapshot()}
	err = walk(ctx, l.m.repo, tree, "", func(p string, e object.TreeEntry) error {
		it, ok, err := l.item(p, e)
		if ok {
			events = append(events, connector.Upsert(it))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return events, nil
}

// diff sends what changed from base to head: upserts for added and
// modified files, deletes for removed ones. A rename is a delete and an
// upsert, since the path is the item's ID. Only the trees are compared, so
// base need not be an ancestor of head (a force push changes nothing here).
func (l *lister) diff(ctx context.Context, base, head *object.Commit) ([]connector.Event, error) {
	from, err := base.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", base.Hash, err)
	}
	to, err := head.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", head.Hash, err)
	}
	changes, err := object.DiffTreeWithOptions(ctx, from, to, nil) // no rename detection
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s: %w", base.Hash, head.Hash, err)
	}
	old := &lister{cfg: l.cfg, m: l.m, branch: l.branch, commit: base.Hash}
	var events []connector.Event
	for _, ch := range changes {
		var was, is bool
		var it connector.Item
		if ch.From.Name != "" {
			if _, was, err = old.item(ch.From.Name, ch.From.TreeEntry); err != nil {
				return nil, err
			}
		}
		if ch.To.Name != "" {
			if it, is, err = l.item(ch.To.Name, ch.To.TreeEntry); err != nil {
				return nil, err
			}
		}
		// A file that turned binary, grew too large or became a symlink
		// leaves the index like a deleted one.
		if was && (!is || ch.From.Name != ch.To.Name) {
			events = append(events, connector.Delete(ch.From.Name))
		}
		if is {
			events = append(events, connector.Upsert(it))
		}
	}
	return events, nil
}

// item builds the item of a file; ok is false for a file that is not
// indexed: filtered out, not a regular file (symlink, submodule), too large,
// or binary in a format docindex does not read.
func (l *lister) item(p string, e object.TreeEntry) (connector.Item, bool, error) {
	if !regular(e.Mode) || !l.cfg.selects(p) {
		return connector.Item{}, false, nil
	}
	ct, sniff, skip := typeByName(p)
	if skip {
		l.skipped++
		return connector.Item{}, false, nil
	}
	blob, err := l.m.repo.BlobObject(e.Hash)
	if err != nil {
		return connector.Item{}, false, fmt.Errorf("git: blob %s (%s): %w", p, e.Hash, err)
	}
	if blob.Size > l.cfg.maxFileSize() {
		l.skipped++
		return connector.Item{}, false, nil
	}
	if sniff {
		text, err := l.m.isText(blob)
		if err != nil {
			return connector.Item{}, false, err
		}
		if !text {
			l.skipped++
			return connector.Item{}, false, nil
		}
	}
	it := connector.Item{
		ID:          p,
		Version:     e.Hash.String(),
		Name:        path.Base(p),
		Path:        p,
		ContentType: ct,
		Size:        blob.Size,
		Metadata: map[string]any{
			"path":       p,
			"commit":     l.commit.String(),
			"branch":     l.branch,
			"repository": repoLabel(l.cfg.URL),
		},
	}
	if l.cfg.WebURLTemplate != "" {
		it.URL = expand(l.cfg.WebURLTemplate, l.commit.String(), l.branch, p, e.Hash.String())
		it.Metadata["webUrl"] = it.URL
	}
	return it, true, nil
}

// regular reports whether a tree entry is a file with content of its own.
func regular(m filemode.FileMode) bool {
	return m == filemode.Regular || m == filemode.Executable || m == filemode.Deprecated
}
