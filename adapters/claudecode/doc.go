// Package claudecode connects Claude Code to Mnemo through Claude Code's
// command hooks, and with them every coding agent whose hooks speak a
// dialect of Claude Code's format: Codex CLI, Gemini CLI, Cursor, VS
// Code's agent hooks, Copilot CLI, OpenCode (through Mnemo's plugin) and
// Windsurf (Hosts). mnemo-hook --host HOST reads a payload of any of them
// (dialect.go) and maps it onto Claude Code's: the host's event names onto
// the five stages, its session id namespaced by host ("codex:…"), its tool
// names and inputs onto Claude Code's vocabulary (tools.go), so that the
// memory agent, search and the eval treat every host alike. A payload
// that names its event (a tool use id, a generation, a timestamp) gets an
// event key from its content, so that one event delivered through two
// hooks (Cursor and VS Code also run the hooks of Claude Code's settings)
// is stored once. The answer takes each host's shape (answerFor).
//
// Besides the dialects, it has four parts:
//
//   - The hook client, RunHook, which is all that cmd/mnemo-hook runs: it
//     reads one hook payload (Payload) from stdin, maps it onto one call of
//     the daemon (Translate), strips private tags and redacts secrets before
//     anything leaves the process, calls the daemon over its Unix socket
//     within a hard per-stage deadline, and prints a valid answer (with
//     SessionStart's context, or a prompt's recall, as additionalContext).
//     It never blocks or breaks Claude Code: on any failure it prints a
//     valid empty answer, exits 0, logs to $MNEMO_HOME/logs/hook.log and
//     appends the call to the spool.
//   - The spool, $MNEMO_HOME/spool/hooks.jsonl (AppendSpool, TakeSpool,
//     IngestSpool): the calls a hook could not deliver in time, fsynced, for
//     the daemon to ingest when it starts. Every call carries an eventKey, so
//     a call that reached the daemon but whose answer was lost is stored
//     once even when it is replayed.
//   - The plugin files under plugin/ (a Claude Code plugin whose
//     hooks/hooks.json runs ${CLAUDE_PLUGIN_ROOT}/bin/mnemo-hook in exec
//     form), and Stages, the table both the plugin and the installer follow.
//   - The settings installer, Install and Uninstall, which merges the same
//     hooks into a settings.json (user or project scope, SettingsPath) and
//     takes them out again, leaving everything else in the file as it was.
//
// The hook client stays small: it imports rpc, the domain's types (memory)
// and memory/privacy, never memory/store, memory/local, vector, Badger or
// chromem-go, so that mnemo-hook starts in a millisecond or two and never
// touches the data directory's lock. A test checks this with go list
// -deps.
//
// Data lives in $MNEMO_HOME, never in the plugin's folder: Claude Code
// replaces ${CLAUDE_PLUGIN_ROOT} on every plugin update.
//
// Mnemo's MCP server (mnemo mcp) is registered apart from the hooks:
// current Claude Code reads MCP servers from ~/.claude.json, a project's
// .mcp.json or a plugin's .mcp.json, not from settings.json. InstallMCP and
// UninstallMCP edit those files (MCPConfigPath) the way Install edits the
// settings.
//
// The other hosts (Hosts) have installers of their own (Installers,
// install_hosts.go) with the same guarantees: each writes the host's hooks
// file in its format and units, running `mnemo-hook --host <host> <event>`,
// its MCP server, and names its rules file. Codex CLI's config.toml is
// edited line by line (toml.go, codex.go): Mnemo's MCP server table, and
// the trust records that Codex needs before it runs a hook.
package claudecode
