package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// A mirror is a shallow, bare copy of one repository in a directory of the
// cache. Syncs fetch the branch head into it (depth 1), Fetch reads blobs
// from it, and the tree of the last synced commit usually stays in it, so
// an incremental sync can diff without asking the server for old history.
//
// Plugins are stateless by contract; the mirrors are only a cache: any of
// them may be evicted, and a fresh process rebuilds what it needs.
type mirror struct {
	// mu serialises all use of repo: go-git repositories are not safe for
	// concurrent use.
	mu   sync.Mutex
	dir  string
	repo *gogit.Repository
	// textual caches whether a blob's bytes are text (no NUL, not an LFS
	// pointer), so that a sync reads a file's first bytes only once.
	textual map[plumbing.Hash]bool

	// Guarded by mirrors.mu.
	refs    int
	used    time.Time
	dropped bool
}

// mirrors is the cache of mirrors, keyed by repository and credentials.
type mirrors struct {
	parent string // where the cache directory is created; "" for the system's temp dir
	max    int
	idle   time.Duration

	mu      sync.Mutex
	dir     string // created on first use
	entries map[string]*mirror
	closed  bool
}

// acquire returns the mirror for cfg, creating it if needed; call release
// when done. The mirror is not locked.
func (ms *mirrors) acquire(cfg Config) (*mirror, func(), error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.closed {
		return nil, nil, errors.New("git: connector closed")
	}
	if ms.dir == "" {
		dir, err := os.MkdirTemp(ms.parent, "docindex-git-")
		if err != nil {
			return nil, nil, fmt.Errorf("git: cache directory: %w", err)
		}
		ms.dir = dir
	}
	if ms.entries == nil {
		ms.entries = map[string]*mirror{}
	}
	key := cfg.mirrorKey()
	m := ms.entries[key]
	if m == nil {
		ms.evict(ms.max-1, key)
		var err error
		if m, err = ms.create(key, cfg.URL); err != nil {
			return nil, nil, err
		}
		ms.entries[key] = m
	} else {
		ms.evict(ms.max, key)
	}
	m.refs++
	m.used = time.Now()
	var once sync.Once
	release := func() { once.Do(func() { ms.release(m) }) }
	return m, release, nil
}

func (ms *mirrors) create(key, url string) (*mirror, error) {
	// A unique directory: a dropped mirror of the same key may still be in
	// use and own the previous one.
	dir, err := os.MkdirTemp(ms.dir, key[:12]+"-")
	if err != nil {
		return nil, fmt.Errorf("git: cache directory: %w", err)
	}
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	repo, err := gogit.Init(st, nil) // nil worktree: bare, nothing is checked out
	if err == nil {
		_, err = repo.CreateRemote(&gitconfig.RemoteConfig{Name: "origin", URLs: []string{url}})
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("git: initialise the local mirror: %w", err)
	}
	return &mirror{dir: dir, repo: repo, textual: map[plumbing.Hash]bool{}}, nil
}

func (ms *mirrors) release(m *mirror) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	m.refs--
	m.used = time.Now()
	if m.dropped && m.refs == 0 {
		os.RemoveAll(m.dir)
	}
}

// evict drops idle mirrors and, beyond keep, the least recently used
// unused ones, sparing the mirror of key (about to be used). Called with
// ms.mu held.
func (ms *mirrors) evict(keep int, key string) {
	type entry struct {
		key string
		m   *mirror
	}
	var unused []entry
	for k, m := range ms.entries {
		if m.refs == 0 && k != key {
			unused = append(unused, entry{k, m})
		}
	}
	sort.Slice(unused, func(i, j int) bool { return unused[i].m.used.Before(unused[j].m.used) })
	excess := len(ms.entries) - max(keep, 0)
	for _, e := range unused {
		if excess <= 0 && time.Since(e.m.used) < ms.idle {
			break
		}
		delete(ms.entries, e.key)
		os.RemoveAll(e.m.dir)
		excess--
	}
}

