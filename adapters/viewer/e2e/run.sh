#!/bin/sh
# The memory viewer in a real browser: installs what it needs (Debian's
# chromium, puppeteer-core from npm, which downloads no browser), then runs
# viewer.mjs in a new network namespace that has only an up loopback
# interface, so that nothing can reach beyond 127.0.0.1.
#
# usage: run.sh
# Env: MNEMO_BIN, MNEMO_HOOK_BIN (default <repo>/bin/mnemo and
#   <repo>/bin/mnemo-hook), MNEMO_E2E_ARTIFACTS (default
#   <repo>/.cache/e2e-artifacts/viewer; "none" disables), CHROMIUM.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
log() { echo "run.sh: $*" >&2; }

if ! command -v "${CHROMIUM:-chromium}" >/dev/null 2>&1; then
	[ "$(id -u)" -eq 0 ] || { log "chromium not found: install Debian's chromium"; exit 1; }
	log "installing Debian's chromium"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2
fi
CHROMIUM=$(command -v "${CHROMIUM:-chromium}")
export CHROMIUM
lock_sum=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$here/node_modules/.mnemo-lock-sum" 2>/dev/null)" != "$lock_sum" ]; then
	log "installing puppeteer-core"
	(cd "$here" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error) >&2
	echo "$lock_sum" > "$here/node_modules/.mnemo-lock-sum"
fi

. "$repo/adapters/claudecode/e2e/offline.sh"
: "${MNEMO_BIN:=$repo/bin/mnemo}" "${MNEMO_HOOK_BIN:=$repo/bin/mnemo-hook}"
export MNEMO_BIN MNEMO_HOOK_BIN
offline_abs MNEMO_BIN MNEMO_HOOK_BIN
offline_artifacts "${MNEMO_E2E_ARTIFACTS:-$repo/.cache/e2e-artifacts/viewer}"

ns="unshare -n"
[ "$(id -u)" -eq 0 ] || ns="unshare -r -n"
cd "$here"
# shellcheck disable=SC2016 # $0 and $@ expand in the inner shell
exec $ns sh -c 'ip link set lo up && exec timeout 300 node "$0"' "$here/viewer.mjs"
