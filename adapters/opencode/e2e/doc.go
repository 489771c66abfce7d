// Package e2e holds the offline end-to-end tests that run the real OpenCode
// CLI (npm opencode-ai, pinned by setup.sh) with Mnemo's plugin, hook and
// daemon, against a scripted OpenAI-compatible chat-completions server on
// 127.0.0.1 (a custom provider of OpenCode's bundled
// @ai-sdk/openai-compatible: nothing is downloaded at run time).
//
// The tests carry the build tag e2e and need a loopback-only network
// namespace, so that the CLI cannot reach anything but 127.0.0.1, whose
// /etc/resolv.conf names 127.0.0.1, where the tests record every name the
// CLI looks up. run.sh installs the CLI, builds the test binary and runs it
// under `unshare -n -m`:
//
//	adapters/opencode/e2e/run.sh                  # all tests, verbose
//	adapters/opencode/e2e/run.sh -test.run Recall
//
// What OpenCode 1.18.33 reaches for, and how the tests switch it off:
// models.opencode.ai (the models.dev catalogue; OPENCODE_DISABLE_MODELS_FETCH=1),
// registry.npmjs.org (an npm install of @opencode-ai/plugin into each config
// folder that lacks it; the tests seed the folders from setup.sh's
// config-deps), and the update check (autoupdate false and
// OPENCODE_DISABLE_AUTOUPDATE=1). TestOpenCodeDefaultsReachOut shows the
// first two with the switches off; TestOpenCodeOffline that none is left
// with them on.
//
// TestPluginPayloadsMatchTestdata runs the plugin with a recorder as
// mnemo-hook and checks the fields of what it hands the hook against
// ../testdata/payloads/ (MNEMO_OPENCODE_UPDATE_PAYLOADS=1 rewrites them).
//
// Environment: MNEMO_OPENCODE_CACHE (setup.sh's folder; run.sh sets it),
// MNEMO_OPENCODE_BIN (the opencode binary; run.sh sets it), MNEMO_BIN and
// MNEMO_HOOK_BIN (default <repo>/bin/mnemo and <repo>/bin/mnemo-hook; the
// Mnemo tests skip without them), MNEMO_E2E_ARTIFACTS (a folder that
// receives each run's JSON events and logs, the server's requests, the
// names looked up and Mnemo's logs).
package e2e
