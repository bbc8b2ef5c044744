#!/usr/bin/env bash
# docsuite-deps.sh: what the tests of connectors/docsuite need.
#
# The MediaWiki flavour is tested against a real MediaWiki 1.39 (Debian's `mediawiki` package)
# served by PHP's built-in web server over an SQLite database, so the tests need:
#   mediawiki    the wiki itself, in /usr/share/mediawiki
#   php-cli      `php` for maintenance/install.php and `php -S`
#   php-sqlite3  the SQLite driver the test wikis use
# The mediawiki package would pull in Apache and a database server through its
# recommendations; --no-install-recommends keeps it to what the tests use.
# Idempotent: a second run checks the files and exits silently. Runs as root (apt-get).
set -euo pipefail

die() { echo "docsuite-deps: error: $*" >&2; exit 1; }

have() {
  [ -f /usr/share/mediawiki/maintenance/install.php ] &&
    command -v php >/dev/null 2>&1 &&
    php -r 'exit(extension_loaded("pdo_sqlite") ? 0 : 1);' >/dev/null 2>&1
}

have && exit 0

pkgs=(mediawiki php-cli php-sqlite3)
[ "$(id -u)" = 0 ] || die "missing MediaWiki or PHP; run this script as root, or: apt-get install --no-install-recommends ${pkgs[*]}"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
# Try without refreshing the lists first: a fresh machine may hold lists already.
if ! apt-get install -y --no-install-recommends "${pkgs[@]}" >"$log" 2>&1; then
  apt-get update >>"$log" 2>&1 || { tail -n 15 "$log" >&2; die "apt-get update failed"; }
  apt-get install -y --no-install-recommends "${pkgs[@]}" >>"$log" 2>&1 \
    || { tail -n 15 "$log" >&2; die "could not install ${pkgs[*]}"; }
fi
have || die "installed ${pkgs[*]} but /usr/share/mediawiki/maintenance/install.php, php or its pdo_sqlite extension is still missing"
