package hook

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/rpc/socket"
)

// Main is mnemo-hook: it reads the command line (args, without the
// program's name; ParseArgs), finds the Mnemo home (socket.Home), runs the
// hook on the process's stdin and stdout, the daemon started with the
// mnemo binary next to it when one must be (DaemonCommand), and returns
// the exit status, which is always 0. version is mnemo-hook's own, as the
// build stamped it.
//
// A person gets words instead: --help (or -h) prints the usage, which no
// host asks for, and a bad argument, logged for a host, is also said on
// stderr when stderr is a terminal.
func Main(args []string, version string) int {
	if slices.ContainsFunc(args, func(a string) bool { return a == "--help" || a == "-help" || a == "-h" || a == "help" }) {
		fmt.Fprintf(os.Stdout, usage, strings.Join(hosts.Names(), ", "))
		return 0
	}
	cfg := Config{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Now: time.Now, Version: version}
	cfg.Host, cfg.Event, cfg.ArgsErr = ParseArgs(args)
	if cfg.ArgsErr == nil && cfg.Event != "" {
		if _, ok := hosts.StageOf(cfg.Host, cfg.Event); !ok {
			// An event no stage takes: a slip in the host's settings, or a
			// person trying the hook. Claude Code's other events land
			// here too, which Mnemo's installers never hook.
			h, _ := hosts.Named(cfg.Host)
			cfg.ArgsErr = fmt.Errorf("unknown event %q: Mnemo handles %s of %s", cfg.Event, strings.Join(slices.Sorted(maps.Keys(h.Events)), ", "), h.Title)
		}
	}
	if cfg.ArgsErr != nil {
		if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprintf(os.Stderr, "mnemo-hook: %v (mnemo-hook --help)\n", cfg.ArgsErr)
		}
	}
	if home, err := socket.Home(); err == nil {
		cfg.Home, cfg.DaemonCommandFunc = home, func() []string { return DaemonCommand(home) }
	}
	return Run(context.Background(), cfg)
}

// usage is mnemo-hook --help; %s is the hosts' names.
const usage = `usage: mnemo-hook [--host HOST] [EVENT] < payload.json

mnemo-hook is Mnemo's hook. A coding agent runs it for each event it is
set to hook (mnemo install <host> sets it), the event's JSON payload on
stdin; it hands the event to the Mnemo daemon (starting it when needed)
and prints the host's answer on stdout: the memory's context where the
host takes one, else {}. It always exits 0 and never holds the host up:
what it cannot deliver is spooled and ingested later.

  --host HOST  the host whose hook this is: %s
               (default claude-code)
  EVENT        the host's name for the event (SessionStart, PostToolUse…);
               the payload's own name wins

It logs to <home>/logs/hook.log (MNEMO_LOG_LEVEL=debug for every event);
mnemo doctor checks the setup.
`

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

// LogPath is the hook's log in the Mnemo home: <home>/logs/hook.log
// (rotated to hook.log.1 at 8 MB). mnemo doctor reports its warnings.
func LogPath(home string) string { return filepath.Join(home, "logs", "hook.log") }

// DaemonCommand returns the argv that starts the daemon for home (see
// socket.DaemonCommand) with the mnemo binary next to this executable (they
// are installed together), else $MNEMO_BIN, else mnemo on PATH.
func DaemonCommand(home string) []string { return socket.DaemonCommand(mnemoBinary(), home) }

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
