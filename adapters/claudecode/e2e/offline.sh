# Shell functions shared by the run.sh scripts of the offline end-to-end
# tests (Claude Code, Codex, Gemini, OpenCode): source it, then call them.
# They need nothing but a POSIX shell, unshare and ip.

# offline_artifacts DIR: an empty DIR, exported as MNEMO_E2E_ARTIFACTS for
# the tests to fill; "none" unsets MNEMO_E2E_ARTIFACTS (no artifacts).
offline_artifacts() {
	if [ "$1" = none ]; then
		unset MNEMO_E2E_ARTIFACTS
		return
	fi
	rm -rf "$1"
	mkdir -p "$1"
	export MNEMO_E2E_ARTIFACTS="$1"
}

# offline_abs VAR...: each of these variables that is set becomes the
# absolute path of what it names, exported: the test binary runs in its
# package folder, where a relative path would mean something else.
offline_abs() {
	for v in "$@"; do
		eval "val=\${$v:-}"
		if [ -n "$val" ]; then
			val=$(cd "$(dirname "$val")" && pwd)/$(basename "$val")
			export "$v=$val"
		fi
	done
}

# offline_exec TESTBIN [FLAGS...]: replace this shell with TESTBIN run in a
# new network namespace whose only interface is an up loopback, so that
# nothing can reach beyond 127.0.0.1; -test.v and a 5-minute -test.timeout
# come before FLAGS. It runs as root (unshare -n), else in an unprivileged
# user namespace (unshare -r -n). Call it from the package folder, as `go
# test` would run the binary.
offline_exec() {
	bin=$1
	shift
	ns="unshare -n"
	[ "$(id -u)" -eq 0 ] || ns="unshare -r -n"
	# shellcheck disable=SC2016 # $0 and $@ expand in the inner shell
	exec $ns sh -c 'ip link set lo up && exec "$0" "$@"' "$bin" -test.v -test.timeout 5m "$@"
}
