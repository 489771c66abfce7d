package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mnemo-dev/mnemo"

// The dependency direction of STYLE.md: rpc and vector import no package of
// ours; memory never imports rpc or an adapter; the adapters never import
// each other.
func TestDependencyDirection(t *testing.T) {
	rules := []struct {
		pkg       string
		forbidden []string // prefixes, relative to the module
		allowed   []string // exceptions to them
	}{
		{"rpc", []string{""}, []string{"rpc"}},
		{"vector", []string{""}, []string{"vector"}},
		{"memory", []string{"rpc", "adapters"}, nil},
		{"memory/privacy", []string{""}, []string{"memory/privacy"}},
		{"memory/observer", []string{"rpc", "adapters"}, nil},
		{"adapters/vscode", []string{"adapters/claudecode"}, nil},
		{"adapters/claudecode", []string{"adapters/vscode", "memory"}, []string{"memory/privacy"}},
		{"adapters/claudecode/mcp", []string{"adapters/vscode"}, nil},
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
					continue
				}
				if matches(rel, r.allowed) {
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