// close removes the cache directory. Operations still running fail.
func (ms *mirrors) close() error {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.closed = true
	for _, m := range ms.entries {
		m.dropped = true
	}
	ms.entries = nil
	if ms.dir == "" {
		return nil
	}
	if err := os.RemoveAll(ms.dir); err != nil {
		return fmt.Errorf("git: remove the cache directory: %w", err)
	}
	return nil
}

// tempDir is where Fetch spools large blobs.
func (ms *mirrors) tempDir() string {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.dir
}

// auth returns the HTTP credentials of cfg, nil for anonymous access.
func auth(cfg Config) transport.AuthMethod {
	if cfg.Token == "" {
		return nil
	}
	user := cfg.Username
	if user == "" {
		user = "git"
	}
	return &http.BasicAuth{Username: user, Password: cfg.Token}
}

// head resolves the configured branch on the remote and makes sure its
// head commit is in the mirror. Call with m.mu held.
func (m *mirror) head(ctx context.Context, cfg Config) (branch string, commit *object.Commit, err error) {
	remote, err := m.repo.Remote("origin")
	if err != nil {
		return "", nil, fmt.Errorf("git: mirror: %w", err)
	}
	refs, err := remote.ListContext(ctx, &gogit.ListOptions{Auth: auth(cfg)})
	if err != nil {
		return "", nil, remoteError("list the branches of", cfg, err)
	}
	branch, hash, err := pickBranch(refs, cfg.Branch)
	if err != nil {
		return "", nil, fmt.Errorf("git: %s: %w", repoLabel(cfg.URL), err)
	}
	if c, err := m.repo.CommitObject(hash); err == nil {
		return branch, c, nil
	}
	local := plumbing.ReferenceName("refs/remotes/origin/" + branch)
	err = m.repo.FetchContext(ctx, &gogit.FetchOptions{
		RemoteName: "origin",
		RefSpecs:   []gitconfig.RefSpec{gitconfig.RefSpec("+" + plumbing.NewBranchReferenceName(branch).String() + ":" + local.String())},
		Depth:      1,
		Auth:       auth(cfg),
		Tags:       gogit.NoTags,
		Force:      true,
	})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		return "", nil, remoteError("fetch branch "+branch+" of", cfg, err)
	}
	// The branch may have moved since the listing: what was fetched is the
	// head now.
	ref, err := m.repo.Reference(local, true)
	if err != nil {
		return "", nil, fmt.Errorf("git: %s: fetched branch %s but it is not in the mirror: %w", repoLabel(cfg.URL), branch, err)
	}
	c, err := m.repo.CommitObject(ref.Hash())
	if err != nil {
		return "", nil, fmt.Errorf("git: %s: head commit %s of branch %s: %w", repoLabel(cfg.URL), ref.Hash(), branch, err)
	}
	return branch, c, nil
}

