package install

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Claude Code's own memory ("auto memory": notes it writes under
// ~/.claude/projects/<project>/memory/ and loads at every session start)
// lives beside Mnemo's. Mnemo never turns it off: no installer here writes
// autoMemoryEnabled or CLAUDE_CODE_DISABLE_AUTO_MEMORY (a peer's installer
// did, silently, and a user's memory files stopped loading). `mnemo doctor`
// only says whether it is on, and what decides it.
//
// What decides it, as Claude Code reads it (docs/decisions.md cites the
// sources): the CLAUDE_CODE_DISABLE_AUTO_MEMORY variable first ("1",
// "true", "yes", "on" turn it off; "0", "false", "no", "off" on), whether
// from the environment Claude Code starts in or from the "env" of a
// settings file; then the autoMemoryEnabled setting of the settings
// files, the local project's over the project's over the user's; else it
// is on.

// AutoMemoryVariable and AutoMemorySetting are Claude Code's switches of
// its auto memory.
const (
	AutoMemoryVariable = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
	AutoMemorySetting  = "autoMemoryEnabled"
)

// AutoMemory says whether Claude Code's auto memory is on for sessions in
// a project, and what decides it.
type AutoMemory struct {
	On bool
	// By names what decides it, in words: "the default", or the variable
	// or setting and where it is set.
	By string
}

// ClaudeAutoMemory reads whether Claude Code's auto memory is on for a
// session started in projectDir ("" for none) by this user (home, as
// SettingsPath takes it) with the variables getenv reads. A settings file
// that cannot be read or parsed is an error naming it (the answer then
// may be wrong).
func ClaudeAutoMemory(projectDir, home string, getenv func(string) string) (AutoMemory, error) {
	if v, ok := autoMemoryVar(getenv(AutoMemoryVariable)); ok {
		return AutoMemory{On: v, By: fmt.Sprintf("%s=%s in the environment", AutoMemoryVariable, getenv(AutoMemoryVariable))}, nil
	}
	type file struct {
		path   string
		values map[string]json.RawMessage
		env    map[string]any
	}
	var files []file // the most particular first
	for _, scope := range []string{ScopeLocal, ScopeProject, ScopeUser} {
		if scope != ScopeUser && projectDir == "" {
			continue
		}
		path, err := SettingsPath(scope, projectDir, home)
		if err != nil {
			return AutoMemory{}, err
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return AutoMemory{}, err
		}
		f := file{path: path}
		if err := json.Unmarshal(data, &f.values); err != nil {
			return AutoMemory{}, fmt.Errorf("%w: %s: %v", ErrInvalidSettings, path, err)
		}
		if raw, ok := f.values["env"]; ok {
			json.Unmarshal(raw, &f.env) // an env that is not an object sets nothing
		}
		files = append(files, f)
	}
	for _, f := range files {
		if s, ok := f.env[AutoMemoryVariable].(string); ok {
			if v, ok := autoMemoryVar(s); ok {
				return AutoMemory{On: v, By: fmt.Sprintf("%s=%s in the env of %s", AutoMemoryVariable, s, f.path)}, nil
			}
		}
	}
	for _, f := range files {
		var on bool
		if raw, ok := f.values[AutoMemorySetting]; ok && json.Unmarshal(raw, &on) == nil {
			return AutoMemory{On: on, By: fmt.Sprintf("%s: %v in %s", AutoMemorySetting, on, f.path)}, nil
		}
	}
	return AutoMemory{On: true, By: "the default"}, nil
}

// autoMemoryVar reads CLAUDE_CODE_DISABLE_AUTO_MEMORY: whether auto
// memory is on, and whether the value says anything.
func autoMemoryVar(v string) (on, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return false, true
	case "0", "false", "no", "off":
		return true, true
	}
	return false, false
}
