#!/usr/bin/env bash
# Release builds: mnemo and mnemo-hook for Linux, macOS and Windows on amd64 and
# arm64, without cgo, each platform's pair in one archive (.tar.gz; .zip with .exe
# names for Windows), a VS Code extension (.vsix) per platform with its mnemo
# inside, and SHA256SUMS over all of them, in dist/ (emptied first).
#
# usage: .ci/release.sh [VERSION]   (`just release [VERSION]`)
#   VERSION  stamped into mnemo (`mnemo --version`, the daemon's status) with
#            -ldflags -X (cmd/internal/daemon.Version, mnemo-hook's main.Version);
#            default: cmd/internal/daemon's Version and the commit,
#            e.g. 0.1.0-dev+84d2f22; mnemo-hook gets the same (it tells the daemon, and
#            an older daemon hands over to the new binaries; a -dev one never does).
# Env:  MNEMO_RELEASE_VSIX=0  skips the .vsix files (they need Node and npm).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "release: $*" >&2; }

version=${1:-}
if [ -z "$version" ]; then
	base=$(sed -n 's/^var Version = "\(.*\)"$/\1/p' cmd/internal/daemon/version.go)
	[ -n "$base" ] || { log "no 'var Version = \"…\"' in cmd/internal/daemon/version.go"; exit 1; }
	version=$base+$(git rev-parse --short HEAD)
fi
if ! [[ $version =~ ^[0-9A-Za-z][0-9A-Za-z.+-]*$ ]]; then
	log "version $version: use letters, digits, '.', '+' and '-' only (e.g. 0.2.0)"
	exit 2
fi

dist=$PWD/dist
rm -rf "$dist"
mkdir -p "$dist/stage"
export GOFLAGS=${GOFLAGS:--buildvcs=false}

# GOOS/GOARCH and the VS Code platform of each target.
targets="linux/amd64:linux-x64 linux/arm64:linux-arm64 darwin/amd64:darwin-x64 darwin/arm64:darwin-arm64 windows/amd64:win32-x64 windows/arm64:win32-arm64"
for t in $targets; do
	goos=${t%%/*}
	rest=${t#*/}
	goarch=${rest%%:*}
	vscode=${rest#*:}
	exe=
	[ "$goos" = windows ] && exe=.exe
	name=mnemo-$version-$goos-$goarch
	stage=$dist/stage/$name
	mkdir -p "$stage"
	log "$goos/$goarch"
	# -trimpath: no path of the building machine in the binaries.
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -ldflags "-s -w -X github.com/mnemo-dev/mnemo/cmd/internal/daemon.Version=$version" -o "$stage/mnemo$exe" ./cmd/mnemo
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -ldflags "-s -w -X main.Version=$version" -o "$stage/mnemo-hook$exe" ./cmd/mnemo-hook
	cp README.md "$stage/"
	if [ "$goos" = windows ]; then
		(cd "$dist/stage" && zip -qrX "$dist/$name.zip" "$name")
	else
		tar -C "$dist/stage" --sort=name --owner=0 --group=0 --numeric-owner -czf "$dist/$name.tar.gz" "$name"
	fi
	if [ "${MNEMO_RELEASE_VSIX:-1}" != 0 ]; then
		MNEMO_BIN=$stage/mnemo$exe MNEMO_VSIX_TARGET=$vscode \
			adapters/vscode/e2e/vsix.sh "$dist/mnemo-vscode-$version-$vscode.vsix" > /dev/null
	fi
done
rm -rf "$dist/stage"
(cd "$dist" && sha256sum -- *.tar.gz *.zip $(ls -- *.vsix 2>/dev/null) > SHA256SUMS)
log "wrote $(ls "$dist" | wc -l) files in dist/:"
(cd "$dist" && ls -l) >&2
