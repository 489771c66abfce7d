package install

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
)

// An Installer wires Mnemo into one host: its hooks file, its MCP server,
// its rules file. Installers lists one per host; `mnemo install <host>`
// and `mnemo uninstall <host>` drive them, whatever the host.
//
// Every installer edits the way Install does: the user's entries are kept,
// in their order; Mnemo's entry of an event (recognised by the base name of
// its command, mnemo-hook) is replaced where it stood; a second install
// changes nothing; every byte of the person's file but Mnemo's entries
// stays as it was, so that an uninstall gives the file back byte for byte
// (jsonedit.go; toml.go for Codex's config.toml); the file is backed up
// before it changes and written
// atomically; a file that cannot be read as the host's is refused, with
// the line and column, and left untouched.
type Installer struct {
	// Host is the host's name (hosts.All), Title its name for people.
	Host, Title string
	// Scopes lists the scopes HooksPath knows; the first is the default.
	Scopes []string
	// Events lists the host's own event names that Mnemo installs, in the
	// order of Stages.
	Events []string

	// HooksPath returns the hooks file of a scope, for a project in dir and
	// a user whose home is home.
	HooksPath func(scope, dir, home string) (string, error)
	// Install merges Mnemo's hooks into the file at path; Uninstall takes
	// them out, and nothing else.
	Install   func(path string, o Options) (Result, error)
	Uninstall func(path string, o Options) (Result, error)
	// Wired says which of Events run Mnemo's hook in the file at path.
	Wired func(path string) (Wiring, error)

	// MCPPath returns the file the host reads MCP servers from for a
	// scope, or "" and why when it has none there.
	MCPPath func(scope, dir, home string) (path, why string, err error)
	// InstallMCP registers `<mnemo> mcp` in that file; UninstallMCP
	// removes it.
	InstallMCP   func(path string, o MCPOptions) (Result, error)
	UninstallMCP func(path string) (Result, error)

	// Rules is the project's rules file that the host reads at every
	// session, relative to the project's root ("" for none), and RulesHead
	// what a new one starts with (a rule's front matter).
	Rules, RulesHead string
	// NeedsRules says that the host takes no context from its hooks at a
	// session's start: the rules file is how its sessions see the memory.
	NeedsRules bool
	// Note says something about a scope people should know (where the
	// hooks really go), or "".
	Note func(scope string) string
	// Dirs and Commands are how Found recognises the host on a machine:
	// its folders under the home, its programs on PATH.
	Dirs, Commands []string
}

// MCPOptions say what InstallMCP registers.
type MCPOptions struct {
	// Mnemo is the absolute path of the mnemo binary, run as `mnemo mcp`,
	// or MnemoOnPath in a file people share.
	Mnemo string
	// Env is set in the server's environment: some hosts (Codex CLI) start
	// MCP servers with a few variables only, so a MNEMO_HOME of the user's
	// must be written down for the server to find the same memory.
	Env map[string]string
	// Now stamps the backup's name; nil means time.Now.
	Now func() time.Time
}

// mcpEntry is Mnemo's MCP server in any host's JSON format: each host
// fills the fields it reads.
type mcpEntry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
	Tools   []string          `json:"tools,omitempty"`
}

// A Wiring is what an installer finds of Mnemo in a hooks file.
type Wiring struct {
	// Path is the file examined; Exists whether it is there.
	Path   string
	Exists bool
	// Wired lists the installer's events that run Mnemo's hook, Missing
	// those that do not.
	Wired, Missing []string
	// Hooks lists the hook binaries those commands run, and Gone those of
	// them that no longer exist (a moved or deleted binary).
	Hooks, Gone []string
}

// State is the wiring in a word: "yes", "no", "partly (n of m events)", or
// "broken (…)" when a hook binary it runs is gone.
func (w Wiring) State() string {
	switch {
	case len(w.Gone) > 0:
		return fmt.Sprintf("broken (%s is gone)", strings.Join(w.Gone, ", "))
	case len(w.Wired) == 0:
		return "no"
	case len(w.Missing) == 0:
		return "yes"
	}
	return fmt.Sprintf("partly (%d of %d events)", len(w.Wired), len(w.Wired)+len(w.Missing))
}

