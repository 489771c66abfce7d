#!/bin/sh
# Install the pinned Claude Code CLI for the offline end-to-end tests and print
# the path of its `claude` binary (the only thing written to stdout).
#
# usage: setup.sh [DIR]
#   DIR  install folder; default $MNEMO_CLAUDE_CACHE, else <repo>/.cache/claude-code
#        (git-ignored), or <repo>/.cache/claude-code-<version> for another version.
# Env: MNEMO_CLAUDE_VERSION installs that version instead of the pinned one
#   (the transcript recorder, record/record.sh, installs several).
#
# Idempotent: when DIR already holds a working CLI of the pinned version, nothing
# is downloaded. A fresh install goes into a staging folder next to DIR and is
# renamed into place only once `claude --version` works, so an interrupted run
# never leaves a half-installed DIR behind.
#
# Needs node and npm and a reachable npm registry (only for the first install).
# The tests themselves never touch the network.
set -eu

PINNED=2.1.330
VERSION=${MNEMO_CLAUDE_VERSION:-$PINNED}
PKG=@anthropic-ai/claude-code

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
default=$repo/.cache/claude-code
[ "$VERSION" = "$PINNED" ] || default=$default-$VERSION
dir=${1:-${MNEMO_CLAUDE_CACHE:-$default}}
mkdir -p "$(dirname "$dir")"
dir=$(cd "$(dirname "$dir")" && pwd)/$(basename "$dir")

log() { echo "setup.sh: $*" >&2; }

# version_ok BIN: the binary runs and reports the pinned version. It runs with a
# throw-away HOME and no update checks, so it never writes to the real home.
version_ok() {
	[ -x "$1" ] || return 1
	vhome=$(mktemp -d)
	out=$(env HOME="$vhome" DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 "$1" --version 2>/dev/null) || out=
	rm -rf "$vhome"
	case $out in "$VERSION "*) return 0 ;; esac
	return 1
}

bin=$dir/node_modules/.bin/claude
if version_ok "$bin"; then
	log "claude $VERSION already installed in $dir"
	echo "$bin"
	exit 0
fi

command -v npm >/dev/null 2>&1 || { log "npm not found: install node (>= 20) and npm"; exit 1; }

stage=$dir.partial.$$
trap 'rm -rf "$stage"' EXIT INT TERM
rm -rf "$stage"
mkdir -p "$stage"
log "installing $PKG@$VERSION into $dir"
printf '{"name":"mnemo-claude-code-e2e","private":true}\n' > "$stage/package.json"
# npm's own output goes to stderr: stdout carries only the binary path.
(cd "$stage" && npm install --no-audit --no-fund --loglevel=error "$PKG@$VERSION") >&2

# With --ignore-scripts (or an npm that skipped the postinstall), bin/claude.exe
# stays a stub that only says the native binary is missing; install.cjs puts
# the native binary in place.
if ! version_ok "$stage/node_modules/.bin/claude"; then
	log "running the package's install.cjs (postinstall did not run)"
	(cd "$stage" && node node_modules/$PKG/install.cjs) >&2
fi
version_ok "$stage/node_modules/.bin/claude" || { log "installed CLI does not report version $VERSION"; exit 1; }

rm -rf "$dir"
mv "$stage" "$dir"
trap - EXIT INT TERM
version_ok "$bin" || { log "CLI broken after moving it to $dir"; exit 1; }
log "installed claude $VERSION"
echo "$bin"
