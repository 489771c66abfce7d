#!/usr/bin/env bash
# Install what the real-VS-Code end-to-end test needs, offline apart from the
# package registries: code-server (a real VS Code server and web workbench) from
# npm, Debian's chromium to open it, and the puppeteer-core harness.
#
# usage: setup.sh
# Env:   MNEMO_VSCODE_E2E_DIR  work folder (default <repo>/.cache/vscode-e2e, git-ignored)
#
# Idempotent: a code-server install that finished is kept (a stamp file marks
# it) and the harness's node_modules are reinstalled only when its
# package-lock.json changed. A fresh code-server install goes into a staging
# folder that is renamed into place only once it works, so an interrupted run
# never leaves a half-installed one behind.
#
# Needs Debian (apt-get, as root, only for packages that are missing), node 20
# and npm with a reachable npm registry. The test itself never uses the network.
set -euo pipefail

# The last code-server whose engines field is node 20: VS Code 1.100.3.
CS_VERSION=4.100.3

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
work=${MNEMO_VSCODE_E2E_DIR:-$repo/.cache/vscode-e2e}
mkdir -p "$work"
work=$(cd "$work" && pwd)

log() { echo "setup.sh: $*" >&2; }
now_ms() { date +%s%3N; }
t0=$(now_ms)

# node-pty's install script runs `npx node-gyp …`; npx must not stop to ask.
export npm_config_yes=true npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
# node-gyp builds against the headers that come with this node, never downloaded ones.
node_prefix=$(dirname "$(dirname "$(node -p process.execPath)")")
if [ -z "${npm_config_nodedir:-}" ] && [ -f "$node_prefix/include/node/common.gypi" ]; then
	export npm_config_nodedir=$node_prefix
fi

# 1. Debian packages. chromium is the client whose connection makes code-server
#    start an extension host; ripgrep replaces the rg that @vscode/ripgrep would
#    download from GitHub; libkrb5-dev and a C++ toolchain build the native modules.
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v git >/dev/null 2>&1 || need+=(git)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
	log "installing Debian packages: ${need[*]}"
	[ "$(id -u)" -eq 0 ] || { log "need root for apt-get (or install them by hand): ${need[*]}"; exit 1; }
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

# 2. code-server, with its postinstall replayed by hand: the real one runs
#    `npm install` in lib/vscode, where @vscode/ripgrep's install script fetches
#    rg from api.github.com, which cannot be reached.
cs_dir=$work/code-server-$CS_VERSION
stamp=$cs_dir/.mnemo-e2e-complete
if [ -f "$stamp" ]; then
	log "code-server $CS_VERSION already installed in $cs_dir"
else
	stage=$cs_dir.partial.$$
	trap 'rm -rf "$stage"' EXIT
	rm -rf "$stage"
	mkdir -p "$stage"
	log "installing code-server $CS_VERSION into $cs_dir (about 1.5 minutes)"
	printf '{"name":"mnemo-vscode-e2e-code-server","private":true}\n' > "$stage/package.json"
	(
		cd "$stage"
		npm install --ignore-scripts --no-save --loglevel=error "code-server@$CS_VERSION"
		npm rebuild --loglevel=error argon2 # code-server's own native module

		cd node_modules/code-server/lib/vscode
		npm install --omit=dev --ignore-scripts --loglevel=error
		# @vscode/ripgrep's install script does nothing when bin/ exists.
		mkdir -p node_modules/@vscode/ripgrep/bin
		cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
		npm rebuild --loglevel=error # kerberos, node-pty, spdlog, … built with node-gyp
		# postinstall.sh of 4.10x links node_modules.asar; newer ones dropped it.
		if grep -q '^  symlink_asar' ../../postinstall.sh; then
			ln -sfn node_modules node_modules.asar
		fi
		(cd bin/remote-cli && ln -sfn code-linux.sh code-server)
		(cd bin/helpers && ln -sfn browser-linux.sh browser.sh)

		cd extensions # the built-in extensions' shared dependencies (typescript)
		npm install --omit=dev --ignore-scripts --loglevel=error
		node ./postinstall.mjs >/dev/null
	) >&2
	version=$(HOME="$stage/home" XDG_CONFIG_HOME="$stage/home/.config" XDG_DATA_HOME="$stage/home/.local/share" \
		node "$stage/node_modules/code-server/out/node/entry.js" --version 2>/dev/null | grep -E "^[0-9]+\.[0-9]+\.[0-9]+ " || true)
	rm -rf "${stage:?}/home"
	case $version in
	"$CS_VERSION "*) ;;
	*) log "code-server --version said '$version', want $CS_VERSION"; exit 1 ;;
	esac
	touch "$stage/.mnemo-e2e-complete"
	rm -rf "$cs_dir"
	mv "$stage" "$cs_dir"
	trap - EXIT
	log "code-server $version"
fi

# 3. The harness: puppeteer-core only (it downloads no browser; chromium is Debian's).
lock_sum=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$here/node_modules/.mnemo-lock-sum" 2>/dev/null)" = "$lock_sum" ]; then
	log "harness dependencies up to date"
else
	log "installing the harness dependencies"
	(cd "$here" && npm ci --loglevel=error) >&2
	echo "$lock_sum" > "$here/node_modules/.mnemo-lock-sum"
fi

log "ready in $(( $(now_ms) - t0 )) ms (work folder $work)"
