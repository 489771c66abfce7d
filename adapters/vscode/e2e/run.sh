#!/usr/bin/env bash
# The Mnemo extension in a real VS Code, end to end, offline: package the
# extension with the mnemo binary inside, install it into code-server 4.100.3
# (VS Code 1.100.3) in a fresh profile, open a git workspace "shop" in headless
# Chromium, edit a function body in each of two files and save them through
# the UI, let the editor go idle, open the session and a save's record in the
# Mnemo view, close the page, and check with the mnemo
# command line that both saves are in memory under project "shop" and the
# editor's session, each naming the function it changed and found by the
# identifier it added, with a summary that names the functions.
#
# usage: run.sh
# Env:   MNEMO_VSCODE_E2E_DIR  work folder (default <repo>/.cache/vscode-e2e); see setup.sh
#        MNEMO_BIN             the mnemo binary (default <repo>/bin/mnemo, built if missing)
#        MNEMO_VSIX            an already packaged .vsix to test (default: packaged here)
#        MNEMO_E2E_KEEP=1      keep the run folder even when the test passes
#        MNEMO_E2E_NETNS=0     do not move into a loopback-only network namespace
#
# The preparation (setup.sh, go build, packaging) may use the package
# registries. The test itself runs in a new network namespace that has only an
# up loopback interface (as root `unshare -n`, else `unshare -r -n`), so nothing
# it starts can reach beyond 127.0.0.1; HOME, XDG_* and MNEMO_HOME point into
# the run folder. Every process the test starts (code-server with its extension
# host and the sidecar, chromium, the mnemo daemon) is stopped on the way out,
# also on failure, and a process left behind fails the test. Prints PASS or
# FAIL and the timings; exits 0 only on PASS.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
export MNEMO_VSCODE_E2E_DIR=${MNEMO_VSCODE_E2E_DIR:-$repo/.cache/vscode-e2e}

now_ms() { date +%s%3N; }
say() { echo "run.sh: $*"; }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f s", ms / 1000 }'; }

# ---- Preparation, outside the namespace -----------------------------------
if [ "${1:-}" != --test ]; then
	t_start=$(now_ms)
	"$here/setup.sh" || { say "setup failed"; echo FAIL; exit 1; }
	t_setup=$(now_ms)
	work=$(cd "$MNEMO_VSCODE_E2E_DIR" && pwd -P)

	bin=${MNEMO_BIN:-$repo/bin/mnemo}
	if [ ! -x "$bin" ]; then
		say "building $bin"
		mkdir -p "$(dirname "$bin")"
		(cd "$repo" && GOFLAGS=${GOFLAGS:--buildvcs=false} go build -o "$bin" ./cmd/mnemo) || { echo FAIL; exit 1; }
	fi
	MNEMO_BIN=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
	export MNEMO_BIN

	if [ -z "${MNEMO_VSIX:-}" ]; then
		MNEMO_VSIX=$work/mnemo-e2e.vsix
		"$here/vsix.sh" "$MNEMO_VSIX" > /dev/null 2> "$work/vsix.log" || {
			cat "$work/vsix.log"; say "packaging failed"; echo FAIL; exit 1
		}
	fi
	MNEMO_VSIX=$(cd "$(dirname "$MNEMO_VSIX")" && pwd)/$(basename "$MNEMO_VSIX")
	t_vsix=$(now_ms)
	export MNEMO_VSIX MNEMO_E2E_T_SETUP=$((t_setup - t_start)) MNEMO_E2E_T_VSIX=$((t_vsix - t_setup)) MNEMO_E2E_T0=$t_start

	if [ "${MNEMO_E2E_NETNS:-1}" = 0 ]; then
		say "network namespace off (MNEMO_E2E_NETNS=0)"
		exec "$0" --test
	fi
	ns=(unshare -n)
	[ "$(id -u)" -eq 0 ] || ns=(unshare -r -n)
	if ! "${ns[@]}" true 2>/dev/null; then
		say "cannot make a network namespace (${ns[*]}); set MNEMO_E2E_NETNS=0 to run without one"
		echo FAIL
		exit 1
	fi
	# shellcheck disable=SC2016 # $0 expands in the inner shell
	exec "${ns[@]}" sh -c 'ip link set lo up && exec "$0" --test' "$0"
