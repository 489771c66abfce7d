// Package hosts is what every coding agent Mnemo hooks into shares: the
// host table (All: Claude Code, Codex CLI, Gemini CLI, Cursor, VS Code's
// agent hooks, Copilot CLI, OpenCode through Mnemo's plugin, Windsurf),
// the stages their events map onto (Stages), the hook payload in Claude
// Code's shape (Payload) and the dialects it is read from (Wire), the
// tools in Claude Code's vocabulary, and the answer in each host's shape.
//
// Claude Code's hook format has become the common one; every other host
// speaks a dialect of it. Wire.Normalize reads a payload of any of them
// and maps it onto Claude Code's: the host's event names onto the stages,
// resolved once here (Payload.Stage) and passed on to whoever reads the
// payload after; its session id namespaced by host ("codex:…"); its tool
// names and inputs onto Claude Code's (tools.go), so that the memory
// agent, search and the eval treat every host alike. A payload that names
// its event (a tool use id, a generation, a timestamp) gets an event key
// from its content (Payload.EventKey), so that one event delivered
// through two hooks (Cursor and VS Code also run the hooks of Claude
// Code's settings) is stored once. Answer prints the hook's answer in the
// host's shape.
//
// Its packages, by concern, each importing this one:
//
//   - hook: all that mnemo-hook links: the hook client (Run, Main), the
//     mapping of a payload onto a daemon call (Translate), the spool.
//   - install: `mnemo install <host>`: each host's installer (its hooks
//     file, its MCP server, its rules file), the byte-keeping JSONC and
//     TOML editors, Codex CLI's trust records, OpenCode's plugin.
//   - backfill: `mnemo backfill`: the hook calls rebuilt from the session
//     transcripts of Claude Code, Codex CLI and Gemini CLI.
//
// This package imports only the domain's types (memory), so that the hook
// that links it stays small.
//
// # A new host
//
// A new host touches one place in code, its own entries, plus its test
// data:
//
//   - here, its entry in All (its name, its event names onto the stages,
//     the stages whose context it takes), and, if its payloads are not
//     Claude Code's, what marks them (Wire.dialectOf, the fields of Wire)
//     and how its fields and tools read as Claude Code's (Wire.Normalize,
//     toolNames); Answer, if its answer has a shape of its own;
//   - in package install, its Installer in Installers;
//   - in package backfill, a Source, if its transcripts can be read;
//   - its test data in adapters/<host>/testdata: documented/ (payloads
//     built from the host's documentation, one per event and tool kind,
//     each folder's README naming its sources), payloads/ (recorded from
//     the real host), and adapters/<host>/e2e for a run of the real host
//     offline. The hook's tests read every documented/ folder.
//
// The command line and the MCP server list the hosts from All.
package hosts
