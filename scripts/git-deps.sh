#!/usr/bin/env bash
# git-deps.sh: what the tests of connectors/git need.
#
# The tests serve repositories with git's own smart-HTTP server, git-http-backend
# (in `git --exec-path`), run as CGI by Go's net/http/cgi, and build the
# repositories with the git command line. Debian's `git` package holds both.
# Idempotent: a second run checks and exits silently. Runs as root (apt-get).
set -euo pipefail

die() { echo "git-deps: error: $*" >&2; exit 1; }

have() {
  command -v git >/dev/null 2>&1 && [ -x "$(git --exec-path 2>/dev/null)/git-http-backend" ]
}

have && exit 0

[ "$(id -u)" = 0 ] || die "git or git-http-backend is missing; run this script as root, or: apt-get install git"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
# Try without refreshing the lists first: a fresh machine may hold lists already.
if ! apt-get install -y --no-install-recommends git >"$log" 2>&1; then
  apt-get update >>"$log" 2>&1 || { tail -n 15 "$log" >&2; die "apt-get update failed"; }
  apt-get install -y --no-install-recommends git >>"$log" 2>&1 \
    || { tail -n 15 "$log" >&2; die "could not install git"; }
fi
have || die "installed git but git-http-backend is still missing from $(git --exec-path)"