fi

# ---- The test ----------------------------------------------------------------
say "network interfaces: $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | paste -sd' ')"
work=$(cd "$MNEMO_VSCODE_E2E_DIR" && pwd -P)
cs_entry=$work/code-server-4.100.3/node_modules/code-server/out/node/entry.js

# A fresh run folder; kept when the test fails, for its logs and screenshots
# (the newest few of those).
mkdir -p "$work/runs"
find "$work/runs" -mindepth 1 -maxdepth 1 -type d -printf '%T@ %p\n' | sort -rn | tail -n +6 | cut -d' ' -f2- |
	while read -r old; do rm -rf "$old"; done
run=$(mktemp -d "$work/runs/$(date +%Y%m%d-%H%M%S)-XXXX")
mkdir -p "$run/home" "$run/mnemo" "$run/user-data/User" "$run/extensions"

cs_pid=
harness_pid=
result=FAIL
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	# timeout forwards the signal to the harness, whose puppeteer closes chromium.
	[ -n "$harness_pid" ] && kill -TERM "$harness_pid" 2>/dev/null
	if [ -f "$run/chromium.pid" ]; then
		kill -TERM -- "-$(cat "$run/chromium.pid")" 2>/dev/null
	fi
	if [ -n "$cs_pid" ] && kill -0 "$cs_pid" 2>/dev/null; then
		kill -TERM -- "-$cs_pid" 2>/dev/null
		for _ in $(seq 1 50); do kill -0 "$cs_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$cs_pid" 2>/dev/null
	fi
	MNEMO_HOME=$run/mnemo "$MNEMO_BIN" daemon stop > /dev/null 2>&1
	# Nothing this run started may outlive it. Every such process names the
	# run folder on its command line (profiles, extensions, config); give
	# them a moment to finish exiting.
	local left=
	for _ in $(seq 1 50); do
		left=$(pgrep -f -- "$run/" | grep -vx "$$" || true)
		[ -z "$left" ] && break
		sleep 0.1
	done
	if [ -n "$left" ]; then
		say "processes left behind:"
		ps -o pid,pgid,args -p "$(echo "$left" | paste -sd,)" || true
		result=FAIL
	fi
	if [ "$result" = PASS ] && [ "${MNEMO_E2E_KEEP:-0}" != 1 ]; then
		rm -rf "$run"
	else
		say "run folder kept: $run"
	fi
	echo "$result"
	[ "$result" = PASS ] && exit 0
	[ "$status" -ne 0 ] && exit "$status"
	exit 1
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Keep code-server, chromium and mnemo out of the real home.
export HOME=$run/home XDG_CONFIG_HOME=$run/home/.config XDG_DATA_HOME=$run/home/.local/share \
	XDG_CACHE_HOME=$run/home/.cache XDG_STATE_HOME=$run/home/.local/state
# The extension host inherits code-server's environment and the sidecar the
# extension host's, so this data directory reaches the daemon the sidecar
# starts; mnemo.home below says the same through the extension's setting. The
# idle timeout is only a backstop: cleanup stops the daemon.
export MNEMO_HOME=$run/mnemo MNEMO_IDLE_TIMEOUT=10m
export GIT_CONFIG_NOSYSTEM=1

# 1. The workspace: a git repository named shop, so that the project is "shop".
project=shop
ws=$run/$project
files=cart.py,checkout.py
mkdir -p "$ws"
printf 'def total(items):\n    return sum(i.price for i in items)\n' > "$ws/cart.py"
printf 'def checkout(cart):\n    return cart.total()\n' > "$ws/checkout.py"
git -C "$ws" init -q
git -C "$ws" add -A
git -C "$ws" -c user.name=e2e -c user.email=e2e@example.com commit -q -m start
ws=$(cd "$ws" && pwd -P)

