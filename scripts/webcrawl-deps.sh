#!/usr/bin/env bash
# webcrawl-deps.sh: the documentation site the tests of connectors/webcrawl crawl.
#
# Installs postgresql-doc-15 (Debian), whose HTML manual under
# /usr/share/doc/postgresql-doc-15/html (about 1,200 pages) the tests serve on
# loopback and crawl. Debian's nodejs-doc is not used: it conflicts with the
# nodejs package this machine has. Idempotent: a second run checks the manual
# and exits silently. Runs as root (apt-get).
set -euo pipefail

die() { echo "webcrawl-deps: error: $*" >&2; exit 1; }

doc=/usr/share/doc/postgresql-doc-15/html/index.html
[ -f "$doc" ] && exit 0

pkg=postgresql-doc-15
[ "$(id -u)" = 0 ] || die "missing $pkg; run this script as root, or: apt-get install $pkg"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
# Try without refreshing the lists first: a fresh machine may hold lists already.
if ! apt-get install -y --no-install-recommends "$pkg" >"$log" 2>&1; then
  apt-get update >>"$log" 2>&1 || { tail -n 15 "$log" >&2; die "apt-get update failed"; }
  apt-get install -y --no-install-recommends "$pkg" >>"$log" 2>&1 \
    || { tail -n 15 "$log" >&2; die "could not install $pkg"; }
fi
[ -f "$doc" ] || die "$pkg installed but $doc is missing"
