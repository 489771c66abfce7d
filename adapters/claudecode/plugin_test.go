package claudecode_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
)

// pluginHook is the hook command of the plugin: the binary shipped in the
// plugin's bin/.
const pluginHook = "${CLAUDE_PLUGIN_ROOT}/bin/mnemo-hook"

// TestPluginFiles checks that the plugin's manifest and hooks/hooks.json
// parse, and that hooks.json names every stage exactly as Stages (and so
// Install) does: exec form, the event as the only argument, the stage's
// matcher and timeout, and nothing else: no argument points the hook at a
// data directory, so its data stays in MNEMO_HOME and never under
// ${CLAUDE_PLUGIN_ROOT}, which plugin updates replace.
func TestPluginFiles(t *testing.T) {
	var manifest struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Version     string   `json:"version"`
		Keywords    []string `json:"keywords"`
	}
	readJSON(t, filepath.Join("plugin", ".claude-plugin", "plugin.json"), &manifest)
	if manifest.Name != "mnemo" || manifest.Description == "" || manifest.Version == "" {
		t.Errorf("plugin.json = %+v", manifest)
	}

	var hooks struct {
		Description string                         `json:"description"`
		Hooks       map[string][]install.HookGroup `json:"hooks"`
	}
	readJSON(t, filepath.Join("plugin", "hooks", "hooks.json"), &hooks)
	want := install.HookGroups(pluginHook)
	var events []string
	for ev := range hooks.Hooks {
		events = append(events, ev)
	}
	var stages []string
	for _, s := range hosts.Stages {
		stages = append(stages, s.Event)
	}
	slices.Sort(events)
	slices.Sort(stages)
	if !slices.Equal(events, stages) {
		t.Errorf("hooks.json events %v, want %v", events, stages)
	}
	for _, s := range hosts.Stages {
		groups := hooks.Hooks[s.Event]
		if len(groups) != 1 || !jsonEqual(groups[0], want[s.Event]) {
			t.Errorf("hooks.json %s = %+v, want %+v", s.Event, groups, want[s.Event])
		}
	}
	// Claude Code kills a hook at its timeout; the hook's own deadline
	// must come first.
	for _, s := range hosts.Stages {
		if float64(s.Timeout) <= s.Budget.Seconds() {
			t.Errorf("%s: timeout %ds is not above the hook's %v budget", s.Event, s.Timeout, s.Budget)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// jsonEqual reports whether a and b encode to the same JSON value, keys
// in any order.
func jsonEqual(a, b any) bool {
	return bytes.Equal(normalJSON(a), normalJSON(b))
}

func normalJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil
	}
	out, _ := json.Marshal(generic)
	return out
}
