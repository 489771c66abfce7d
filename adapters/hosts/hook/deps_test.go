package hook_test

import (
	"bytes"
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
// and those were about 0.1× an empty Go program (docs/decisions.md, "The
// hook links rpc/socket, not rpc").
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

// TestHookLinks checks what the linker keeps of the packages mnemo-hook
// imports but should not run: memory compiles its regular expressions on
// first use from a function, so package regexp's code (and the inits of
// unicode's tables it would bring) is not linked; a regexp compiled at
// init, or held by a package variable such as a sync.OnceValue, would
// link it again. The same for a dial through package net on Unix.
func TestHookLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the hook binary")
	}
	bin := buildHook(t)
	cmd := exec.Command("go", "tool", "nm", bin)
	cmd.Env = slices.Concat(goEnv, []string{"GOPROXY=off"})
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	unwanted := []string{" regexp.compile", " regexp/syntax.Parse", " unicode.map.init"}
	if runtime.GOOS != "windows" {
		unwanted = append(unwanted, " net.(*Dialer)")
	}
	for _, sym := range unwanted {
		if bytes.Contains(out, []byte(sym)) {
			t.Errorf("mnemo-hook links%s…", sym)
		}
	}
}
