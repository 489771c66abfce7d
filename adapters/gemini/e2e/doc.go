// Package e2e holds the offline end-to-end tests that run the real Gemini CLI
// (npm @google/gemini-cli, pinned by setup.sh) against a scripted Gemini API
// on 127.0.0.1 (server_test.go), with hooks installed in its settings.json.
//
// The tests carry the build tag e2e and need a loopback-only network
// namespace, so that the CLI cannot reach anything but 127.0.0.1. run.sh
// installs the CLI, builds the test binary and runs it under `unshare -n`:
//
//	adapters/gemini/e2e/run.sh                        # all tests, verbose
//	adapters/gemini/e2e/run.sh -test.run HookPayloads
//
// TestAPIServer checks the scripted server alone and runs anywhere:
//
//	go test -tags e2e -run TestAPIServer ./adapters/gemini/e2e
//
// Environment: MNEMO_GEMINI_BIN (the gemini binary; run.sh sets it),
// MNEMO_BIN and MNEMO_HOOK_BIN (default <repo>/bin/mnemo and
// <repo>/bin/mnemo-hook; the Mnemo test skips without them),
// MNEMO_E2E_ARTIFACTS (a folder that receives each run's output, the
// server's requests, the hook payloads and Mnemo's logs),
// MNEMO_GEMINI_UPDATE_PAYLOADS=1 (TestGeminiHookPayloads rewrites
// adapters/gemini/testdata/payloads from its run).
package e2e
