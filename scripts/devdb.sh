#!/usr/bin/env bash
# devdb.sh: a project-local PostgreSQL with pgvector for `make run` and `make test`.
#
#   scripts/devdb.sh url    make sure the server runs; print its URL (the only line on stdout)
#   scripts/devdb.sh stop   stop it
#
# When DOCINDEX_DATABASE_URL is set it is printed and nothing is installed or started.
# Otherwise the PostgreSQL server and pgvector are installed when missing (Debian packages;
# pgvector built from Debian's source package of a newer suite, since bookworm has none),
# a cluster is created under .devdb/ in the project and started on 127.0.0.1. Every step is
# skipped when already done, so a second call takes about a second.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state=${DOCINDEX_DEVDB_DIR:-$root/.devdb}
port=${DOCINDEX_DEVDB_PORT:-55432}
dbname=docindex
log=$state/setup.log

say() { echo "devdb: $*" >&2; }
die() { echo "devdb: error: $*" >&2; [ -f "$log" ] && { echo "devdb: last lines of $log:" >&2; tail -n 15 "$log" >&2; }; exit 1; }

url() { echo "postgres://postgres@127.0.0.1:$port/$dbname?sslmode=disable"; }

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

apt_install() {
  [ "$(id -u)" = 0 ] || die "missing packages ($*); run as root once, or install them: apt-get install $*"
  if [ ! -f "$state/.apt-updated" ]; then
    say "apt-get update"
    apt-get update >>"$log" 2>&1 || die "apt-get update failed"
    touch "$state/.apt-updated"
  fi
  say "installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >>"$log" 2>&1 \
    || die "could not install $*"
}

pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
  done
  return 1
}

ensure_server() {
  bin=$(pg_bin) || { apt_install postgresql postgresql-contrib; bin=$(pg_bin) || die "PostgreSQL binaries not found after install"; }
  pgver=$(basename "$(dirname "$bin")")
  id postgres >/dev/null 2>&1 || die "the postgres OS user is missing; reinstall the postgresql package"
}

# pgvector: a binary package where the configured suites have one, else Debian's source package
# from the next suite, fetched with a private apt configuration so /etc/apt stays untouched.
ensure_pgvector() {
  local share
  share=$("$bin/pg_config" --sharedir 2>/dev/null || echo "/usr/share/postgresql/$pgver")
  [ -f "$share/extension/vector.control" ] && return 0
  [ "$(id -u)" = 0 ] || die "pgvector is missing and installing it needs root"
  if apt-cache show "postgresql-$pgver-pgvector" >/dev/null 2>&1; then
    apt_install "postgresql-$pgver-pgvector"
    [ -f "$share/extension/vector.control" ] && return 0
  fi
  say "building pgvector from Debian's source package"
  apt_install "postgresql-server-dev-$pgver" make gcc dpkg-dev
  local mirror apt src
  mirror=$(grep -hE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
    | grep -v security | head -n1 | sed -E 's/^URIs:[[:space:]]*//; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//; s/[[:space:]].*$//' || true)
  [ -n "$mirror" ] || die "no Debian mirror found in /etc/apt to fetch the pgvector source from"
  apt=$state/apt
  src=$state/pgvector-src
  mkdir -p "$apt/lists/partial" "$src"
  echo "deb-src $mirror trixie main" >"$apt/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$apt/lists" -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" update >>"$log" 2>&1 || die "could not read the source index of Debian trixie"
  (cd "$src" && rm -rf ./* && apt-get "${opts[@]}" source --download-only pgvector >>"$log" 2>&1) \
    || die "could not download the pgvector source package"
  (cd "$src" && dpkg-source --no-check -x ./*.dsc build >>"$log" 2>&1) || die "could not unpack the pgvector source"
  (cd "$src/build" && make PG_CONFIG="$bin/pg_config" with_llvm=no >>"$log" 2>&1 \
    && make PG_CONFIG="$bin/pg_config" with_llvm=no install >>"$log" 2>&1) || die "pgvector did not build"
  [ -f "$share/extension/vector.control" ] || die "pgvector built but vector.control is not in $share/extension"
  say "pgvector installed"
}

ensure_cluster() {
  local data=$state/data
  mkdir -p "$state"
  if [ "$(id -u)" = 0 ]; then chown postgres "$state"; fi
  if [ ! -f "$data/PG_VERSION" ]; then
    say "creating a cluster in $data"
    as_postgres "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >>"$log" 2>&1 \
      || die "initdb failed"
    cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$state'
max_connections = 300
shared_buffers = 256MB
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
  fi
  if ! as_postgres "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    say "starting PostgreSQL on 127.0.0.1:$port"
    as_postgres "$bin/pg_ctl" -D "$data" -l "$state/server.log" -w -t 60 start >>"$log" 2>&1 \
      || { tail -n 20 "$state/server.log" >&2 || true; die "PostgreSQL did not start (is port $port taken? set DOCINDEX_DEVDB_PORT)"; }
  fi
  local psql=("$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -v ON_ERROR_STOP=1 -qAt)
  if [ "$("${psql[@]}" -d postgres -c "select 1 from pg_database where datname = '$dbname'")" != 1 ]; then
    "${psql[@]}" -d postgres -c "create database $dbname" >>"$log" 2>&1 || die "could not create database $dbname"
  fi
  "${psql[@]}" -d "$dbname" -c "create extension if not exists vector" >>"$log" 2>&1 \
    || die "could not create the vector extension"
  # New databases made by the tests inherit the extension from template1.
  "${psql[@]}" -d template1 -c "create extension if not exists vector" >>"$log" 2>&1 || true
}

cmd=${1:-url}
case "$cmd" in
  url)
    if [ -n "${DOCINDEX_DATABASE_URL:-}" ]; then echo "$DOCINDEX_DATABASE_URL"; exit 0; fi
    mkdir -p "$state"; : >>"$log"
    ensure_server
    ensure_pgvector
    ensure_cluster
    url
    ;;
  stop)
    bin=$(pg_bin) || exit 0
    [ -f "$state/data/PG_VERSION" ] && as_postgres "$bin/pg_ctl" -D "$state/data" -m fast stop >&2 || true
    ;;
  *) echo "usage: $0 url|stop" >&2; exit 2 ;;
esac
