package opencode

import _ "embed"

// Plugin is plugin/mnemo.js as it is in the repository: its
// INSTALLED_HOOK_BIN is empty, and the installer writes mnemo-hook's path
// there (adapters/hosts/install).
//
//go:embed plugin/mnemo.js
var Plugin string

// PluginName is the plugin file's name in OpenCode's plugins folder.
const PluginName = "mnemo.js"
