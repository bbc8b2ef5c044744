#!/usr/bin/env bash
# Installs the tools that regenerate the plugin protocol's Go code and, with
# "gen", runs them. Building never needs this: the generated code under
# plugins/internal/pb is committed. Run it after changing plugins/proto/.
#
#   scripts/protoc.sh        install protoc, protoc-gen-go, protoc-gen-go-grpc
#   scripts/protoc.sh gen    install (if needed) and regenerate
#
# protoc comes from Debian (protobuf-compiler); the Go generators are installed
# with `go install` into .tools/bin at versions that match go.mod: protoc-gen-go
# at the google.golang.org/protobuf version, protoc-gen-go-grpc at a release
# whose output (SupportPackageIsVersion9) the grpc version in go.mod accepts.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin="$root/.tools/bin"
grpc_gen_version=v1.6.2

fail() { echo "protoc.sh: $*" >&2; exit 1; }

if ! command -v protoc >/dev/null 2>&1; then
	if [ "$(id -u)" -ne 0 ]; then
		fail "protoc is missing; install it with: sudo apt-get install -y protobuf-compiler"
	fi
	log=$(mktemp)
	if ! { apt-get install -y -q protobuf-compiler >"$log" 2>&1 ||
		{ apt-get update -q >>"$log" 2>&1 && apt-get install -y -q protobuf-compiler >>"$log" 2>&1; }; }; then
		cat "$log" >&2
		rm -f "$log"
		fail "apt-get install protobuf-compiler failed"
	fi
	rm -f "$log"
fi

pb_version=$(go list -m -f '{{.Version}}' google.golang.org/protobuf) ||
	fail "cannot read the google.golang.org/protobuf version from go.mod"

install() { # name module@version
	local stamp="$bin/.$1.version"
	if [ -x "$bin/$1" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$2" ]; then
		return
	fi
	mkdir -p "$bin"
	GOBIN="$bin" go install "$2" || fail "go install $2 failed"
	echo "$2" >"$stamp"
}
install protoc-gen-go "google.golang.org/protobuf/cmd/protoc-gen-go@$pb_version"
install protoc-gen-go-grpc "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$grpc_gen_version"

[ "${1:-}" = gen ] || exit 0

# Every .proto under plugins/proto names its Go package with go_package; the
# module prefix maps it back into this tree.
mapfile -t protos < <(cd plugins/proto && find . -name '*.proto' | sed 's|^\./||' | sort)
[ "${#protos[@]}" -gt 0 ] || fail "no .proto files under plugins/proto"
PATH="$bin:$PATH" protoc \
	--proto_path=plugins/proto \
	--go_out=. --go_opt=module=github.com/docindex/docindex \
	--go-grpc_out=. --go-grpc_opt=module=github.com/docindex/docindex \
	"${protos[@]}" || fail "protoc failed"
