#!/usr/bin/env bash
# extract-deps.sh: the system tools that docindex/extract uses and tests.
#
# Installs poppler-utils (pdftotext, pdfinfo), which the extractor prefers for PDF text when
# it is on PATH; the tests of docindex/extract exercise that path and fail without it.
# Idempotent: a second run checks the binaries and exits silently. Runs as root (apt-get).
set -euo pipefail

die() { echo "extract-deps: error: $*" >&2; exit 1; }

need=()
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
[ ${#need[@]} -eq 0 ] && exit 0

[ "$(id -u)" = 0 ] || die "missing ${need[*]}; run this script as root, or: apt-get install ${need[*]}"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
# Try without refreshing the lists first: a fresh machine may hold lists already.
if ! apt-get install -y --no-install-recommends "${need[@]}" >"$log" 2>&1; then
  apt-get update >>"$log" 2>&1 || { tail -n 15 "$log" >&2; die "apt-get update failed"; }
  apt-get install -y --no-install-recommends "${need[@]}" >>"$log" 2>&1 \
    || { tail -n 15 "$log" >&2; die "could not install ${need[*]}"; }
fi
command -v pdftotext >/dev/null 2>&1 || die "poppler-utils installed but pdftotext is not on PATH"
