#!/usr/bin/env bash
# s3gw.sh: install versitygw, the S3 gateway the blob store tests run against, into
# the project-local .tools/bin (gitignored).
#
#   scripts/s3gw.sh         install when missing or at another version; quiet on success
#   scripts/s3gw.sh path    the same, then print the binary's path (the only line on stdout)
#
# The tests start the gateway themselves (on a free loopback port) and find the binary
# through DOCINDEX_VERSITYGW or .tools/bin/versitygw. Building it takes about a minute
# the first time; later calls only check the version stamped into the binary.
set -euo pipefail

version=v1.8.0
module=github.com/versity/versitygw
root=$(cd "$(dirname "$0")/.." && pwd)
bindir=$root/.tools/bin
bin=$bindir/versitygw

die() { echo "s3gw: error: $*" >&2; exit 1; }

installed_version() {
  # `go version -m` reads the module version Go stamped into the binary.
  go version -m "$bin" 2>/dev/null | awk -v m="$module" '$1 == "mod" && $2 == m { print $3 }'
}

command -v go >/dev/null 2>&1 || die "go is not on PATH; install Go first"

if [ ! -x "$bin" ] || [ "$(installed_version)" != "$version" ]; then
  mkdir -p "$bindir"
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  if ! GOBIN=$bindir GOFLAGS=-buildvcs=false go install "$module/cmd/versitygw@$version" >"$log" 2>&1; then
    cat "$log" >&2
    die "go install $module/cmd/versitygw@$version failed (needs the Go module proxy)"
  fi
  [ "$(installed_version)" = "$version" ] || die "installed $bin but it does not report $module $version"
fi

if [ "${1:-}" = path ]; then
  echo "$bin"
fi
