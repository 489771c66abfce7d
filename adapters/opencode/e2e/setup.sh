#!/bin/sh
# Install the pinned OpenCode CLI for the offline end-to-end tests and print
# the path of its `opencode` binary (the only thing written to stdout).
#
# usage: setup.sh [DIR]
#   DIR  install folder; default $MNEMO_OPENCODE_CACHE, else <repo>/.cache/opencode
#        (git-ignored).
#
# DIR gets two npm installs of the pinned version: opencode-ai (the CLI; its
# native binary comes in the optional package opencode-linux-x64) and, in
# DIR/config-deps, @opencode-ai/plugin alone. OpenCode installs the latter
# into each of its config folders (~/.config/opencode, <project>/.opencode)
# with npm at start-up unless the folder already has it; the tests seed their
# config folders from config-deps, so that OpenCode never reaches the npm
# registry at run time.
#
# Idempotent: when DIR already holds a working CLI of the pinned version and
# the plugin package, nothing is downloaded. A fresh install goes into a
# staging folder next to DIR and is renamed into place only once
# `opencode --version` works, so an interrupted run never leaves a
# half-installed DIR behind.
#
# Needs node and npm and a reachable npm registry (only for the first install).
# The tests themselves never touch the network.
set -eu

VERSION=1.18.33

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
dir=${1:-${MNEMO_OPENCODE_CACHE:-$repo/.cache/opencode}}
mkdir -p "$(dirname "$dir")"
dir=$(cd "$(dirname "$dir")" && pwd)/$(basename "$dir")

log() { echo "setup.sh: $*" >&2; }

# installed_ok DIR: the CLI runs and reports the pinned version, and the
# plugin package is there. It runs with a throw-away HOME and XDG folders, so
# it never writes to the real home.
installed_ok() {
	[ -x "$1/node_modules/.bin/opencode" ] || return 1
	[ -f "$1/config-deps/node_modules/@opencode-ai/plugin/package.json" ] || return 1
	[ -f "$1/config-deps/package-lock.json" ] || return 1
	vhome=$(mktemp -d)
	out=$(env -i PATH=/usr/bin:/bin HOME="$vhome" XDG_CONFIG_HOME="$vhome/config" XDG_DATA_HOME="$vhome/data" \
		XDG_CACHE_HOME="$vhome/cache" XDG_STATE_HOME="$vhome/state" OPENCODE_DISABLE_AUTOUPDATE=1 \
		"$1/node_modules/.bin/opencode" --version 2>/dev/null) || out=
	rm -rf "$vhome"
	[ "$out" = "$VERSION" ]
}

if installed_ok "$dir"; then
	log "opencode $VERSION already installed in $dir"
	echo "$dir/node_modules/.bin/opencode"
	exit 0
fi

command -v npm >/dev/null 2>&1 || { log "npm not found: install node (>= 20) and npm"; exit 1; }

stage=$dir.partial.$$
trap 'rm -rf "$stage"' EXIT INT TERM
rm -rf "$stage"
mkdir -p "$stage/config-deps"
log "installing opencode-ai@$VERSION and @opencode-ai/plugin@$VERSION into $dir"
printf '{"name":"mnemo-opencode-e2e","private":true}\n' > "$stage/package.json"
printf '{"name":"opencode-config","private":true}\n' > "$stage/config-deps/package.json"
# npm's own output goes to stderr: stdout carries only the binary path.
(cd "$stage" && npm install --no-audit --no-fund --loglevel=error "opencode-ai@$VERSION") >&2
(cd "$stage/config-deps" && npm install --no-audit --no-fund --loglevel=error "@opencode-ai/plugin@$VERSION") >&2
installed_ok "$stage" || { log "installed CLI does not report version $VERSION"; exit 1; }

rm -rf "$dir"
mv "$stage" "$dir"
trap - EXIT INT TERM
installed_ok "$dir" || { log "CLI broken after moving it to $dir"; exit 1; }
log "installed opencode $VERSION"
echo "$dir/node_modules/.bin/opencode"
