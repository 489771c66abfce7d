package hook_test

import (
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestHookDeps keeps the hook binary small: it must start about as fast
// as an empty Go program (docs/architecture.md §9: p50 ≤ 1.5× one) and
// never touch the data directory's lock, so of memory it links only the
// domain (its params, results and method names, standard library only)
// and the privacy rules, never the engine, the agents, the vector index or
// their stores; of the hosts' packages only what every host shares
// (adapters/hosts) and the hook itself, never the installers (their JSONC
// and TOML editors), the back-fill nor the daemon's runtime; of rpc only
// rpc/socket, never rpc itself with go.lsp.dev/jsonrpc2 and
// go-json-experiment, nor, on Unix, package net (socket dials with system
// calls): every package linked costs the hook's start its inits and pages,
// and those were 0.1× an empty Go program (docs/decisions.md, "The hook
// links rpc/socket, not rpc").
func TestHookDeps(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "github.com/mnemo-dev/mnemo/cmd/mnemo-hook")
	cmd.Env = slices.Concat(goEnv, []string{"GOPROXY=off"})
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	forbidden := func(pkg string) bool {
		switch {
		case pkg == "github.com/mnemo-dev/mnemo/memory", pkg == "github.com/mnemo-dev/mnemo/memory/privacy", pkg == "github.com/mnemo-dev/mnemo/memory/atomicfile":
			return false
		case pkg == "github.com/mnemo-dev/mnemo/memory", strings.HasPrefix(pkg, "github.com/mnemo-dev/mnemo/memory/"):
			return true
		case pkg == "github.com/mnemo-dev/mnemo/vector", strings.HasPrefix(pkg, "github.com/mnemo-dev/mnemo/vector/"):
			return true
		case pkg == "github.com/mnemo-dev/mnemo/adapters/hosts", pkg == "github.com/mnemo-dev/mnemo/adapters/hosts/hook":
			return false
		case strings.HasPrefix(pkg, "github.com/mnemo-dev/mnemo/adapters/"):
			return true // the installers, the back-fill, every other adapter
		case strings.HasPrefix(pkg, "github.com/dgraph-io/"), strings.HasPrefix(pkg, "github.com/philippgille/chromem-go"):
			return true
		case strings.HasPrefix(pkg, "github.com/mnemo-dev/mnemo/cmd/") && pkg != "github.com/mnemo-dev/mnemo/cmd/mnemo-hook":
			return true // the daemon's runtime (cmd/internal/daemon)
		case pkg == "github.com/mnemo-dev/mnemo/rpc/socket":
			return false
		case pkg == "github.com/mnemo-dev/mnemo/rpc", strings.HasPrefix(pkg, "github.com/mnemo-dev/mnemo/rpc/"):
			return true // rpc's JSON-RPC machinery: the server side, the forwarder
		case strings.HasPrefix(pkg, "go.lsp.dev/"), strings.HasPrefix(pkg, "github.com/go-json-experiment/"):
			return true
		case pkg == "net" && runtime.GOOS != "windows":
			return true // Windows dials AF_UNIX through net; Unix with system calls
		}
		return false
	}
	var ours []string
	for _, pkg := range deps {
		if forbidden(pkg) {
			t.Errorf("cmd/mnemo-hook depends on %s", pkg)
		}
		if strings.HasPrefix(pkg, "github.com/mnemo-dev/mnemo/") {
			ours = append(ours, pkg)
		}
	}
	t.Logf("%d packages; ours: %v", len(deps), ours)
}
