//go:build e2e

package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/e2e/harness"
	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
	"github.com/mnemo-dev/mnemo/adapters/opencode"
)

// TestPluginPayloadsMatchTestdata runs session 1 with a recorder installed
// as mnemo-hook and checks that what the plugin hands the hook for each
// event and tool still has the fields of ../testdata/payloads/ (the files
// the hook's dialect is tested against), and that the recorder's context
// reached the model. With MNEMO_OPENCODE_UPDATE_PAYLOADS=1 it rewrites
// those files from this run instead (scrubbed: the project's path is
// $PROJECT).
func TestPluginPayloadsMatchTestdata(t *testing.T) {
	h := newHarness(t, true)
	bin := harness.Mkdir(t, h.Tmp, "bin")
	rec := harness.Mkdir(t, h.Tmp, "rec")
	// The recorder saves each payload as <n>-<event>.json and answers
	// SessionStart with a context.
	recorder := `#!/bin/sh
n=$(date +%s%N)
cat > "` + rec + `/$n-$3.json"
case $3 in
SessionStart) printf '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"<mnemo-context>recorded</mnemo-context>"}}' ;;
*) printf '{}' ;;
esac
`
	hook := filepath.Join(bin, install.HookBinary)
	if err := os.WriteFile(hook, []byte(recorder), 0o755); err != nil {
		t.Fatal(err)
	}
	in, _ := install.For(hosts.OpenCode)
	if _, err := in.Install(filepath.Join(h.config, "opencode", "plugins", opencode.PluginName), install.Options{HookPath: hook}); err != nil {
		t.Fatal(err)
	}
	run := h.runFixCalc(t)
	if reqs := h.srv.Requests("fix-calc"); !strings.Contains(reqs[0].System(), "<mnemo-context>recorded</mnemo-context>") {
		t.Errorf("the recorder's SessionStart context is not in the first request's system prompt:\n%s", reqs[0].System())
	}

	// Wait for SessionEnd, the last one (OpenCode's shutdown).
	var files []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		files, _ = filepath.Glob(filepath.Join(rec, "*.json"))
		sort.Strings(files)
		if len(files) > 0 && strings.HasSuffix(files[len(files)-1], "-SessionEnd.json") || time.Now().After(deadline) {
			break
		}
	}
	got := map[string]map[string]any{} // file name → payload
	var order []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var p map[string]any
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatalf("%s: %v\n%s", f, err, data)
		}
		if p["session_id"] != run.SessionID {
			t.Errorf("%s: session_id %v, want %s", f, p["session_id"], run.SessionID)
		}
		if p["cwd"] != h.Project {
			t.Errorf("%s: cwd %v, want %s", f, p["cwd"], h.Project)
		}
		name, _ := p["hook_event_name"].(string)
		if tool, ok := p["tool_name"].(string); ok {
			name += "-" + tool
		}
		order = append(order, name)
		if _, seen := got[name]; !seen {
			got[name] = p
		}
	}
	want := []string{"SessionStart", "UserPromptSubmit", "PostToolUse-read", "PostToolUse-edit", "PostToolUse-bash",
		"PostToolUse-edit", "PostToolUse-bash", "Stop", "SessionEnd"}
	if !slices.Equal(order, want) {
		t.Fatalf("the plugin ran the hook for %v, want %v", order, want)
	}

	dir := filepath.Join(h.root, "adapters", "opencode", "testdata", "payloads")
	for name, p := range got {
		path := filepath.Join(dir, name+".json")
		if os.Getenv("MNEMO_OPENCODE_UPDATE_PAYLOADS") == "1" {
			b, _ := json.MarshalIndent(p, "", "  ")
			body := strings.ReplaceAll(string(b), h.Project, "$PROJECT")
			if err := os.WriteFile(path, []byte(body+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var saved map[string]any
		if err := json.Unmarshal(data, &saved); err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if a, b := fields(saved), fields(p); !slices.Equal(a, b) {
			t.Errorf("%s: the plugin's payload has the fields\n  %v\nthe testdata has\n  %v\n(MNEMO_OPENCODE_UPDATE_PAYLOADS=1 rewrites it)", name, b, a)
		}
	}
}

// fields lists a payload's field paths down to tool_input's and
// tool_response's own fields (their metadata's too), sorted.
func fields(p map[string]any) []string {
	var out []string
	var walk func(prefix string, v any, depth int)
	walk = func(prefix string, v any, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth == 0 {
			return
		}
		for k, sub := range m {
			path := strings.TrimPrefix(fmt.Sprintf("%s.%s", prefix, k), ".")
			out = append(out, path)
			walk(path, sub, depth-1)
		}
	}
	walk("", p, 3)
	sort.Strings(out)
	return out
}