// Found says where the host shows on this machine, for a user whose home
// is home: its first folder that exists ("~/.codex"), else its first
// program on PATH ("codex on PATH"), else "".
func (in Installer) Found(home string) string {
	for _, d := range in.Dirs {
		if fi, err := os.Stat(filepath.Join(home, d)); err == nil && fi.IsDir() {
			return filepath.Join("~", d)
		}
	}
	for _, c := range in.Commands {
		if _, err := exec.LookPath(c); err == nil {
			return c + " on PATH"
		}
	}
	return ""
}

// For returns the installer of a host, and false for a host
// without one.
func For(host string) (Installer, bool) {
	i := slices.IndexFunc(Installers, func(in Installer) bool { return in.Host == host })
	if i < 0 {
		return Installer{}, false
	}
	return Installers[i], true
}

// HookCommand is the shell command a host runs for one of its events:
// mnemo-hook's absolute path, quoted, then --host and the event.
func HookCommand(hook, host, event string) string {
	return shellQuote(hook) + " --host " + host + " " + event
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hostHandler is one hook handler in any host's format: each host fills
// the fields it reads, in the order it documents them.
type hostHandler struct {
	Name       string `json:"name,omitempty"`
	Type       string `json:"type,omitempty"`
	Command    string `json:"command,omitempty"`
	Bash       string `json:"bash,omitempty"`
	Timeout    int    `json:"timeout,omitempty"`
	TimeoutSec int    `json:"timeoutSec,omitempty"`
	ShowOutput *bool  `json:"show_output,omitempty"`
}

type hostGroup struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hostHandler `json:"hooks"`
}

// hookFormat is how a host writes its hooks file.
type hookFormat struct {
	shape
	// version: the file has "version": 1 at the top (Cursor, Copilot CLI).
	version bool
	// owned: the file is Mnemo's alone (a file of its own in a folder of
	// hook files): Uninstall deletes it once nothing of Mnemo's is left.
	owned bool
	// handler is Mnemo's handler of one event, running command, whose
	// stage is s.
	handler func(command string, s hosts.Stage) hostHandler
	// matcher is the matcher of a grouped event's group.
	matcher func(s hosts.Stage) string
}

// entries returns Mnemo's entry of each of the host's events.
func (f hookFormat) entries(host string, events []string, hook string) ([]eventEntry, error) {
	h, _ := hosts.Named(host)
	out := make([]eventEntry, 0, len(events))
	for _, ev := range events {
		s, ok := h.Stage(ev)
		if !ok {
			return nil, fmt.Errorf("install: %s has no event %s", host, ev)
		}
		var v any = f.handler(HookCommand(hook, host, ev), s)
		if f.grouped {
			g := hostGroup{Hooks: []hostHandler{v.(hostHandler)}}
			if f.matcher != nil {
				g.Matcher = f.matcher(s)
			}
			v = g
		}
		raw, err := hosts.MarshalJSON(v)
		if err != nil {
			return nil, err
		}
		out = append(out, eventEntry{event: ev, raw: raw})
	}
	return out, nil
}

// installHooks merges Mnemo's hooks of events, in format f, into the hooks
// file at path.
func installHooks(host string, events []string, f hookFormat, path string, o Options) (Result, error) {
	if !filepath.IsAbs(o.HookPath) || filepath.Base(o.HookPath) != HookBinary {
		return Result{}, fmt.Errorf("install: the hook must be an absolute path to %s, not %q", HookBinary, o.HookPath)
	}
	entries, err := f.entries(host, events, o.HookPath)
	if err != nil {
		return Result{}, err
	}
	return editFile(path, o.Now, nil, func(root *object, r *Result) (bool, error) {
		if f.version {
			if _, ok := root.get("version"); !ok {
				*root = append(object{{key: "version", value: json.RawMessage("1")}}, *root...)
			}
		}
		return editKey(root, "hooks", r, func(hooks *object, r *Result) error {
			return mergeEvents(hooks, entries, f.shape, r)
		})
	})
}

