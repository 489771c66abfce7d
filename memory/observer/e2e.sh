#!/bin/sh
# Run the claude agent's end-to-end tests: the real Claude Code CLI (pinned
# by adapters/claudecode/e2e/setup.sh) against the scripted Messages API,
# inside a network namespace whose only interface is loopback.
#
# usage: memory/observer/e2e.sh [test binary flags...]   e.g. e2e.sh -test.run Resume
#   -test.v and a 5-minute -test.timeout are always passed first.
# Env: MNEMO_CLAUDE_BIN (the claude binary; otherwise setup.sh installs it),
#   MNEMO_E2E_ARTIFACTS (default <repo>/.cache/e2e-artifacts/observer; "none"
#   disables): each test's stream logs, the server's requests and the demo
#   session's notes.
# Needs root for `unshare -n`; otherwise it tries `unshare -r -n`.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

if [ -z "${MNEMO_CLAUDE_BIN:-}" ]; then
	MNEMO_CLAUDE_BIN=$("$repo/adapters/claudecode/e2e/setup.sh")
fi
MNEMO_CLAUDE_BIN=$(cd "$(dirname "$MNEMO_CLAUDE_BIN")" && pwd)/$(basename "$MNEMO_CLAUDE_BIN")
export MNEMO_CLAUDE_BIN

# Build before entering the namespace: the go command may need the network.
mkdir -p "$repo/bin"
(cd "$repo" && go test -c -tags e2e -o bin/observer-e2e.test ./memory/observer/)

artifacts=${MNEMO_E2E_ARTIFACTS:-$repo/.cache/e2e-artifacts/observer}
if [ "$artifacts" = none ]; then
	unset MNEMO_E2E_ARTIFACTS
else
	rm -rf "$artifacts"
	mkdir -p "$artifacts"
	export MNEMO_E2E_ARTIFACTS="$artifacts"
fi

ns="unshare -n"
[ "$(id -u)" -eq 0 ] || ns="unshare -r -n"
cd "$here"
# shellcheck disable=SC2016 # $0 and $@ expand in the inner shell
exec $ns sh -c 'ip link set lo up && exec "$0" "$@"' "$repo/bin/observer-e2e.test" -test.v -test.timeout 5m "$@"
