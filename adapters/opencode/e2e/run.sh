#!/bin/sh
# Run the offline end-to-end tests of OpenCode with Mnemo: install the pinned
# OpenCode CLI (setup.sh), build the test binary, then run it in new network
# and mount namespaces: the network has only an up loopback interface, so
# nothing can reach beyond 127.0.0.1, and /etc/resolv.conf names 127.0.0.1,
# where the tests record every name OpenCode tries to look up.
#
# usage: run.sh [test binary flags...]     e.g. run.sh -test.run Recall
#   Flags go to the test binary (-test.run, -test.count, …); -test.v and a
#   15-minute -test.timeout are always passed first (the real OpenCode CLI
#   took 85-90 s a run under load here).
# Env: MNEMO_OPENCODE_CACHE (see setup.sh), MNEMO_OPENCODE_BIN (skip setup.sh
#   and use this CLI; its config-deps are still looked for in the cache),
#   MNEMO_BIN / MNEMO_HOOK_BIN (default <repo>/bin/mnemo and <repo>/bin/mnemo-hook;
#   build them first to run the Mnemo tests), MNEMO_E2E_ARTIFACTS (default
#   <repo>/.cache/e2e-artifacts-opencode; "none" disables).
# Needs root for `unshare -n -m`; otherwise it tries an unprivileged user
# namespace (`unshare -r -n -m`).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

export MNEMO_OPENCODE_CACHE="${MNEMO_OPENCODE_CACHE:-$repo/.cache/opencode}"
if [ -z "${MNEMO_OPENCODE_BIN:-}" ]; then
	MNEMO_OPENCODE_BIN=$("$here/setup.sh" "$MNEMO_OPENCODE_CACHE")
fi
export MNEMO_OPENCODE_BIN

# Build everything before entering the namespace: the go command may need the
# network (module downloads), the tests never do.
mkdir -p "$repo/bin"
(cd "$repo" && go test -c -tags e2e -o bin/e2e-opencode.test ./adapters/opencode/e2e/)

. "$repo/adapters/claudecode/e2e/offline.sh"
offline_artifacts "${MNEMO_E2E_ARTIFACTS:-$repo/.cache/e2e-artifacts-opencode}"
offline_abs MNEMO_BIN MNEMO_HOOK_BIN MNEMO_OPENCODE_BIN

# The resolver the namespace sees: 127.0.0.1, where the tests listen.
resolv=$(mktemp)
trap 'rm -f "$resolv"' EXIT INT TERM
echo "nameserver 127.0.0.1" > "$resolv"

ns="unshare -n -m"
[ "$(id -u)" -eq 0 ] || ns="unshare -r -n -m"
# The test binary runs in its package folder, as `go test` would run it.
cd "$here"
# shellcheck disable=SC2016 # $0, $1 and $@ expand in the inner shell
$ns sh -c 'ip link set lo up && mount --bind "$1" /etc/resolv.conf && shift && exec "$0" "$@"' \
	"$repo/bin/e2e-opencode.test" "$resolv" -test.v -test.timeout 15m "$@"