// uninstallHooks takes Mnemo's hooks out of the hooks file at path.
func uninstallHooks(f hookFormat, path string, now func() time.Time) (Result, error) {
	var removed bool
	// Nothing left but the version Install wrote: a file of Mnemo's own
	// goes; one of the host's (Cursor's hooks.json) when Mnemo's hooks
	// were all it had.
	drop := func(root object) bool {
		for _, m := range root {
			if m.key != "version" {
				return false
			}
		}
		return f.owned || f.version && removed
	}
	return editFile(path, now, drop, func(root *object, r *Result) (bool, error) {
		return editKey(root, "hooks", r, func(hooks *object, r *Result) error {
			err := removeEvents(hooks, f.shape, r)
			removed = len(r.Removed) > 0
			return err
		})
	})
}

// wired reads the hooks file at path and says which of events run
// mnemo-hook.
func wired(events []string, sh shape, path string) (Wiring, error) {
	w := Wiring{Path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		w.Missing = slices.Clone(events)
		return w, nil
	}
	if err != nil {
		return w, err
	}
	w.Exists = true
	root, err := parseSettings(path, data)
	if err != nil {
		return w, err
	}
	var hooks map[string][]json.RawMessage
	if raw, ok := root.get("hooks"); ok {
		_ = json.Unmarshal(raw, &hooks)
	}
	for _, ev := range events {
		var cmds []string
		for _, e := range hooks[ev] {
			cmds = append(cmds, mnemoCommands(e, sh)...)
		}
		if len(cmds) == 0 {
			w.Missing = append(w.Missing, ev)
			continue
		}
		w.Wired = append(w.Wired, ev)
		for _, c := range cmds {
			prog := commandProgram(c)
			if slices.Contains(w.Hooks, prog) {
				continue
			}
			w.Hooks = append(w.Hooks, prog)
			if _, err := os.Stat(prog); err != nil && filepath.IsAbs(prog) {
				w.Gone = append(w.Gone, prog)
			}
		}
	}
	return w, nil
}

// mnemoCommands returns the commands of an event's entry that run
// mnemo-hook.
func mnemoCommands(entry json.RawMessage, sh shape) []string {
	handlers := []json.RawMessage{entry}
	if sh.grouped {
		var g struct {
			Hooks []json.RawMessage `json:"hooks"`
		}
		if json.Unmarshal(entry, &g) != nil {
			return nil
		}
		handlers = g.Hooks
	}
	var out []string
	for _, h := range handlers {
		var fields map[string]json.RawMessage
		var c string
		if json.Unmarshal(h, &fields) == nil && json.Unmarshal(fields[sh.key], &c) == nil && IsMnemoCommand(c) {
			out = append(out, c)
		}
	}
	return out
}

// commandProgram is the program of a hook command: the whole command in
// exec form, else its first word, unquoted.
func commandProgram(command string) string {
	c := strings.TrimSpace(command)
	if c == "" {
		return ""
	}
	if c[0] == '\'' {
		// shellQuote's form: '…', with '\'' for a quote.
		var b strings.Builder
		for i := 1; i < len(c); i++ {
			if c[i] != '\'' {
				b.WriteByte(c[i])
				continue
			}
			if strings.HasPrefix(c[i:], `'\''`) {
				b.WriteByte('\'')
				i += 3
				continue
			}
			break
		}
		return b.String()
	}
	if c[0] == '"' {
		if end := strings.IndexByte(c[1:], '"'); end >= 0 {
			return c[1 : 1+end]
		}
	}
	if i := strings.IndexAny(c, " \t"); i >= 0 {
		return c[:i]
	}
	return c
}

// hookInstaller fills an installer's hook functions for format f.
func hookInstaller(in Installer, f hookFormat) Installer {
	in.Install = func(path string, o Options) (Result, error) {
		r, err := installHooks(in.Host, in.Events, f, path, o)
		r.Label = "hooks"
		return r, err
	}
	in.Uninstall = func(path string, o Options) (Result, error) {
		r, err := uninstallHooks(f, path, o.Now)
		r.Label = "hooks"
		return r, err
	}
	in.Wired = func(path string) (Wiring, error) { return wired(in.Events, f.shape, path) }
	return in
}