# 2. The fresh profile's settings: the extension's own settings, a short idle
#    period (0.1 min = 6 s: far longer than the gap between the two saves, so
#    one summary covers both), a save window of 2 s (the saves of a file within
#    it are one observation) and the daemon path; nothing that could type for us.
cat > "$run/user-data/User/settings.json" << EOF
{
  "mnemo.home": "$run/mnemo",
  "mnemo.idleMinutes": 0.1,
  "mnemo.saveWindowSeconds": 2,
  "mnemo.remote": "auto",
  "telemetry.telemetryLevel": "off",
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "update.mode": "none",
  "files.autoSave": "off",
  "editor.quickSuggestions": { "other": "off", "comments": "off", "strings": "off" },
  "editor.suggestOnTriggerCharacters": false,
  "editor.acceptSuggestionOnEnter": "off",
  "editor.formatOnSave": false,
  "git.autofetch": false
}
EOF

# 3. Install the VSIX into the fresh extensions folder through code-server's CLI.
t_test=$(now_ms)
port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$port" > "$run/config.yaml"
cs=(node "$cs_entry" --config "$run/config.yaml" --user-data-dir "$run/user-data" --extensions-dir "$run/extensions")
if ! "${cs[@]}" --install-extension "$MNEMO_VSIX" > "$run/install.log" 2>&1 ||
	! grep -q "successfully installed" "$run/install.log"; then
	cat "$run/install.log"
	say "installing $MNEMO_VSIX failed"
	exit 1
fi
t_install=$(now_ms)

# 4. code-server, in its own process group so that one signal ends it, its
#    extension host and the sidecar. The daemon detaches itself.
setsid "${cs[@]}" --disable-telemetry --disable-update-check --disable-workspace-trust \
	--disable-getting-started-override > "$run/code-server.log" 2>&1 &
cs_pid=$!
url=http://127.0.0.1:$port
for _ in $(seq 1 300); do
	curl -sf -o /dev/null --max-time 1 "$url/healthz" && break
	kill -0 "$cs_pid" 2>/dev/null || { cat "$run/code-server.log"; say "code-server exited"; exit 1; }
	sleep 0.1
done
curl -sf -o /dev/null --max-time 1 "$url/healthz" || { cat "$run/code-server.log"; say "code-server did not answer"; exit 1; }
t_server=$(now_ms)
say "code-server on $url, workspace $ws"

# 5. Drive the workbench, then stop code-server and read what memory kept.
export MNEMO_E2E_URL=$url MNEMO_E2E_WORKSPACE=$ws MNEMO_E2E_PROJECT=$project MNEMO_E2E_FILES=$files \
	MNEMO_E2E_RUN=$run MNEMO_E2E_EXTENSIONS=$run/extensions
# In the background, so that a signal to this script is handled at once.
harness() {
	timeout -k 5 "$1" node "$here/harness.mjs" "$2" &
	harness_pid=$!
	wait "$harness_pid"
	local status=$?
	harness_pid=
	return "$status"
}
harness 240 drive
drive=$?
t_drive=$(now_ms)
kill -TERM -- "-$cs_pid" 2>/dev/null
for _ in $(seq 1 100); do kill -0 "$cs_pid" 2>/dev/null || break; sleep 0.1; done
t_stopped=$(now_ms)
verify=1
if [ "$drive" -eq 0 ]; then
	harness 60 verify
	verify=$?
fi
t_end=$(now_ms)

if [ "$drive" -ne 0 ] || [ "$verify" -ne 0 ]; then
	for f in "$run/code-server.log" "$run"/user-data/logs/*/exthost*/mnemo-dev.mnemo/Mnemo.log "$run"/mnemo/logs/*; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 40 "$f"; }
	done
else
	result=PASS
fi
echo "--- timings: setup $(secs "$MNEMO_E2E_T_SETUP") | package $(secs "$MNEMO_E2E_T_VSIX")" \
	"| install-extension $(secs $((t_install - t_test))) | code-server up $(secs $((t_server - t_install)))" \
	"| browser session $(secs $((t_drive - t_server))) | code-server stop $(secs $((t_stopped - t_drive)))" \
	"| verify $(secs $((t_end - t_stopped))) | test $(secs $((t_end - t_test)))" \
	"| total $(secs $((t_end - MNEMO_E2E_T0)))"
