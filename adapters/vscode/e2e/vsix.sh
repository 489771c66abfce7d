#!/usr/bin/env bash
# Package the VS Code extension (adapters/vscode/extension) as a platform VSIX
# with the mnemo binary inside, and print the VSIX's path (the only thing
# written to stdout).
#
# usage: vsix.sh [OUT]
#   OUT  the .vsix to write; default <repo>/bin/mnemo-vscode-<version>-<target>.vsix
# Env:   MNEMO_BIN          the binary to bundle (default <repo>/bin/mnemo, built if missing)
#        MNEMO_VSIX_TARGET  the VS Code platform (default: this machine's, e.g. linux-x64)
#
# The binary is copied into the extension's bin/ (git-ignored) only for the
# time of `npm run package`, then removed; a file that was there before is
# put back.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
ext=$repo/adapters/vscode/extension
log() { echo "vsix.sh: $*" >&2; }

bin=${MNEMO_BIN:-$repo/bin/mnemo}
if [ ! -x "$bin" ]; then
	log "building $bin"
	mkdir -p "$(dirname "$bin")"
	(cd "$repo" && GOFLAGS=${GOFLAGS:--buildvcs=false} go build -o "$bin" ./cmd/mnemo) >&2
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

target=${MNEMO_VSIX_TARGET:-}
if [ -z "$target" ]; then
	case $(uname -s) in
	Linux) os=linux ;;
	Darwin) os=darwin ;;
	*) log "unknown system $(uname -s): set MNEMO_VSIX_TARGET"; exit 1 ;;
	esac
	case $(uname -m) in
	x86_64 | amd64) arch=x64 ;;
	aarch64 | arm64) arch=arm64 ;;
	armv7l) arch=armhf ;;
	*) log "unknown machine $(uname -m): set MNEMO_VSIX_TARGET"; exit 1 ;;
	esac
	target=$os-$arch
fi

version=$(node -p "require(process.argv[1]).version" "$ext/package.json")
out=${1:-$repo/bin/mnemo-vscode-$version-$target.vsix}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")

if [ ! -x "$ext/node_modules/.bin/vsce" ] || [ ! -x "$ext/node_modules/.bin/esbuild" ]; then
	log "installing the extension's dependencies"
	(cd "$ext" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi

mkdir -p "$ext/bin"
saved=
if [ -e "$ext/bin/mnemo" ]; then
	saved=$(mktemp)
	cp -p "$ext/bin/mnemo" "$saved"
fi
restore() {
	rm -f "$ext/bin/mnemo"
	if [ -n "$saved" ]; then
		mv "$saved" "$ext/bin/mnemo"
	else
		rmdir "$ext/bin" 2>/dev/null || true
	fi
}
trap restore EXIT
cp "$bin" "$ext/bin/mnemo"
chmod 0755 "$ext/bin/mnemo"

rm -f "$out"
log "packaging $target into $out"
(cd "$ext" && npm run --silent package -- --target "$target" --out "$out") >&2
[ -s "$out" ] || { log "vsce wrote no $out"; exit 1; }
echo "$out"