// jsonMCP fills an installer's MCP functions for a JSON file whose key
// (mcpServers, or VS Code's servers) lists servers, Mnemo's being entry
// with its command, arguments and environment.
func jsonMCP(in Installer, key string, entry mcpEntry) Installer {
	in.InstallMCP = func(path string, o MCPOptions) (Result, error) {
		if err := checkMnemo(o.Mnemo); err != nil {
			return Result{}, err
		}
		e := entry
		e.Command, e.Args, e.Env = o.Mnemo, []string{"mcp"}, o.Env
		r, err := installMCPEntry(path, key, e, o.Now)
		r.Label = "MCP server"
		return r, err
	}
	in.UninstallMCP = func(path string) (Result, error) {
		r, err := uninstallMCPEntry(path, key)
		r.Label = "MCP server"
		return r, err
	}
	return in
}

// scoped returns a path function: user joins home's (or an environment
// variable's) folder with file, project joins dir with project's.
func scoped(envVar, userDir, userFile, projectFile string) func(scope, dir, home string) (string, error) {
	return func(scope, dir, home string) (string, error) {
		switch scope {
		case ScopeUser:
			if userFile == "" {
				return "", nil
			}
			base := filepath.Join(home, userDir)
			if v := os.Getenv(envVar); envVar != "" && v != "" {
				base = v
			} else if home == "" {
				return "", errors.New("no home directory")
			}
			return filepath.Abs(filepath.Join(base, userFile))
		case ScopeProject:
			if projectFile == "" {
				return "", nil
			}
			if dir == "" {
				return "", fmt.Errorf("scope %s needs a project directory", scope)
			}
			return filepath.Abs(filepath.Join(dir, projectFile))
		}
		return "", fmt.Errorf("%w %q: use %s or %s", ErrUnknownScope, scope, ScopeUser, ScopeProject)
	}
}

// mcpAt turns a path function into an MCPPath: a scope without a file
// gets why.
func mcpAt(path func(scope, dir, home string) (string, error), why string) func(scope, dir, home string) (string, string, error) {
	return func(scope, dir, home string) (string, string, error) {
		p, err := path(scope, dir, home)
		if err == nil && p == "" {
			return "", why, nil
		}
		return p, "", err
	}
}

// Environment variables that move a host's user folder.
const (
	envCodexHome   = "CODEX_HOME"      // Codex CLI: the folder itself (~/.codex)
	envGeminiHome  = "GEMINI_CLI_HOME" // Gemini CLI: the home that holds .gemini
	envCopilotHome = "COPILOT_HOME"    // Copilot CLI: the folder itself (~/.copilot)
)

// Installers lists the installer of every host, Claude Code first.
var Installers = []Installer{
	claudeInstaller(),
	codexInstaller(),
	geminiInstaller(),
	cursorInstaller(),
	vscodeInstaller(),
	copilotInstaller(),
	windsurfInstaller(),
	openCodeInstaller(),
}

func claudeInstaller() Installer {
	return Installer{
		Host: hosts.ClaudeCode, Title: "Claude Code",
		Scopes: []string{ScopeUser, ScopeProject, ScopeLocal},
		Events: stageEvents(),
		HooksPath: func(scope, dir, home string) (string, error) {
			return SettingsPath(scope, dir, home)
		},
		Install: func(path string, o Options) (Result, error) {
			r, err := Install(path, o)
			r.Label = "hooks"
			return r, err
		},
		Uninstall: func(path string, _ Options) (Result, error) {
			r, err := Uninstall(path)
			r.Label = "hooks"
			return r, err
		},
		Wired: func(path string) (Wiring, error) { return wired(stageEvents(), claudeShape, path) },
		MCPPath: func(scope, dir, home string) (string, string, error) {
			p, err := MCPConfigPath(scope, dir, home)
			return p, "", err
		},
		InstallMCP: func(path string, o MCPOptions) (Result, error) {
			// Claude Code passes its environment on to MCP servers.
			r, err := InstallMCP(path, o.Mnemo, o.Now)
			r.Label = "MCP server"
			return r, err
		},
		UninstallMCP: func(path string) (Result, error) {
			r, err := UninstallMCP(path)
			r.Label = "MCP server"
			return r, err
		},
		Rules: "CLAUDE.md",
		Dirs:  []string{".claude"}, Commands: []string{"claude"},
	}
}

