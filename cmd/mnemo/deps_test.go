package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mnemo-dev/mnemo"

// The dependency direction of STYLE.md: rpc and vector import no package of
// ours; memory is the domain and imports only the standard library; the
// Badger engine (memory/store) and the agents sit on top of it; nothing in
// memory imports rpc or an adapter, but for memory/client, the typed client
// of the daemon, which imports memory and rpc and nothing else of ours; the
// adapters never import each other, and the hook's adapter links the domain
// but never the engine.
func TestDependencyDirection(t *testing.T) {
	rules := []struct {
		pkg       string
		forbidden []string // prefixes, relative to the module ("" is all of ours)
		allowed   []string // exceptions to them: a package, or a prefix ending in "/..."
		stdlib    bool     // imports nothing from outside the module but the standard library
	}{
		{pkg: "rpc", forbidden: []string{""}, allowed: []string{"rpc/..."}},
		{pkg: "vector", forbidden: []string{""}, allowed: []string{"vector/..."}},
		{pkg: "memory", forbidden: []string{""}, allowed: []string{"memory"}, stdlib: true},
		{pkg: "memory/privacy", forbidden: []string{""}, allowed: []string{"memory/privacy"}, stdlib: true},
		{pkg: "memory/local", forbidden: []string{""}, allowed: []string{"memory", "memory/local"}, stdlib: true},
		{pkg: "memory/transcript", forbidden: []string{""}, allowed: []string{"memory", "memory/transcript"}, stdlib: true},
		{pkg: "memory/rules", forbidden: []string{""}, allowed: []string{"memory/rules"}, stdlib: true},
		{pkg: "memory/client", forbidden: []string{""}, allowed: []string{"memory", "memory/client", "rpc"}},
		{pkg: "memory/store", forbidden: []string{"rpc", "adapters"}},
		{pkg: "memory/team", forbidden: []string{"rpc", "adapters", "memory/store", "vector", "memory/observer"}},
		{pkg: "memory/observer", forbidden: []string{"rpc", "adapters", "memory/store", "vector"}},
		{pkg: "adapters/vscode", forbidden: []string{"adapters/claudecode"}},
		{pkg: "adapters/claudecode", forbidden: []string{"adapters/vscode", "memory", "vector"}, allowed: []string{"memory", "memory/privacy", "memory/transcript"}},
		{pkg: "adapters/claudemem", forbidden: []string{"adapters", "memory", "rpc", "vector"}, allowed: []string{"adapters/claudemem", "memory", "memory/privacy"}},
		{pkg: "adapters/claudecode/mcp", forbidden: []string{"adapters/vscode", "memory/store", "vector"}},
	}
	for _, r := range rules {
		t.Run(r.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", module+"/"+r.pkg).Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			for _, dep := range strings.Fields(string(out)) {
				rel, ours := strings.CutPrefix(dep, module+"/")
				if !ours {
					if r.stdlib && !standard(dep) {
						t.Errorf("%s imports %s, outside the standard library", r.pkg, dep)
					}
					continue
				}
				if allowed(rel, r.allowed) {
					continue
				}
				if matches(rel, r.forbidden) {
					t.Errorf("%s imports %s", r.pkg, rel)
				}
			}
		})
	}
}

func matches(rel string, prefixes []string) bool {
	for _, p := range prefixes {
		if p == "" || rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

func allowed(rel string, list []string) bool {
	for _, a := range list {
		if tree, ok := strings.CutSuffix(a, "/..."); ok && matches(rel, []string{tree}) || rel == a {
			return true
		}
	}
	return false
}

// standard reports whether an import path is of the standard library (its
// first element has no dot), vendored runtime internals included.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
