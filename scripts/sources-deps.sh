#!/usr/bin/env bash
# sources-deps.sh: the servers the end-to-end tests of integration/sources sync from.
#
# Those tests run each connector against the real server its own tests use, so they need what
# the connectors' scripts install: the PostgreSQL manual (webcrawl), git with git-http-backend
# (git), rclone and versitygw (filecloud), MediaWiki with php-cli and php-sqlite3 (docsuite).
# Idempotent: each script checks first and is silent when everything is there. Runs as root
# (apt-get).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
for s in webcrawl-deps.sh git-deps.sh filecloud-deps.sh docsuite-deps.sh; do
  bash "$here/$s" || { echo "sources-deps: error: scripts/$s failed" >&2; exit 1; }
done
