//go:build e2e

package e2e_test

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOpenCodeOffline: the pinned CLI answers a prompt with the scripted
// model, and, with offlineEnv and its config folder seeded, looks up no
// name at all: nothing but 127.0.0.1 is reached.
func TestOpenCodeOffline(t *testing.T) {
	h := newHarness(t, true)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.cli, "--version")
	cmd.Env = h.env()
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != opencodeVersion {
		t.Fatalf("opencode --version: %q, %v; want %s", out, err, opencodeVersion)
	}

	h.srv.Script("hello", step{Text: "Hello from the script."})
	run := h.opencode("hello", "say hello")
	run.mustSucceed(t)
	if !slices.Contains(run.texts(), "Hello from the script.") {
		t.Errorf("the run's text parts are %q", run.texts())
	}
	reqs := h.srv.Requests("hello")
	if len(reqs) != 1 || reqs[0].Model != modelID {
		t.Fatalf("the scripted model got %d requests (want 1, for %q)", len(reqs), modelID)
	}
	var tools []string
	for _, tl := range reqs[0].Tools {
		tools = append(tools, tl.Function.Name)
	}
	for _, want := range []string{"bash", "edit", "read", "write"} {
		if !slices.Contains(tools, want) {
			t.Errorf("OpenCode offers the model no %s tool: %v", want, tools)
		}
	}
	if h.dns == nil {
		t.Skip("names looked up are not recorded here")
	}
	if names := h.dns.Names(); len(names) > 0 {
		t.Errorf("OpenCode looked up %v (nothing but 127.0.0.1 should be reached)", names)
	}
}

// TestOpenCodeDefaultsReachOut is the DNS recorder's positive control, and
// the record of what OpenCode reaches for on its own: without offlineEnv
// and with an unseeded config folder, it looks up models.opencode.ai (the
// models.dev catalogue) and registry.npmjs.org (the install of
// @opencode-ai/plugin into ~/.config/opencode), fails to reach them in the
// namespace, and still answers.
func TestOpenCodeDefaultsReachOut(t *testing.T) {
	h := newHarness(t, false)
	if h.dns == nil {
		t.Skip("names looked up are not recorded here")
	}
	h.offline = false
	h.srv.Script("hello", step{Text: "Hello from the script."})
	run := h.opencode("hello", "say hello")
	run.mustSucceed(t)
	names := h.dns.Names()
	t.Logf("OpenCode %s with its defaults looked up: %v", opencodeVersion, names)
	for _, want := range []string{"models.opencode.ai", "registry.npmjs.org"} {
		if !slices.Contains(names, want) {
			t.Errorf("OpenCode did not look up %s (looked up %v)", want, names)
		}
	}
}