func stageEvents() []string {
	out := make([]string, len(hosts.Stages))
	for i, s := range hosts.Stages {
		out[i] = s.Event
	}
	return out
}

// Codex CLI 0.169.0, as its app server's hooks/list reads a hooks.json:
// a handler's "timeout" is in seconds (600 when absent; "timeoutSec" and
// "timeout_sec" are ignored, and so is an "args" array: a command is a
// shell command); SessionEnd's is cut to 3 s. A hook runs only once
// trusted: codexTrust records Mnemo's in config.toml.
func codexInstaller() Installer {
	in := Installer{
		Host: hosts.Codex, Title: "Codex CLI",
		Scopes:    []string{ScopeUser, ScopeProject},
		Events:    []string{hosts.EventSessionStart, hosts.EventUserPromptSubmit, hosts.EventPostToolUse, hosts.EventStop, hosts.EventSessionEnd},
		HooksPath: scoped(envCodexHome, ".codex", "hooks.json", filepath.Join(".codex", "hooks.json")),
		Rules:     "AGENTS.md",
		Dirs:      []string{".codex"}, Commands: []string{"codex"},
	}
	f := hookFormat{
		shape: claudeShape,
		handler: func(command string, s hosts.Stage) hostHandler {
			t := s.Timeout
			if s.Event == hosts.EventSessionEnd {
				t = min(t, codexMaxSessionEnd)
			}
			return hostHandler{Type: "command", Command: command, Timeout: t}
		},
		matcher: func(s hosts.Stage) string {
			if s.Event == hosts.EventPostToolUse {
				return "*"
			}
			return ""
		},
	}
	in = hookInstaller(in, f)
	in.Note = func(scope string) string {
		if scope == ScopeProject {
			return "Codex reads a project's .codex folder only once the project is trusted; it asks when it first starts there"
		}
		return ""
	}
	install, uninstall := in.Install, in.Uninstall
	in.Install = func(path string, o Options) (Result, error) {
		return withCodexTrust(path, o, func() (Result, error) { return install(path, o) })
	}
	in.Uninstall = func(path string, o Options) (Result, error) {
		return withCodexTrust(path, o, func() (Result, error) { return uninstall(path, o) })
	}
	mcpPath := scoped(envCodexHome, ".codex", "config.toml", filepath.Join(".codex", "config.toml"))
	in.MCPPath = mcpAt(mcpPath, "")
	in.InstallMCP = func(path string, o MCPOptions) (Result, error) {
		if err := checkMnemo(o.Mnemo); err != nil {
			return Result{}, err
		}
		r, err := installCodexMCP(path, o)
		r.Label = "MCP server"
		return r, err
	}
	in.UninstallMCP = func(path string) (Result, error) {
		r, err := uninstallCodexMCP(path)
		r.Label = "MCP server"
		return r, err
	}
	return in
}

// codexMaxSessionEnd is Codex CLI's cap on a SessionEnd hook's timeout, in
// seconds (it warns and cuts a longer one).
const codexMaxSessionEnd = 3

