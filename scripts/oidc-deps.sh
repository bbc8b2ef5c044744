#!/usr/bin/env bash
# Installs the test OpenID Connect issuer's npm packages (oidc-provider) into
# scripts/oidc-provider/node_modules, exactly as package-lock.json pins them.
# docindex/auth's tests start that issuer with node. Idempotent: when the
# installed tree already matches the lock file it returns at once. Quiet on
# success; on failure it says what is missing and shows npm's log.
set -euo pipefail

dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/oidc-provider"
stamp="$dir/node_modules/.docindex-lock.sha256"

fail() {
	echo "oidc-deps: $*" >&2
	exit 1
}

command -v node >/dev/null 2>&1 || fail "node is not installed; oidc-provider 9 needs Node.js 20.19 or later (e.g. apt-get install nodejs from NodeSource, or a Node 22 LTS)"
command -v npm >/dev/null 2>&1 || fail "npm is not installed; install it alongside node (apt-get install npm)"

# oidc-provider 9 loads ESM through require(esm), which Node has since 20.19.
node -e '
const [maj, min] = process.versions.node.split(".").map(Number);
process.exit(maj > 20 || (maj === 20 && min >= 19) ? 0 : 1);
' || fail "node $(node --version) is too old; oidc-provider 9 needs Node.js 20.19 or later"

want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -d "$dir/node_modules/oidc-provider" ]]; then
	exit 0
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1; then
	cat "$log" >&2
	fail "npm ci failed in $dir (is the npm registry reachable?)"
fi
echo "$want" >"$stamp"
