package opencode

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/mnemo-dev/mnemo/memory/atomicfile"
)

// pluginJS is plugin/mnemo.js as it is in the repository: its
// INSTALLED_HOOK_BIN is empty.
//
//go:embed plugin/mnemo.js
var pluginJS []byte

// HookBinary is the base name of the hook executable the plugin runs
// (mnemo-hook.exe on Windows).
const HookBinary = "mnemo-hook" + exeSuffix

// PluginName is the plugin file's name in OpenCode's plugins folder.
const PluginName = "mnemo.js"

// hookBinLine is the line of mnemo.js that PluginSource rewrites.
var hookBinLine = []byte(`const INSTALLED_HOOK_BIN = "";`)

// pluginMarker is in the plugin's first line: Uninstall removes only a
// file that has it.
var pluginMarker = []byte("// Mnemo's plugin for OpenCode")

// The scopes of PluginPath.
const (
	ScopeUser    = "user"    // the user's OpenCode config folder: every project
	ScopeProject = "project" // <project>/.opencode: this project, shared with it
)

// ErrUnknownScope is a scope PluginPath does not know.
var ErrUnknownScope = errors.New("unknown plugin scope")

// PluginPath returns where the plugin goes for a scope: for ScopeUser
// $XDG_CONFIG_HOME/opencode/plugins/mnemo.js, or
// <home>/.config/opencode/plugins/mnemo.js when XDG_CONFIG_HOME is not
// set (OpenCode's global config folder); for ScopeProject
// <projectDir>/.opencode/plugins/mnemo.js. OpenCode loads every *.js and
// *.ts of plugin/ and plugins/ in those folders.
func PluginPath(scope, projectDir, home string) (string, error) {
	switch scope {
	case ScopeUser:
		config := os.Getenv("XDG_CONFIG_HOME")
		if config == "" {
			if home == "" {
				return "", errors.New("plugin path: no home directory")
			}
			config = filepath.Join(home, ".config")
		}
		return filepath.Abs(filepath.Join(config, "opencode", "plugins", PluginName))
	case ScopeProject:
		if projectDir == "" {
			return "", fmt.Errorf("plugin path: scope %s needs a project directory", scope)
		}
		return filepath.Abs(filepath.Join(projectDir, ".opencode", "plugins", PluginName))
	}
	return "", fmt.Errorf("%w %q: use %s or %s", ErrUnknownScope, scope, ScopeUser, ScopeProject)
}

// PluginSource returns the plugin with hookPath, the absolute path of
// mnemo-hook, written into its INSTALLED_HOOK_BIN constant. The plugin
// still prefers $MNEMO_HOOK_BIN when OpenCode's environment sets it.
func PluginSource(hookPath string) ([]byte, error) {
	if !filepath.IsAbs(hookPath) || filepath.Base(hookPath) != HookBinary {
		return nil, fmt.Errorf("plugin: the hook must be an absolute path to %s, not %q", HookBinary, hookPath)
	}
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

// InstalledHook reads a plugin file: whether it is Mnemo's plugin, and the
// mnemo-hook path written into it ("" for the repository's copy, which
// finds mnemo-hook on PATH).
func InstalledHook(plugin []byte) (hook string, ok bool) {
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

// Result says what Install or Uninstall did.
type Result struct {
	Path    string // the plugin file
	Changed bool   // whether it was written or removed
}

// Install writes the plugin for the hook at hookPath (PluginSource) to
// path, creating its folder. A file already there with the same content
// is left as it is (Changed false); Mnemo's plugin of another version or
// hook path is replaced; a file of the same name that is not Mnemo's is
// refused and kept.
func Install(path, hookPath string) (Result, error) {
	src, err := PluginSource(hookPath)
	if err != nil {
		return Result{}, err
	}
	r := Result{Path: path}
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, src):
		return r, nil
	case err == nil && !bytes.HasPrefix(old, pluginMarker):
		return r, fmt.Errorf("plugin: %s is not Mnemo's plugin; move it away first", path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return r, fmt.Errorf("plugin: %w", err)
	}
	if err := writeFile(path, src); err != nil {
		return r, err
	}
	r.Changed = true
	return r, nil
}

// Uninstall removes the plugin at path when it is Mnemo's. No file there
// is not an error (Changed false).
func Uninstall(path string) (Result, error) {
	r := Result{Path: path}
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
	r.Changed = true
	return r, nil
}

// writeFile replaces path with data (atomicfile.WriteFile), making its
// folder first.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("plugin: %w", err)
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("plugin: write %s: %w", path, err)
	}
	return nil
}
