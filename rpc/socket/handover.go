package socket

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// An upgrade hands over by itself: a client of a newer Mnemo that meets
// an older daemon (its hello's ServerVersion, or a refusal of this
// client's newer protocol) stops it the way `mnemo daemon stop` does
// (terminate: SIGTERM on Unix, which every daemon since the first
// answers by ceasing to accept, finishing what it can and closing its
// store), waits until it no longer listens, and starts its own daemon
// through the start lock as any client that finds none does. Nothing
// acknowledged is lost: every write a daemon answered is held by the
// system (and synced within its window), queued events are in the store,
// and a hook whose call got no answer journals it for the new daemon to
// take in. Racing clients each ask (a second SIGTERM
// is harmless) and the start lock lets one start the new daemon.

// mayHandOver reports whether this client should ask the daemon of hr to
// hand over: it may start a daemon, and the daemon speaks an older
// protocol or is of an older version.
func (o Options) mayHandOver(hr HelloResult) bool {
	if len(o.Command) == 0 && o.CommandFunc == nil || hr.PID <= 0 || hr.PID == os.Getpid() {
		return false
	}
	if hr.ProtocolVersion != 0 && hr.ProtocolVersion < ProtocolVersion {
		return true
	}
	c, ok := CompareVersions(o.Version, hr.ServerVersion)
	return ok && c > 0 && !staleStart(o.Home, hr.ServerVersion)
}

// staleFile records the version of a daemon that a hand-over started
// older than the client that asked (its command runs an older mnemo than
// the client's own: a mismatched install): no client hands that version
// over again, which would go round at every call. The daemon that replaces
// it once its binary is (watchBinary), or a daemon of another version,
// makes the record moot.
func staleFile(home string) string { return filepath.Join(home, "run", "handover-stale") }

func staleStart(home, version string) bool {
	b, err := os.ReadFile(staleFile(home))
	return err == nil && strings.TrimSpace(string(b)) == version
}

// handOver stops the older daemon of hr and waits, bounded by ctx, until
// it no longer listens (its socket refuses, or its process is gone); the
// caller then dials, which starts the new daemon. A daemon that starts
// while the old one still closes its store waits for the store (the
// daemon's LockWait).
func handOver(ctx context.Context, o Options, hr HelloResult) error {
	if o.Logger != nil {
		o.Logger.Info("handing over to a newer daemon", "daemon", hr.ServerVersion, "pid", hr.PID, "client", o.Version)
	}
	if err := Terminate(hr.PID); err != nil && ProcessAlive(hr.PID) {
		return fmt.Errorf("hand-over: stop the daemon (mnemo %s, pid %d): %w", hr.ServerVersion, hr.PID, err)
	}
	sock := Path(o.Home)
	for delay := time.Millisecond; ; delay = min(2*delay, 20*time.Millisecond) {
		if !ProcessAlive(hr.PID) {
			return nil
		}
		nc, err := Dial(ctx, sock)
		if errors.Is(err, ErrNoDaemon) {
			return nil
		}
		if err == nil {
			nc.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("hand-over: the daemon (mnemo %s, pid %d) still serves: %w", hr.ServerVersion, hr.PID, ctx.Err())
		case <-time.After(delay):
		}
	}
}

// startNew hands the daemon of hr over and starts the new daemon, which
// it greets: for a client whose call the old daemon already answered.
func startNew(ctx context.Context, o Options, hr HelloResult) error {
	if err := handOver(ctx, o, hr); err != nil {
		return err
	}
	nc, err := dial(ctx, o)
	if err != nil {
		return fmt.Errorf("hand-over: start the new daemon: %w", err)
	}
	defer nc.Close()
	now, err := Handshake(ctx, nc, o.hello())
	if err != nil {
		return fmt.Errorf("hand-over: the new daemon: %w", err)
	}
	if c, ok := CompareVersions(o.Version, now.ServerVersion); ok && c > 0 {
		_ = os.WriteFile(staleFile(o.Home), []byte(now.ServerVersion+"\n"), 0o600)
		return fmt.Errorf("hand-over: the daemon it started is mnemo %s, older than this client (mnemo %s): install mnemo and mnemo-hook of one version side by side; until then no client hands mnemo %s over again", now.ServerVersion, o.Version, now.ServerVersion)
	}
	if o.Logger != nil {
		o.Logger.Info("handed over to a new daemon", "from", hr.ServerVersion, "pid", hr.PID)
	}
	return nil
}