// Gemini CLI 0.61.0's settings schema (HookDefinitionArray): groups of
// {matcher, hooks: [{name, type, command, description, timeout}]}, the
// timeout in milliseconds; hooksConfig.enabled defaults to true. Its MCP
// servers are mcpServers of the same file.
func geminiInstaller() Installer {
	in := Installer{
		Host: hosts.Gemini, Title: "Gemini CLI",
		Scopes:    []string{ScopeUser, ScopeProject},
		Events:    []string{"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"},
		HooksPath: scoped(envGeminiHome, "", filepath.Join(".gemini", "settings.json"), filepath.Join(".gemini", "settings.json")),
		Rules:     "GEMINI.md",
		Dirs:      []string{".gemini"}, Commands: []string{"gemini"},
	}
	in = hookInstaller(in, hookFormat{
		shape: claudeShape,
		handler: func(command string, s hosts.Stage) hostHandler {
			return hostHandler{Name: "mnemo", Type: "command", Command: command, Timeout: s.Timeout * 1000}
		},
		matcher: func(hosts.Stage) string { return "*" },
	})
	in.Note = func(string) string {
		return "Gemini CLI runs hooks and MCP servers in trusted folders only; it asks when it first starts in one"
	}
	in.MCPPath = mcpAt(in.HooksPath, "")
	return jsonMCP(in, "mcpServers", mcpEntry{})
}

// Cursor's hooks.json: {"version": 1, "hooks": {"<event>": [{"command",
// "timeout"}]}}, the timeout in seconds. Mnemo installs postToolUse and
// postToolUseFailure, which cover every tool in current builds, and the
// per-kind afterFileEdit and afterShellExecution of the builds before
// them (1.7), whose edits and commands would be lost otherwise; a build
// that sends both for one edit or command has it stored once (the hook's
// de-duplication key names what it changed or ran).
func cursorInstaller() Installer {
	in := Installer{
		Host: hosts.Cursor, Title: "Cursor",
		Scopes:    []string{ScopeUser, ScopeProject},
		Events:    []string{"sessionStart", "beforeSubmitPrompt", "postToolUse", "postToolUseFailure", "afterFileEdit", "afterShellExecution", "stop", "sessionEnd"},
		HooksPath: scoped("", ".cursor", "hooks.json", filepath.Join(".cursor", "hooks.json")),
		Rules:     filepath.Join(".cursor", "rules", "mnemo.mdc"),
		RulesHead: "---\ndescription: Mnemo's memory of this project\nalwaysApply: true\n---\n",
		Dirs:      []string{".cursor"}, Commands: []string{"cursor", "cursor-agent"},
	}
	in = hookInstaller(in, hookFormat{
		shape:   shape{key: "command"},
		version: true,
		handler: func(command string, s hosts.Stage) hostHandler {
			return hostHandler{Command: command, Timeout: s.Timeout}
		},
	})
	in.MCPPath = mcpAt(scoped("", ".cursor", "mcp.json", filepath.Join(".cursor", "mcp.json")), "")
	return jsonMCP(in, "mcpServers", mcpEntry{})
}

// VS Code's agent hooks: a project's .github/hooks/*.json, PascalCase
// events of {type, command, timeout} handlers, the timeout in seconds.
// Its user scope is Claude Code's user settings, which VS Code reads:
// there the installer is Claude Code's.
func vscodeInstaller() Installer {
	in := Installer{
		Host: hosts.VSCode, Title: "VS Code",
		Scopes:    []string{ScopeUser, ScopeProject},
		Events:    []string{hosts.EventSessionStart, hosts.EventUserPromptSubmit, hosts.EventPostToolUse, hosts.EventStop},
		HooksPath: scoped("", "", "", filepath.Join(".github", "hooks", "mnemo.json")),
		Rules:     filepath.Join(".github", "copilot-instructions.md"),
		Dirs:      []string{".vscode", filepath.Join(".config", "Code")}, Commands: []string{"code"},
	}
	f := hookFormat{
		shape: shape{key: "command"},
		owned: true,
		handler: func(command string, s hosts.Stage) hostHandler {
			return hostHandler{Type: "command", Command: command, Timeout: s.Timeout}
		},
	}
	claude := claudeInstaller()
	project := hookInstaller(in, f)
	in.HooksPath = func(scope, dir, home string) (string, error) {
		if scope == ScopeUser {
			return SettingsPath(ScopeUser, dir, home)
		}
		return project.HooksPath(scope, dir, home)
	}
	// Claude Code's settings hold Claude's hooks; a project file of VS
	// Code's own, the host's.
	isClaude := func(path string) bool { return filepath.Base(path) == "settings.json" }
	in.Install = func(path string, o Options) (Result, error) {
		if isClaude(path) {
			return claude.Install(path, o)
		}
		return project.Install(path, o)
	}
	in.Uninstall = func(path string, o Options) (Result, error) {
		if isClaude(path) {
			return claude.Uninstall(path, o)
		}
		return project.Uninstall(path, o)
	}
	in.Wired = func(path string) (Wiring, error) {
		if isClaude(path) {
			return claude.Wired(path)
		}
		return project.Wired(path)
	}
	in.Note = func(scope string) string {
		if scope == ScopeUser {
			return "VS Code's agent hooks read Claude Code's user settings: these are Claude Code's hooks, shared by both"
		}
		return ""
	}
	in.MCPPath = mcpAt(scoped("", "", "", filepath.Join(".vscode", "mcp.json")),
		"VS Code keeps a user's MCP servers in its profile; --scope project writes .vscode/mcp.json")
	return jsonMCP(in, "servers", mcpEntry{Type: "stdio"})
}

