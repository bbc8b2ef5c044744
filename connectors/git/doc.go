// Package git is the docindex connector for git repositories: it indexes the
// files of one branch, fetched over HTTP(S) with go-git, and keeps the index
// in step by diffing commits.
//
// # Configuration
//
// The keys (see the JSON Schema Describe returns) are url (required),
// branch (default: the remote's HEAD), include and exclude (path globs, see
// Match), username and token (HTTP basic authentication; the token is
// secret), webUrlTemplate (placeholders {commit}, {branch}, {path}, {blob})
// and maxFileSize (bytes, default 50 MiB).
//
// # Items
//
// An item is a file of the branch head: its ID is the path, its Version the
// blob hash (so it changes exactly when the content does), its metadata the
// path, commit, branch, repository URL and, with a template, the web URL.
// Symlinks, submodules, Git LFS pointers, files over maxFileSize and binary
// files are skipped, except the binary document formats docindex extracts
// (PDF, DOCX, PPTX, XLSX, ODT). Content types come from the extension.
//
// # Syncs
//
// The connector keeps a shallow (depth 1), bare mirror of each repository
// in a cache directory, fetching only the branch head. A sync without a
// cursor sends Snapshot and every file. The checkpoint's cursor is the
// synced commit; a sync from it diffs that commit's tree against the new
// head and sends upserts for added and modified files and deletes for
// removed ones (a rename is both). The old tree comes from the mirror, or
// is fetched by hash where the server allows it (GitHub, GitLab, and git
// http-backend with uploadpack.allowReachableSHA1InWant); when it cannot be
// had (a new process against such a server, a force push that made it
// unreachable) or the filters changed, the sync logs why and sends a full
// listing instead, which is always correct.
//
// The mirrors are a cache, not state: any may be evicted, and Close removes
// them all.
package git
