package hook_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
)

// The memory agent's own Claude Code runs are not the user's work: a hook
// that finds MNEMO_OBSERVER=1 answers at once and stores nothing, not even
// in the spool.
func TestHookSkipsTheObserver(t *testing.T) {
	home := t.TempDir()
	t.Setenv(hook.ObserverEnv, "1")
	payload := []byte(`{"session_id":"obs-1","cwd":"/src/x","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/src/x/a.go"},"tool_response":{}}`)
	out, took := runHook(t, home, "PostToolUse", payload, []string{"/nonexistent/mnemo"})
	if strings.TrimSpace(out) != "{}" {
		t.Fatalf("output %q, want {}", out)
	}
	if _, err := os.Stat(hook.SpoolPath(home)); err == nil {
		t.Fatal("the observer's event was spooled")
	}
	if _, err := os.Stat(filepath.Join(home, "run")); err == nil {
		t.Fatal("the hook tried to start a daemon for the observer")
	}
	t.Logf("answered in %s", took)
}
