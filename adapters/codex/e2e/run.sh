#!/bin/sh
# Run the offline end-to-end tests: install the pinned Codex CLI (setup.sh)
# and, for the cross-agent test, the pinned Claude Code CLI
# (adapters/claudecode/e2e/setup.sh), build the test binary, then run it in a
# new network namespace that has only an up loopback interface, so nothing can
# reach beyond 127.0.0.1.
#
# usage: run.sh [test binary flags...]     e.g. run.sh -test.run Recall
#   Flags go to the test binary (-test.run, -test.count, -update, …);
#   -test.v and a 5-minute -test.timeout are always passed first.
# Env: MNEMO_CODEX_CACHE (see setup.sh), MNEMO_CODEX_BIN (skip setup.sh and
#   use this CLI), MNEMO_CLAUDE_BIN (the same for Claude Code; when its setup
#   fails the cross-agent test skips), MNEMO_BIN / MNEMO_HOOK_BIN (default
#   <repo>/bin/mnemo and <repo>/bin/mnemo-hook; build them first to run the
#   Mnemo tests), MNEMO_CODEX_E2E_ARTIFACTS (default
#   <repo>/.cache/e2e-artifacts-codex; "none" disables).
# Needs root for `unshare -n`; otherwise it tries an unprivileged user
# namespace (`unshare -r -n`).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

if [ -z "${MNEMO_CODEX_BIN:-}" ]; then
	MNEMO_CODEX_BIN=$("$here/setup.sh")
fi
export MNEMO_CODEX_BIN
if [ -z "${MNEMO_CLAUDE_BIN:-}" ]; then
	MNEMO_CLAUDE_BIN=$("$repo/adapters/claudecode/e2e/setup.sh") ||
		{ echo "run.sh: no Claude Code CLI: the cross-agent test will skip" >&2; MNEMO_CLAUDE_BIN=; }
fi
export MNEMO_CLAUDE_BIN

# Build everything before entering the namespace: the go command may need the
# network (module downloads), the tests never do.
mkdir -p "$repo/bin"
(cd "$repo" && go test -c -tags e2e -o bin/codex-e2e.test ./adapters/codex/e2e/)

. "$repo/adapters/claudecode/e2e/offline.sh"
offline_artifacts "${MNEMO_CODEX_E2E_ARTIFACTS:-$repo/.cache/e2e-artifacts-codex}"
offline_abs MNEMO_BIN MNEMO_HOOK_BIN

# The test binary runs in its package folder, as `go test` would run it.
cd "$here"
offline_exec "$repo/bin/codex-e2e.test" "$@"
