#!/usr/bin/env bash
# filecloud-deps.sh: the servers that the tests of connectors/filecloud run on loopback.
#
# - rclone (Debian package), whose `rclone serve webdav` is the WebDAV server;
# - versitygw, the S3 gateway, through scripts/s3gw.sh (into .tools/bin).
# Idempotent: a second run only checks and exits silently. Runs as root (apt-get).
set -euo pipefail

die() { echo "filecloud-deps: error: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v rclone >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || die "rclone is missing; run this script as root, or: apt-get install rclone"
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  export DEBIAN_FRONTEND=noninteractive
  # Try without refreshing the lists first: a fresh machine may hold lists already.
  if ! apt-get install -y --no-install-recommends rclone >"$log" 2>&1; then
    apt-get update >>"$log" 2>&1 || { tail -n 15 "$log" >&2; die "apt-get update failed"; }
    apt-get install -y --no-install-recommends rclone >>"$log" 2>&1 \
      || { tail -n 15 "$log" >&2; die "could not install rclone"; }
  fi
  command -v rclone >/dev/null 2>&1 || die "rclone installed but not on PATH"
fi

bash "$here/s3gw.sh" || die "scripts/s3gw.sh could not install versitygw"
