#!/usr/bin/env bash
# Package the VS Code extension (adapters/vscode/extension) as a platform VSIX
# with the mnemo binary inside, and print the VSIX's path (the only thing
# written to stdout).
#
# usage: vsix.sh [OUT]
#   OUT  the .vsix to write; default <repo>/bin/mnemo-vscode-<version>-<target>.vsix
# Env:   MNEMO_VSIX_TARGET  the VS Code platform: linux-x64, linux-arm64, darwin-x64,
#                           darwin-arm64, win32-x64 or win32-arm64 (default: this machine's)
#        MNEMO_BIN          the mnemo binary to bundle, built for that platform; default
#                           <repo>/bin/mnemo (built if missing) for this machine's platform,
#                           else one cross-compiled (CGO_ENABLED=0) into a temporary folder
#
# The binary is copied into the extension's bin/ (git-ignored; as mnemo.exe for
# win32, where the extension looks for it) only for the time of `npm run
# package`, then removed; a file that was there before is put back.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
ext=$repo/adapters/vscode/extension
log() { echo "vsix.sh: $*" >&2; }

case $(uname -s) in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) os= ;;
esac
case $(uname -m) in
x86_64 | amd64) arch=x64 ;;
aarch64 | arm64) arch=arm64 ;;
armv7l) arch=armhf ;;
*) arch= ;;
esac
here_target=$os-$arch
target=${MNEMO_VSIX_TARGET:-}
if [ -z "$target" ]; then
	if [ -z "$os" ] || [ -z "$arch" ]; then
		log "unknown system $(uname -s) $(uname -m): set MNEMO_VSIX_TARGET"
		exit 1
	fi
	target=$here_target
fi
# The Go target of the VS Code platform, and the binary's name in the extension.
exe=mnemo
case $target in
linux-x64) goos=linux goarch=amd64 ;;
linux-arm64) goos=linux goarch=arm64 ;;
darwin-x64) goos=darwin goarch=amd64 ;;
darwin-arm64) goos=darwin goarch=arm64 ;;
win32-x64) goos=windows goarch=amd64 exe=mnemo.exe ;;
win32-arm64) goos=windows goarch=arm64 exe=mnemo.exe ;;
*)
	if [ -z "${MNEMO_BIN:-}" ]; then
		log "unknown VS Code platform $target (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, win32-arm64), or set MNEMO_BIN"
		exit 1
	fi
	;;
esac

tmp=
if [ "$target" = "$here_target" ]; then
	bin=${MNEMO_BIN:-$repo/bin/mnemo}
	if [ ! -x "$bin" ]; then
		log "building $bin"
		mkdir -p "$(dirname "$bin")"
		(cd "$repo" && GOFLAGS=${GOFLAGS:--buildvcs=false} go build -o "$bin" ./cmd/mnemo) >&2
	fi
elif [ -n "${MNEMO_BIN:-}" ]; then
	bin=$MNEMO_BIN
	[ -f "$bin" ] || { log "MNEMO_BIN=$bin is not a file (a $target binary)"; exit 1; }
else
	tmp=$(mktemp -d)
	bin=$tmp/$exe
	log "building $bin for $goos/$goarch"
	(cd "$repo" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch GOFLAGS=${GOFLAGS:--buildvcs=false} go build -trimpath -o "$bin" ./cmd/mnemo) >&2
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

version=$(node -p "require(process.argv[1]).version" "$ext/package.json")
out=${1:-$repo/bin/mnemo-vscode-$version-$target.vsix}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")

if [ ! -x "$ext/node_modules/.bin/esbuild" ]; then
	log "installing the extension's dependencies"
	(cd "$ext" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error) >&2
fi
# The packager (vsce) has a folder of its own: the extension's tests never need it.
if [ ! -x "$repo/adapters/vscode/package/node_modules/.bin/vsce" ]; then
	log "installing the packager (vsce)"
	(cd "$repo/adapters/vscode/package" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error) >&2
fi

mkdir -p "$ext/bin"
saved=
if [ -e "$ext/bin/$exe" ]; then
	saved=$(mktemp)
	cp -p "$ext/bin/$exe" "$saved"
fi
restore() {
	rm -f "$ext/bin/$exe"
	if [ -n "$saved" ]; then
		mv "$saved" "$ext/bin/$exe"
	else
		rmdir "$ext/bin" 2>/dev/null || true
	fi
	if [ -n "$tmp" ]; then
		rm -rf "$tmp"
	fi
}
trap restore EXIT
cp "$bin" "$ext/bin/$exe"
chmod 0755 "$ext/bin/$exe"

rm -f "$out"
log "packaging $target into $out"
(cd "$ext" && npm run --silent package -- --target "$target" --out "$out") >&2
[ -s "$out" ] || { log "vsce wrote no $out"; exit 1; }
echo "$out"
