package hosts_test

import (
	"slices"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
)

// TestHostsTable: every host hooks the stages it can, under names its
// configuration lists, and injects only where the host takes context.
func TestHostsTable(t *testing.T) {
	names := map[string]bool{}
	for _, h := range hosts.All {
		if names[h.Name] {
			t.Errorf("host %q twice", h.Name)
		}
		names[h.Name] = true
		for event, stage := range h.Events {
			if _, ok := hosts.StageOf(hosts.ClaudeCode, stage); !ok {
				t.Errorf("%s: %s maps onto %q, not a stage", h.Name, event, stage)
			}
			if got, ok := h.Stage(event); !ok || got.Event != stage {
				t.Errorf("%s: Stage(%q) = %q, %v", h.Name, event, got.Event, ok)
			}
		}
		for _, s := range h.Inject {
			if !h.Injects(s) {
				t.Errorf("%s: Injects(%q) is false", h.Name, s)
			}
		}
		if got, ok := hosts.Named(h.Name); !ok || got.Name != h.Name {
			t.Errorf("HostNamed(%q) = %v, %v", h.Name, got.Name, ok)
		}
	}
	for _, want := range []string{"claude-code", "codex", "gemini", "cursor", "vscode", "copilot", "opencode", "windsurf"} {
		if !names[want] {
			t.Errorf("no host %q", want)
		}
		if !slices.Contains(hosts.Names(), want) {
			t.Errorf("Names() = %q lacks %q", hosts.Names(), want)
		}
	}
	if _, ok := hosts.Named("cline"); ok {
		t.Error("HostNamed(cline) found a host")
	}
	inject := map[string][]string{
		"cursor": {hosts.EventSessionStart}, "vscode": {hosts.EventSessionStart},
		"copilot": nil, "windsurf": nil,
		"gemini": {hosts.EventSessionStart, hosts.EventUserPromptSubmit},
	}
	for host, want := range inject {
		h, _ := hosts.Named(host)
		for _, s := range []string{hosts.EventSessionStart, hosts.EventUserPromptSubmit} {
			if h.Injects(s) != slices.Contains(want, s) {
				t.Errorf("%s.Injects(%s) = %v", host, s, h.Injects(s))
			}
		}
	}
}