// Copilot CLI: hook files of its own ({"version": 1, "hooks": {"<event>":
// [{type, bash, timeoutSec}]}}, camelCase events) in ~/.copilot/hooks/ or a
// project's .github/hooks/; MCP servers in ~/.copilot/mcp-config.json or a
// project's .github/mcp.json. Its sessionStart and userPromptSubmitted
// answers are not read: the rules file carries the context.
func copilotInstaller() Installer {
	in := Installer{
		Host: hosts.Copilot, Title: "GitHub Copilot CLI",
		Scopes:     []string{ScopeUser, ScopeProject},
		Events:     []string{"sessionStart", "userPromptSubmitted", "postToolUse", "postToolUseFailure", "agentStop", "sessionEnd"},
		HooksPath:  scoped(envCopilotHome, ".copilot", filepath.Join("hooks", "mnemo.json"), filepath.Join(".github", "hooks", "mnemo-copilot.json")),
		Rules:      filepath.Join(".github", "copilot-instructions.md"),
		NeedsRules: true,
		Dirs:       []string{".copilot"}, Commands: []string{"copilot"},
	}
	in = hookInstaller(in, hookFormat{
		shape:   shape{key: "bash"},
		version: true,
		owned:   true,
		handler: func(command string, s hosts.Stage) hostHandler {
			return hostHandler{Type: "command", Bash: command, TimeoutSec: s.Timeout}
		},
	})
	in.MCPPath = mcpAt(scoped(envCopilotHome, ".copilot", "mcp-config.json", filepath.Join(".github", "mcp.json")), "")
	return jsonMCP(in, "mcpServers", mcpEntry{Type: "local", Tools: []string{"*"}})
}

// Windsurf's Cascade hooks: {"hooks": {"<action>": [{command,
// show_output}]}}, no timeout; no context injection at all. Its MCP
// servers are the user's only.
func windsurfInstaller() Installer {
	in := Installer{
		Host: hosts.Windsurf, Title: "Windsurf",
		Scopes:     []string{ScopeUser, ScopeProject},
		Events:     []string{"pre_user_prompt", "post_read_code", "post_write_code", "post_run_command", "post_mcp_tool_use", "post_cascade_response"},
		HooksPath:  scoped("", filepath.Join(".codeium", "windsurf"), "hooks.json", filepath.Join(".windsurf", "hooks.json")),
		Rules:      filepath.Join(".windsurf", "rules", "mnemo.md"),
		RulesHead:  "---\ntrigger: always_on\n---\n",
		NeedsRules: true,
		Dirs:       []string{filepath.Join(".codeium", "windsurf")}, Commands: []string{"windsurf"},
	}
	no := false
	in = hookInstaller(in, hookFormat{
		shape:   shape{key: "command"},
		handler: func(command string, s hosts.Stage) hostHandler { return hostHandler{Command: command, ShowOutput: &no} },
	})
	in.MCPPath = mcpAt(scoped("", filepath.Join(".codeium", "windsurf"), "mcp_config.json", ""),
		"Windsurf reads MCP servers from the user's mcp_config.json only; --scope user writes it")
	return jsonMCP(in, "mcpServers", mcpEntry{})
}
