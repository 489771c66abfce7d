#!/bin/sh
# Record real Claude Code transcripts of several CLI versions, offline,
# against the scripted model server, into
# adapters/claudecode/testdata/transcripts/<version>/ (see main.go for the
# sessions, that folder's README.md for what each version wrote).
#
# usage: record.sh [VERSION...]     default: every version in VERSIONS below
# Env: MNEMO_RECORD_KEEP=1 keeps each run's scratch folder (the CLI's output).
#
# Each version is installed by ../setup.sh (MNEMO_CLAUDE_VERSION) into
# <repo>/.cache/claude-code-<version>, git-ignored; this needs npm and the
# registry, the recording itself runs in a new network namespace whose only
# interface is an up loopback (root, or an unprivileged user namespace).
# It is not part of `just test`: the recordings are committed, and the
# back-fill's tests read them (adapters/hosts/backfill/transcripts_test.go).
set -eu

VERSIONS="1.0.30 1.0.84 2.0.14 2.0.76 2.1.30 2.1.219 2.1.330"

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
[ $# -gt 0 ] && VERSIONS="$*"

mkdir -p "$repo/bin"
(cd "$repo" && go build -tags e2e -o bin/record-transcripts ./adapters/claudecode/e2e/record)

ns="unshare -n"
[ "$(id -u)" -eq 0 ] || ns="unshare -r -n"
keep=
[ -n "${MNEMO_RECORD_KEEP:-}" ] && keep=-keep

for v in $VERSIONS; do
	bin=$(MNEMO_CLAUDE_VERSION=$v "$here/../setup.sh")
	out=$repo/adapters/claudecode/testdata/transcripts/$v
	echo "record.sh: recording claude $v into $out" >&2
	# shellcheck disable=SC2016 # $0 and $@ expand in the inner shell
	$ns sh -c 'ip link set lo up && exec "$0" "$@"' "$repo/bin/record-transcripts" -claude "$bin" -out "$out" $keep
done
