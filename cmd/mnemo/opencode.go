package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
	"github.com/mnemo-dev/mnemo/adapters/opencode"
)

// installers are the hosts `mnemo install` knows: claudecode's, which
// speak hook dialects, and OpenCode's plugin. The adapters do not import
// each other; the command joins them.
func installers() []install.Installer {
	return append(slices.Clone(install.Installers), opencodeInstaller())
}

// opencodeEvents are the stages the plugin hands to mnemo-hook.
var opencodeEvents = []string{
	hosts.EventSessionStart, hosts.EventUserPromptSubmit, hosts.EventPostToolUse,
	hosts.EventStop, hosts.EventSessionEnd,
}

// opencodeInstaller installs OpenCode's plugin (adapters/opencode) with
// mnemo-hook's path written in, and registers `mnemo mcp` under "mcp" in
// OpenCode's config (a local server: the command as an array).
func opencodeInstaller() install.Installer {
	return install.Installer{
		Host: hosts.OpenCode, Title: "OpenCode",
		Scopes:    []string{opencode.ScopeUser, opencode.ScopeProject},
		Events:    opencodeEvents,
		HooksPath: opencode.PluginPath,
		Install: func(path string, o install.Options) (install.Result, error) {
			r, err := opencode.Install(path, o.HookPath)
			out := install.Result{Path: r.Path, Changed: r.Changed, Label: "plugin"}
			if r.Changed {
				out.Added = slices.Clone(opencodeEvents)
			}
			return out, err
		},
		Uninstall: func(path string, _ install.Options) (install.Result, error) {
			r, err := opencode.Uninstall(path)
			out := install.Result{Path: r.Path, Deleted: r.Changed, Changed: r.Changed, Label: "plugin"}
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
		InstallMCP: func(path string, o install.MCPOptions) (install.Result, error) {
			if !filepath.IsAbs(o.Mnemo) {
				return install.Result{}, fmt.Errorf("install: the mnemo binary must be an absolute path, not %q", o.Mnemo)
			}
			entry := struct {
				Type        string            `json:"type"`
				Command     []string          `json:"command"`
				Enabled     bool              `json:"enabled"`
				Environment map[string]string `json:"environment,omitempty"`
			}{"local", []string{o.Mnemo, "mcp"}, true, o.Env}
			r, err := install.InstallMCPEntry(path, "mcp", entry, o.Now)
			r.Label = "MCP server"
			return r, err
		},
		UninstallMCP: func(path string) (install.Result, error) {
			r, err := install.UninstallMCPEntry(path, "mcp")
			r.Label = "MCP server"
			return r, err
		},
		Rules: "AGENTS.md",
		Dirs:  []string{filepath.Join(".config", "opencode")}, Commands: []string{"opencode"},
	}
}

// opencodeWired says whether the plugin at path is Mnemo's, and which
// mnemo-hook it runs.
func opencodeWired(path string) (install.Wiring, error) {
	w := install.Wiring{Path: path}
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
