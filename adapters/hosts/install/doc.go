// Package install wires Mnemo into every host: `mnemo install <host>` and
// `mnemo uninstall <host>` drive its Installers, one per host, each
// writing the host's hooks file in its format and units (running
// `mnemo-hook --host <host> <event>`), registering Mnemo's MCP server
// (`mnemo mcp`) and naming the host's rules file.
//
// Claude Code's own installer (Install, Uninstall, InstallMCP) merges the
// hooks into a settings.json (user, project or local scope,
// SettingsPath) and the MCP server into ~/.claude.json or a project's
// .mcp.json (MCPConfigPath): current Claude Code reads MCP servers from
// those, not from settings.json. Its plugin (adapters/claudecode/plugin)
// follows the same stages (HookGroups).
//
// Every installer keeps what is not Mnemo's: the user's entries stay, in
// their order, and every byte of the file but Mnemo's entries stays as it
// was (jsonedit.go for JSON with comments; toml.go for Codex CLI's
// config.toml, edited line by line), so that an uninstall gives the file
// back byte for byte. A file is backed up before it changes and written
// atomically; a file that cannot be read as the host's is refused, with
// the line and column, and left untouched. Codex CLI runs a hook only
// once trusted: its installer records Mnemo's trust in config.toml
// (codex.go). OpenCode has no command hooks: its installer writes Mnemo's
// plugin (adapters/opencode) with mnemo-hook's path in it (opencode.go).
package install