// pickBranch finds the branch to sync among the remote's references: the
// one named, or the one HEAD points to.
func pickBranch(refs []*plumbing.Reference, want string) (string, plumbing.Hash, error) {
	byName := map[plumbing.ReferenceName]*plumbing.Reference{}
	for _, r := range refs {
		byName[r.Name()] = r
	}
	resolve := func(name plumbing.ReferenceName) (plumbing.Hash, bool) {
		r, ok := byName[name]
		if !ok || r.Type() != plumbing.HashReference {
			return plumbing.ZeroHash, false
		}
		return r.Hash(), true
	}
	if want != "" {
		h, ok := resolve(plumbing.NewBranchReferenceName(want))
		if !ok {
			return "", plumbing.ZeroHash, fmt.Errorf("%w: %q", errBranchNotFound, want)
		}
		return want, h, nil
	}
	head, ok := byName[plumbing.HEAD]
	if !ok {
		return "", plumbing.ZeroHash, fmt.Errorf("the remote does not say which branch HEAD is; set branch: %w", errBranchNotFound)
	}
	if head.Type() == plumbing.SymbolicReference && head.Target().IsBranch() {
		if h, ok := resolve(head.Target()); ok {
			return head.Target().Short(), h, nil
		}
	}
	// A server that does not advertise where HEAD points: take a branch
	// with HEAD's commit, the usual default names first.
	var names []string
	for name, r := range byName {
		if name.IsBranch() && r.Type() == plumbing.HashReference && r.Hash() == head.Hash() {
			names = append(names, name.Short())
		}
	}
	sort.Slice(names, func(i, j int) bool {
		return rank(names[i]) < rank(names[j]) || rank(names[i]) == rank(names[j]) && names[i] < names[j]
	})
	if len(names) == 0 {
		return "", plumbing.ZeroHash, fmt.Errorf("HEAD matches no branch; set branch: %w", errBranchNotFound)
	}
	return names[0], head.Hash(), nil
}

func rank(branch string) int {
	if i := slices.Index([]string{"main", "master", "trunk"}, branch); i >= 0 {
		return i
	}
	return 3
}

// commitAt returns the commit with hash h, fetching it (depth 1) when the
// mirror lacks it. Servers hand out a commit by hash only when they
// advertise allow-reachable-sha1-in-want or allow-tip-sha1-in-want, and only
// while a branch or tag reaches it (not after a force push removed it).
// Call with m.mu held.
func (m *mirror) commitAt(ctx context.Context, cfg Config, h plumbing.Hash) (*object.Commit, error) {
	if c, err := m.repo.CommitObject(h); err == nil {
		return c, nil
	}
	err := m.repo.FetchContext(ctx, &gogit.FetchOptions{
		RemoteName: "origin",
		RefSpecs:   []gitconfig.RefSpec{gitconfig.RefSpec(h.String() + ":refs/docindex/base")},
		Depth:      1,
		Auth:       auth(cfg),
		Tags:       gogit.NoTags,
	})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		if errors.Is(err, gogit.ErrExactSHA1NotSupported) {
			return nil, errors.New("the server does not hand out commits by hash")
		}
		return nil, remoteError("fetch commit "+h.String()+" of", cfg, err)
	}
	c, err := m.repo.CommitObject(h)
	if err != nil {
		return nil, fmt.Errorf("commit %s not received: %w", h, err)
	}
	return c, nil
}

// isText tells whether a blob's content is text, reading its first bytes
// once per blob. Call with m.mu held.
func (m *mirror) isText(b *object.Blob) (bool, error) {
	if t, ok := m.textual[b.Hash]; ok {
		return t, nil
	}
	r, err := b.Reader()
	if err != nil {
		return false, fmt.Errorf("git: read blob %s: %w", b.Hash, err)
	}
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(r, head)
	r.Close()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("git: read blob %s: %w", b.Hash, err)
	}
	t := textual(head[:n])
	m.textual[b.Hash] = t
	return t, nil
}

// walk calls fn for every entry of tree that is not a directory, with its
// full path, in tree order. Unlike object.TreeWalker it reports a missing
// subtree as an error instead of ending early, which would turn a damaged
// mirror into a listing that deletes items.
func walk(ctx context.Context, repo *gogit.Repository, tree *object.Tree, prefix string, fn func(p string, e object.TreeEntry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, e := range tree.Entries {
		p := e.Name
		if prefix != "" {
			p = prefix + "/" + e.Name
		}
		if e.Mode != filemode.Dir {
			if err := fn(p, e); err != nil {
				return err
			}
			continue
		}
		sub, err := repo.TreeObject(e.Hash)
		if err != nil {
			return fmt.Errorf("git: tree %s (%s): %w", p, e.Hash, err)
		}
		if err := walk(ctx, repo, sub, p, fn); err != nil {
			return err
		}
	}
	return nil
}
