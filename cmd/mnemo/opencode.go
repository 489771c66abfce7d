package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/mnemo-dev/mnemo/adapters/claudecode"
	"github.com/mnemo-dev/mnemo/adapters/opencode"
)

// installers are the hosts `mnemo install` knows: claudecode's, which
// speak hook dialects, and OpenCode's plugin. The adapters do not import
// each other; the command joins them.
func installers() []claudecode.Installer {
	return append(slices.Clone(claudecode.Installers), opencodeInstaller())
}

// opencodeEvents are the stages the plugin hands to mnemo-hook.
var opencodeEvents = []string{
	claudecode.EventSessionStart, claudecode.EventUserPromptSubmit, claudecode.EventPostToolUse,
	claudecode.EventStop, claudecode.EventSessionEnd,
}

// opencodeInstaller installs OpenCode's plugin (adapters/opencode) with
// mnemo-hook's path written in, and registers `mnemo mcp` under "mcp" in
// OpenCode's config (a local server: the command as an array).
func opencodeInstaller() claudecode.Installer {
	return claudecode.Installer{
		Host: claudecode.HostOpenCode, Title: "OpenCode",
		Scopes:    []string{opencode.ScopeUser, opencode.ScopeProject},
		Events:    opencodeEvents,
		HooksPath: opencode.PluginPath,
		Install: func(path string, o claudecode.InstallOptions) (claudecode.Result, error) {
			r, err := opencode.Install(path, o.HookPath)
			out := claudecode.Result{Path: r.Path, Changed: r.Changed, Label: "plugin"}
			if r.Changed {
				out.Added = slices.Clone(opencodeEvents)
			}
			return out, err
		},
		Uninstall: func(path string, _ claudecode.InstallOptions) (claudecode.Result, error) {
			r, err := opencode.Uninstall(path)
			out := claudecode.Result{Path: r.Path, Deleted: r.Changed, Changed: r.Changed, Label: "plugin"}
			if r.Changed {
				out.Removed = slices.Clone(opencodeEvents)
			}
			return out, err
		},
		Wired: opencodeWired,
		MCPPath: func(scope, dir, home string) (string, string, error) {
			plugin, err := opencode.PluginPath(scope, dir, home)
			if err != nil {
				return "", "", err
			}
			// The plugin's folder is plugins/ in the config folder, whose
			// opencode.json holds the servers; a project's is at its root.
			if scope == opencode.ScopeProject {
				return filepath.Join(dir, "opencode.json"), "", nil
			}
			return filepath.Join(filepath.Dir(filepath.Dir(plugin)), "opencode.json"), "", nil
		},
		InstallMCP: func(path string, o claudecode.MCPOptions) (claudecode.Result, error) {
			if !filepath.IsAbs(o.Mnemo) {
				return claudecode.Result{}, fmt.Errorf("install: the mnemo binary must be an absolute path, not %q", o.Mnemo)
			}
			entry := struct {
				Type        string            `json:"type"`
				Command     []string          `json:"command"`
				Enabled     bool              `json:"enabled"`
				Environment map[string]string `json:"environment,omitempty"`
			}{"local", []string{o.Mnemo, "mcp"}, true, o.Env}
			r, err := claudecode.InstallMCPEntry(path, "mcp", entry, o.Now)
			r.Label = "MCP server"
			return r, err
		},
		UninstallMCP: func(path string) (claudecode.Result, error) {
			r, err := claudecode.UninstallMCPEntry(path, "mcp")
			r.Label = "MCP server"
			return r, err
		},
		Rules: "AGENTS.md",
		Dirs:  []string{filepath.Join(".config", "opencode")}, Commands: []string{"opencode"},
	}
}

// opencodeWired says whether the plugin at path is Mnemo's, and which
// mnemo-hook it runs.
func opencodeWired(path string) (claudecode.Wiring, error) {
	w := claudecode.Wiring{Path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		w.Missing = slices.Clone(opencodeEvents)
		return w, nil
	}
	if err != nil {
		return w, err
	}
	w.Exists = true
	hook, ok := opencode.InstalledHook(data)
	if !ok {
		w.Missing = slices.Clone(opencodeEvents)
		return w, nil
	}
	w.Wired = slices.Clone(opencodeEvents)
	if hook != "" {
		w.Hooks = []string{hook}
		if _, err := os.Stat(hook); err != nil {
			w.Gone = []string{hook}
		}
	}
	return w, nil
}
