// Package e2e holds the offline end-to-end tests that run the real OpenAI
// Codex CLI (npm @openai/codex, pinned by setup.sh) against a scripted
// Responses API on 127.0.0.1 (responses_test.go), with Mnemo's hooks
// installed: a second Codex session gets the first one's memory, and a Codex
// session gets the memory of a Claude Code session in the same project (the
// real claude CLI of adapters/claudecode/e2e/setup.sh, scripted by package
// modelserver).
//
// The tests carry the build tag e2e and need a loopback-only network
// namespace, so that the CLIs cannot reach anything but 127.0.0.1. run.sh
// installs the CLIs, builds the test binary and runs it under `unshare -n`:
//
//	adapters/codex/e2e/run.sh                       # all tests, verbose
//	adapters/codex/e2e/run.sh -test.run Recall
//
// Environment: MNEMO_CODEX_BIN (the codex binary; run.sh sets it),
// MNEMO_CLAUDE_BIN (the claude binary, for the cross-agent test; run.sh sets
// it when adapters/claudecode/e2e/setup.sh succeeds), MNEMO_BIN and
// MNEMO_HOOK_BIN (default <repo>/bin/mnemo and <repo>/bin/mnemo-hook; the
// Mnemo tests skip without them), MNEMO_E2E_ARTIFACTS (a folder that
// receives each run's output, the model requests, the hook payloads and
// Mnemo's logs).
package e2e
