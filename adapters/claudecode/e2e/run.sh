#!/bin/sh
# Run the offline end-to-end tests: install the pinned Claude Code CLI (setup.sh),
# build the test binary, then run it in a new network namespace that has only
# an up loopback interface, so nothing can reach beyond 127.0.0.1.
#
# usage: run.sh [test binary flags...]     e.g. run.sh -test.run FixCalc
#   Flags go to the test binary (-test.run, -test.count, …); -test.v and a
#   5-minute -test.timeout are always passed first.
# Env: MNEMO_CLAUDE_CACHE (see setup.sh), MNEMO_CLAUDE_BIN (skip setup.sh and
#   use this CLI), MNEMO_BIN / MNEMO_HOOK_BIN (default <repo>/bin/mnemo and
#   <repo>/bin/mnemo-hook; build them first to run the Mnemo tests),
#   MNEMO_E2E_ARTIFACTS (default <repo>/.cache/e2e-artifacts; "none" disables).
# Needs root for `unshare -n`; otherwise it tries an unprivileged user
# namespace (`unshare -r -n`).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

if [ -z "${MNEMO_CLAUDE_BIN:-}" ]; then
	MNEMO_CLAUDE_BIN=$("$here/setup.sh")
fi
export MNEMO_CLAUDE_BIN

# Build everything before entering the namespace: the go command may need the
# network (module downloads), the tests never do.
mkdir -p "$repo/bin"
(cd "$repo" && go test -c -tags e2e -o bin/e2e.test ./adapters/claudecode/e2e/)

. "$repo/adapters/claudecode/e2e/offline.sh"
offline_artifacts "${MNEMO_E2E_ARTIFACTS:-$repo/.cache/e2e-artifacts}"
offline_abs MNEMO_BIN MNEMO_HOOK_BIN

# The test binary runs in its package folder, as `go test` would run it.
cd "$here"
offline_exec "$repo/bin/e2e.test" "$@"
