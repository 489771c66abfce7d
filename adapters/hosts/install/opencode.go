package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/opencode"
	"github.com/mnemo-dev/mnemo/memory/atomicfile"
)

// OpenCode has no command hooks: it loads JavaScript plugins in process.
// Its installer writes Mnemo's plugin (adapters/opencode) with mnemo-hook's
// absolute path in it, and registers `mnemo mcp` under "mcp" in OpenCode's
// config (a local server: the command as an array). Scopes: ScopeUser is
// the user's OpenCode config folder, every project; ScopeProject is
// <project>/.opencode, shared with the project.
func openCodeInstaller() Installer {
	return Installer{
		Host: hosts.OpenCode, Title: "OpenCode",
		Scopes:    []string{ScopeUser, ScopeProject},
		Events:    openCodeEvents,
		HooksPath: openCodePluginPath,
		Install: func(path string, o Options) (Result, error) {
			r, err := installPlugin(path, o.HookPath)
			out := Result{Path: r.Path, Changed: r.Changed, Label: "plugin"}
			if r.Changed {
				out.Added = slices.Clone(openCodeEvents)
			}
			return out, err
		},
		Uninstall: func(path string, _ Options) (Result, error) {
			r, err := uninstallPlugin(path)
			out := Result{Path: r.Path, Deleted: r.Changed, Changed: r.Changed, Label: "plugin"}
			if r.Changed {
				out.Removed = slices.Clone(openCodeEvents)
			}
			return out, err
		},
		Wired: openCodeWired,
		MCPPath: func(scope, dir, home string) (string, string, error) {
			plugin, err := openCodePluginPath(scope, dir, home)
			if err != nil {
				return "", "", err
			}
			// The plugin's folder is plugins/ in the config folder, whose
			// opencode.json holds the servers; a project's is at its root.
			if scope == ScopeProject {
				return filepath.Join(dir, "opencode.json"), "", nil
			}
			return filepath.Join(filepath.Dir(filepath.Dir(plugin)), "opencode.json"), "", nil
		},
		InstallMCP: func(path string, o MCPOptions) (Result, error) {
			if err := checkMnemo(o.Mnemo); err != nil {
				return Result{}, err
			}
			entry := struct {
				Type        string            `json:"type"`
				Command     []string          `json:"command"`
				Enabled     bool              `json:"enabled"`
				Environment map[string]string `json:"environment,omitempty"`
			}{"local", []string{o.Mnemo, "mcp"}, true, o.Env}
			r, err := installMCPEntry(path, "mcp", entry, o.Now)
			r.Label = "MCP server"
			return r, err
		},
		UninstallMCP: func(path string) (Result, error) {
			r, err := uninstallMCPEntry(path, "mcp")
			r.Label = "MCP server"
			return r, err
		},
		Rules: "AGENTS.md",
		Dirs:  []string{filepath.Join(".config", "opencode")}, Commands: []string{"opencode"},
	}
}

// openCodeEvents are the stages the plugin hands to mnemo-hook.
var openCodeEvents = []string{
	hosts.EventSessionStart, hosts.EventUserPromptSubmit, hosts.EventPostToolUse,
	hosts.EventStop, hosts.EventSessionEnd,
}

// openCodeWired says whether the plugin at path is Mnemo's, and which
// mnemo-hook it runs.
func openCodeWired(path string) (Wiring, error) {
	w := Wiring{Path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		w.Missing = slices.Clone(openCodeEvents)
		return w, nil
	}
	if err != nil {
		return w, err
	}
	w.Exists = true
	hook, ok := installedHook(data)
	if !ok {
		w.Missing = slices.Clone(openCodeEvents)
		return w, nil
	}
	w.Wired = slices.Clone(openCodeEvents)
	if hook != "" {
		w.Hooks = []string{hook}
		if _, err := os.Stat(hook); err != nil {
			w.Gone = []string{hook}
		}
	}
	return w, nil
}

// hookBinLine is the line of mnemo.js that openCodePlugin rewrites.
var hookBinLine = []byte(`const INSTALLED_HOOK_BIN = "";`)

// pluginMarker is in the plugin's first line: uninstallPlugin removes
// only a file that has it.
var pluginMarker = []byte("// Mnemo's plugin for OpenCode")

