// Package e2e holds the offline end-to-end tests that run the real Claude Code
// CLI (npm @anthropic-ai/claude-code, pinned by setup.sh) against the scripted
// Messages API of package modelserver.
//
// The tests carry the build tag e2e and need a loopback-only network
// namespace, so that the CLI cannot reach anything but 127.0.0.1. run.sh
// installs the CLI, builds the test binary and runs it under `unshare -n`:
//
//	adapters/claudecode/e2e/run.sh                  # all tests, verbose
//	adapters/claudecode/e2e/run.sh -test.run FixCalc
//
// Environment: MNEMO_CLAUDE_BIN (the claude binary; run.sh sets it),
// MNEMO_BIN and MNEMO_HOOK_BIN (default <repo>/bin/mnemo and
// <repo>/bin/mnemo-hook; the Mnemo tests skip without them),
// MNEMO_E2E_ARTIFACTS (a folder that receives each run's stream-json,
// stderr, the server's requests and the hook logs).
package e2e
