package hook

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/rpc"
)

// Main is mnemo-hook: it reads the command line (args, without the
// program's name; ParseArgs), finds the Mnemo home (rpc.Home), runs the
// hook on the process's stdin and stdout, the daemon started with the
// mnemo binary next to it when one must be (DaemonCommand), and returns
// the exit status, which is always 0. version is mnemo-hook's own, as the
// build stamped it.
func Main(args []string, version string) int {
	cfg := Config{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Now: time.Now, Version: version}
	cfg.Host, cfg.Event, cfg.ArgsErr = ParseArgs(args)
	if home, err := rpc.Home(); err == nil {
		cfg.Home, cfg.DaemonCommandFunc = home, func() []string { return DaemonCommand(home) }
	}
	return Run(context.Background(), cfg)
}

// ParseArgs reads mnemo-hook's arguments: `[--host HOST] [EVENT]` (also
// --host=HOST). The host defaults to Claude Code's.
func ParseArgs(args []string) (host, event string, err error) {
	host = hosts.ClaudeCode
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--host" || a == "-host":
			if i+1 >= len(args) {
				return host, event, fmt.Errorf("--host needs a value: one of %s", strings.Join(hosts.Names(), ", "))
			}
			i++
			host = args[i]
		case strings.HasPrefix(a, "--host="):
			host = strings.TrimPrefix(a, "--host=")
		case strings.HasPrefix(a, "-"):
			return host, event, fmt.Errorf("unknown flag %q: usage: mnemo-hook [--host HOST] [EVENT]", a)
		case event == "":
			event = a
		default:
			return host, event, fmt.Errorf("unexpected argument %q: usage: mnemo-hook [--host HOST] [EVENT]", a)
		}
	}
	if _, ok := hosts.Named(host); !ok {
		return hosts.ClaudeCode, event, fmt.Errorf("unknown host %q: one of %s", host, strings.Join(hosts.Names(), ", "))
	}
	return host, event, nil
}

// DaemonCommand returns the argv that starts the daemon for home (see
// rpc.DaemonCommand) with the mnemo binary next to this executable (they
// are installed together), else $MNEMO_BIN, else mnemo on PATH.
func DaemonCommand(home string) []string { return rpc.DaemonCommand(mnemoBinary(), home) }

func mnemoBinary() string {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "mnemo"+exeSuffix)
		if fi, err := os.Stat(p); err == nil && executable(fi) {
			return p
		}
	}
	if p := os.Getenv("MNEMO_BIN"); p != "" {
		return p
	}
	if p, err := exec.LookPath("mnemo"); err == nil {
		return p
	}
	return "mnemo"
}
