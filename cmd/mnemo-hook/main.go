// Command mnemo-hook is Mnemo's hook for Claude Code and every other
// coding agent: `mnemo-hook [--host HOST] [EVENT]` reads the hook payload
// on stdin, hands it to the daemon and prints the answer in the host's
// shape. It always exits 0; see hook.Main.
package main

import (
	"os"

	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
)

// Version is set at build time with -ldflags "-X main.Version=…" (mnemo's
// is cmd/internal/daemon.Version): the hook tells the daemon its version,
// and an older daemon hands over to the mnemo next to it
// (rpc.ConnectOptions.Version).
var Version = "0.1.0-dev"

func main() {
	os.Exit(hook.Main(os.Args[1:], Version))
}
