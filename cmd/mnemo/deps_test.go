package main_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/mnemo-dev/mnemo"

// The dependency direction of docs/architecture.md §11: rpc and vector import no package of
// ours (but vector the leaf memory/atomicfile, which imports only the
// standard library: docs/decisions.md, "One atomic file write"; and rpc
// its own rpc/socket, the client's side of the socket, which the hook
// links without the rest of rpc); memory is
// the domain and imports only the standard library; the
// Badger engine (memory/store) and the agents sit on top of it; nothing in
// memory imports rpc or an adapter, but for memory/client, the typed client
// of the daemon, which imports memory and rpc and nothing else of ours; the
// adapters never import each other, but for the hosts' packages, which
// build on what every host shares (adapters/hosts): the hook links the
// domain but never the engine, the installers nor the back-fill; the
// back-fill replays transcripts through the hook; the installers write
// OpenCode's plugin (adapters/opencode, the file alone). MCP reaches the
// memory through the typed client. The daemon's runtime (cmd/internal/daemon)
// may use all of them, and the commands (cmd/mnemo) reach the engine only
// through it or the client; the editor and the viewer reach the memory
// through an interface of their own, so they link the domain alone. Every
// package of the module has a rule: the last subtest fails for one that
// has none.
func TestDependencyDirection(t *testing.T) {
	t.Parallel()
	rules := []struct {
		pkg       string   // a package, or a pattern of them ("..." matches any text)
		forbidden []string // prefixes, relative to the module ("" is all of ours)
		allowed   []string // exceptions to them: a package, or a prefix ending in "/..."
		stdlib    bool     // imports nothing from outside the module but the standard library
		direct    bool     // only the package's own imports are held to the rule, not all it links
	}{
		{pkg: "rpc", forbidden: []string{""}, allowed: []string{"rpc/..."}},
		{pkg: "rpc/socket", forbidden: []string{""}, allowed: []string{"rpc/socket"}},
		{pkg: "vector", forbidden: []string{""}, allowed: []string{"vector/...", "memory/atomicfile"}},
		{pkg: "memory", forbidden: []string{""}, allowed: []string{"memory"}, stdlib: true},
		{pkg: "memory/privacy", forbidden: []string{""}, allowed: []string{"memory/privacy"}, stdlib: true},
		{pkg: "memory/local", forbidden: []string{""}, allowed: []string{"memory", "memory/local"}, stdlib: true},
		{pkg: "memory/knowledge", forbidden: []string{""}, allowed: []string{"memory", "memory/local", "memory/knowledge"}, stdlib: true},
		{pkg: "memory/transcript", forbidden: []string{""}, allowed: []string{"memory", "memory/transcript"}, stdlib: true},
		{pkg: "memory/rules", forbidden: []string{""}, allowed: []string{"memory/rules", "memory/atomicfile"}, stdlib: true},
		{pkg: "memory/atomicfile", forbidden: []string{""}, allowed: []string{"memory/atomicfile"}, stdlib: true},
		{pkg: "memory/internal/cputime", forbidden: []string{""}, allowed: []string{"memory/internal/cputime"}, stdlib: true},
		{pkg: "memory/client", forbidden: []string{""}, allowed: []string{"memory", "memory/client", "rpc"}},
		{pkg: "memory/store", forbidden: []string{"rpc", "adapters"}},
		{pkg: "memory/team", forbidden: []string{"rpc", "adapters", "memory/store", "vector", "memory/observer"}},
		{pkg: "memory/observer", forbidden: []string{"rpc", "adapters", "memory/store", "vector"}},
		{pkg: "adapters/vscode", forbidden: []string{"adapters", "memory", "vector", "cmd"}, allowed: []string{"adapters/vscode", "memory", "memory/privacy"}},
		{pkg: "adapters/viewer", forbidden: []string{"adapters", "memory", "vector", "cmd"}, allowed: []string{"adapters/viewer", "memory"}},
		{pkg: "adapters/hosts", forbidden: []string{""}, allowed: []string{"adapters/hosts", "memory", "memory/privacy", "rpc/..."}},
		{pkg: "adapters/hosts/hook", forbidden: []string{""}, allowed: []string{"adapters/hosts", "adapters/hosts/hook", "memory", "memory/privacy", "memory/atomicfile", "rpc/..."}},
		{pkg: "adapters/hosts/install", forbidden: []string{""}, allowed: []string{"adapters/hosts", "adapters/hosts/install", "adapters/opencode", "memory", "memory/privacy", "memory/atomicfile", "rpc/..."}},
		{pkg: "adapters/hosts/backfill", forbidden: []string{""}, allowed: []string{"adapters/hosts", "adapters/hosts/hook", "adapters/hosts/backfill", "memory", "memory/privacy", "memory/atomicfile", "memory/transcript", "rpc/..."}},
		{pkg: "adapters/opencode", forbidden: []string{""}, allowed: []string{"adapters/opencode"}},
		{pkg: "adapters/claudemem", forbidden: []string{"adapters", "memory", "rpc", "vector"}, allowed: []string{"adapters/claudemem", "memory", "memory/privacy"}},
		{pkg: "adapters/mcp", forbidden: []string{""}, allowed: []string{"adapters/mcp", "memory", "memory/client", "rpc/..."}},
		// The tests' throw-away PostgreSQL, and the evaluation's data.
		{pkg: "memory/team/pgtest", forbidden: []string{""}},
		{pkg: "vector/internal/evalset", forbidden: []string{""}, allowed: []string{"vector", "memory/atomicfile"}},
		// The end-to-end harnesses and Claude Code's scripted model server
		// run the real binaries: they link nothing of ours.
		{pkg: "adapters/.../e2e", forbidden: []string{""}},
		{pkg: "adapters/claudecode/modelserver", forbidden: []string{""}},
		// Claude Code's own folder: its plugin, test data and e2e tests.
		{pkg: "adapters/claudecode", forbidden: []string{""}},
		// The daemon's runtime: everything but the commands above it.
		{pkg: "cmd/internal/daemon", forbidden: []string{"cmd/mnemo"}},
		// The commands reach the engine through the daemon's runtime or
		// the client: none opens a store or serves a connection itself.
		{pkg: "cmd/mnemo", direct: true, forbidden: []string{"memory/store", "memory/local", "memory/observer", "adapters/vscode", "adapters/viewer"}},
		// The hook binary links the hook and what every host shares, the
		// domain, and of rpc the socket's client side alone, never the engine,
		// the daemon nor rpc's JSON-RPC machinery (TestHookDeps).
		{pkg: "cmd/mnemo-hook", forbidden: []string{"memory", "vector", "adapters", "cmd", "rpc"}, allowed: []string{"memory", "memory/privacy", "memory/atomicfile", "adapters/hosts", "adapters/hosts/hook", "rpc/socket"}},
		// The benchmark builds no engine by hand: the daemon's runtime
		// opens it. The evaluation scores the engine in its own process,
		// without a daemon; the soak test is a client of a real daemon,
		// whose engine it never links.
		{pkg: "cmd/mnemo-bench", direct: true, forbidden: []string{"memory/local", "memory/observer"}},
		{pkg: "cmd/mnemo-eval", forbidden: []string{"cmd", "memory/client"}},
		{pkg: "cmd/mnemo-soak", forbidden: []string{"cmd", "memory/store", "memory/local", "memory/observer", "vector", "adapters/vscode", "adapters/viewer"}},
	}
	all := modulePackages(t)
	for _, r := range rules {
		t.Run(r.pkg, func(t *testing.T) {
			var pkgs []string
			for _, p := range all {
				if patternMatch(r.pkg, p) {
					pkgs = append(pkgs, module+"/"+p)
				}
			}
			if len(pkgs) == 0 {
				t.Fatalf("no package of the module is %s: mend the rule", r.pkg)
			}
			args := append([]string{"list", "-deps"}, pkgs...)
			if r.direct {
				args = append([]string{"list", "-f", `{{join .Imports "\n"}}`}, pkgs...)
			}
			out, err := exec.Command("go", args...).Output()
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
				if patternMatch(r.pkg, rel) || allowed(rel, r.allowed) {
					continue
				}
				if matches(rel, r.forbidden) {
					t.Errorf("%s imports %s", r.pkg, rel)
				}
			}
		})
	}
	// A new package gets its rule the day it lands.
	t.Run("every package has a rule", func(t *testing.T) {
		for _, p := range all {
			named := false
			for _, r := range rules {
				named = named || patternMatch(r.pkg, p)
			}
			if !named {
				t.Errorf("no rule for %s: give it one above", p)
			}
		}
	})
}

// modulePackages lists the module's packages, relative to it: those of
// `go list ./...` but any under node_modules (the VS Code extension's npm
// packages). Folders named testdata hold no packages, and
// vector/blevecompare is a module of its own.
func modulePackages(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok || strings.Contains("/"+rel+"/", "/node_modules/") {
			continue
		}
		pkgs = append(pkgs, rel)
	}
	return pkgs
}

// patternMatch reports whether pkg is pattern, where "..." matches any
// text, as in `go list`'s patterns ("x/..." matches x too).
func patternMatch(pattern, pkg string) bool {
	re := regexp.QuoteMeta(pattern)
	re = strings.ReplaceAll(re, `/\.\.\.`, `(/.*)?`)
	re = strings.ReplaceAll(re, `\.\.\.`, `.*`)
	return regexp.MustCompile("^" + re + "$").MatchString(pkg)
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
