// Package claudecode holds what is Claude Code's own: its plugin (plugin/:
// a Claude Code plugin whose hooks/hooks.json runs
// ${CLAUDE_PLUGIN_ROOT}/bin/mnemo-hook in exec form, and whose .mcp.json
// runs Mnemo's MCP server), the payloads and a transcript recorded from
// the real CLI with the calls they make (testdata/payloads,
// testdata/golden, testdata/transcript.jsonl), the scripted Messages API
// its offline end-to-end tests run against (modelserver), and those tests
// (e2e). The hook that Claude Code runs, like every other host's, is in
// adapters/hosts and its packages; the test here checks that the plugin's
// hooks are the ones the installer writes.
package claudecode
