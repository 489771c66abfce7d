#!/bin/sh
# Install the pinned Gemini CLI for the offline end-to-end tests and print the
# path of its `gemini` binary (the only thing written to stdout).
#
# usage: setup.sh [DIR]
#   DIR  install folder; default $MNEMO_GEMINI_CACHE, else <repo>/.cache/gemini-cli
#        (git-ignored).
#
# Idempotent: when DIR already holds a working CLI of the pinned version, nothing
# is downloaded. A fresh install goes into a staging folder next to DIR and is
# renamed into place only once `gemini --version` works, so an interrupted run
# never leaves a half-installed DIR behind.
#
# Needs node (>= 20) and npm and a reachable npm registry (only for the first
# install). The tests themselves never touch the network.
set -eu

VERSION=0.61.0
PKG=@google/gemini-cli

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
dir=${1:-${MNEMO_GEMINI_CACHE:-$repo/.cache/gemini-cli}}
mkdir -p "$(dirname "$dir")"
dir=$(cd "$(dirname "$dir")" && pwd)/$(basename "$dir")

log() { echo "setup.sh: $*" >&2; }

# version_ok BIN: the binary runs and reports the pinned version. It runs with
# a throw-away HOME and GEMINI_CLI_HOME, so it never writes to the real home.
version_ok() {
	[ -x "$1" ] || return 1
	vhome=$(mktemp -d)
	out=$(env HOME="$vhome" GEMINI_CLI_HOME="$vhome" GEMINI_CLI_NO_RELAUNCH=true \
		"$1" --version 2>/dev/null) || out=
	rm -rf "$vhome"
	[ "$out" = "$VERSION" ]
}

bin=$dir/node_modules/.bin/gemini
if version_ok "$bin"; then
	log "gemini $VERSION already installed in $dir"
	echo "$bin"
	exit 0
fi

command -v npm >/dev/null 2>&1 || { log "npm not found: install node (>= 20) and npm"; exit 1; }

stage=$dir.partial.$$
trap 'rm -rf "$stage"' EXIT INT TERM
rm -rf "$stage"
mkdir -p "$stage"
log "installing $PKG@$VERSION into $dir"
printf '{"name":"mnemo-gemini-cli-e2e","private":true}\n' > "$stage/package.json"
# npm's own output goes to stderr: stdout carries only the binary path.
(cd "$stage" && npm install --no-audit --no-fund --loglevel=error "$PKG@$VERSION") >&2
version_ok "$stage/node_modules/.bin/gemini" || { log "installed CLI does not report version $VERSION"; exit 1; }

rm -rf "$dir"
mv "$stage" "$dir"
trap - EXIT INT TERM
version_ok "$bin" || { log "CLI broken after moving it to $dir"; exit 1; }
log "installed gemini $VERSION"
echo "$bin"