// openCodePluginPath returns where the plugin goes for a scope: for ScopeUser
// $XDG_CONFIG_HOME/opencode/plugins/mnemo.js, or
// <home>/.config/opencode/plugins/mnemo.js when XDG_CONFIG_HOME is not
// set (OpenCode's global config folder); for ScopeProject
// <projectDir>/.opencode/plugins/mnemo.js. OpenCode loads every *.js and
// *.ts of plugin/ and plugins/ in those folders.
func openCodePluginPath(scope, projectDir, home string) (string, error) {
	switch scope {
	case ScopeUser:
		config := os.Getenv("XDG_CONFIG_HOME")
		if config == "" {
			if home == "" {
				return "", errors.New("plugin path: no home directory")
			}
			config = filepath.Join(home, ".config")
		}
		return filepath.Abs(filepath.Join(config, "opencode", "plugins", opencode.PluginName))
	case ScopeProject:
		if projectDir == "" {
			return "", fmt.Errorf("plugin path: scope %s needs a project directory", scope)
		}
		return filepath.Abs(filepath.Join(projectDir, ".opencode", "plugins", opencode.PluginName))
	}
	return "", fmt.Errorf("%w %q: use %s or %s", ErrUnknownScope, scope, ScopeUser, ScopeProject)
}

// openCodePlugin returns the plugin with hookPath, the absolute path of
// mnemo-hook, written into its INSTALLED_HOOK_BIN constant. The plugin
// still prefers $MNEMO_HOOK_BIN when OpenCode's environment sets it.
func openCodePlugin(hookPath string) ([]byte, error) {
	if !filepath.IsAbs(hookPath) || filepath.Base(hookPath) != HookBinary {
		return nil, fmt.Errorf("plugin: the hook must be an absolute path to %s, not %q", HookBinary, hookPath)
	}
	pluginJS := []byte(opencode.Plugin)
	if bytes.Count(pluginJS, hookBinLine) != 1 {
		return nil, errors.New("plugin: mnemo.js has no single INSTALLED_HOOK_BIN line")
	}
	// A JSON string is a JavaScript string literal; strconv.Quote's escapes
	// (\a, \x…) are not all JSON's, so quote as JSON does.
	lit, err := jsonString(hookPath)
	if err != nil {
		return nil, err
	}
	line := append([]byte("const INSTALLED_HOOK_BIN = "), lit...)
	line = append(line, ';')
	return bytes.Replace(pluginJS, hookBinLine, line, 1), nil
}

// installedHook reads a plugin file: whether it is Mnemo's plugin, and the
// mnemo-hook path written into it ("" for the repository's copy, which
// finds mnemo-hook on PATH).
func installedHook(plugin []byte) (hook string, ok bool) {
	if !bytes.HasPrefix(plugin, pluginMarker) {
		return "", false
	}
	const prefix = "const INSTALLED_HOOK_BIN = "
	for line := range bytes.SplitSeq(plugin, []byte("\n")) {
		rest, found := bytes.CutPrefix(bytes.TrimSpace(line), []byte(prefix))
		if !found {
			continue
		}
		var s string
		if json.Unmarshal(bytes.TrimSuffix(rest, []byte(";")), &s) == nil {
			return s, true
		}
		return "", true
	}
	return "", true
}

// jsonString quotes s as a JSON (and so JavaScript) string literal.
func jsonString(s string) ([]byte, error) {
	for _, r := range s {
		if r < 0x20 {
			return nil, fmt.Errorf("plugin: the hook path %s has a control character", strconv.Quote(s))
		}
	}
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\u2028', '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.Bytes(), nil
}

// pluginResult says what installPlugin or uninstallPlugin did.
type pluginResult struct {
	Path    string // the plugin file
	Changed bool   // whether it was written or removed
}

// installPlugin writes the plugin for the hook at hookPath (openCodePlugin)
// to path, creating its folder. A file already there with the same content
// is left as it is (Changed false); Mnemo's plugin of another version or
// hook path is replaced; a file of the same name that is not Mnemo's is
// refused and kept.
func installPlugin(path, hookPath string) (pluginResult, error) {
	src, err := openCodePlugin(hookPath)
	if err != nil {
		return pluginResult{}, err
	}
	r := pluginResult{Path: path}
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, src):
		return r, nil
	case err == nil && !bytes.HasPrefix(old, pluginMarker):
		return r, fmt.Errorf("plugin: %s is not Mnemo's plugin; move it away first", path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return r, fmt.Errorf("plugin: %w", err)
	}
	if err := writePlugin(path, src); err != nil {
		return r, err
	}
	r.Changed = true
	return r, nil
}

// uninstallPlugin removes the plugin at path when it is Mnemo's. No file
// there is not an error (Changed false).
func uninstallPlugin(path string) (pluginResult, error) {
	r := pluginResult{Path: path}
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("plugin: %w", err)
	}
	if !bytes.HasPrefix(old, pluginMarker) {
		return r, fmt.Errorf("plugin: %s is not Mnemo's plugin; left in place", path)
	}
	if err := os.Remove(path); err != nil {
		return r, fmt.Errorf("plugin: %w", err)
	}
	RemoveEmptyDirs(filepath.Dir(path))
	r.Changed = true
	return r, nil
}

// writePlugin replaces path with data (atomicfile.WriteFile), making its
// folder first.
func writePlugin(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("plugin: %w", err)
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("plugin: write %s: %w", path, err)
	}
	return nil
}
