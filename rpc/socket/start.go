package socket

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// StartOptions say how to start the daemon when none is listening.
type StartOptions struct {
	// Socket is the daemon's socket path (Path(home)).
	Socket string
	// LockPath is the start lock, a file that racing clients lock so that
	// exactly one of them starts a daemon.
	LockPath string
	// Command is the daemon's argv, e.g. {"/usr/bin/mnemo", "daemon"}.
	Command []string
	// Env is the daemon's environment; the current one when nil.
	Env []string
	// LogPath receives the daemon's stderr.
	LogPath string
	// Wait bounds the wait for the new daemon's socket.
	Wait time.Duration
	// FailPath, when set, remembers a daemon that exited before it
	// listened, with the files and folders of Watch and the binary it ran
	// as they were then: while none of them has changed, no daemon is
	// started again, and the error says why it failed (a damaged store
	// would otherwise be started, and fail, at every hook and command).
	FailPath string
	Watch    []string
}

// ErrDaemonStart is returned when a started daemon did not come up.
var ErrDaemonStart = errors.New("the daemon did not start")

// DialOrStart connects to the daemon at o.Socket. When none listens it
// takes the start lock, checks again (a racing client may have started
// one), starts the daemon detached from this process (so that it outlives a
// hook or an editor), and waits up to o.Wait for its socket.
// ctx bounds everything.
func DialOrStart(ctx context.Context, o StartOptions) (Conn, error) {
	nc, err := Dial(ctx, o.Socket)
	if err == nil || !errors.Is(err, ErrNoDaemon) {
		return nc, err
	}
	lock, err := o.openLock()
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := lockContext(ctx, lock); err != nil {
		return nil, fmt.Errorf("start daemon: wait for the start lock: %w", err)
	}
	defer unlock(lock)

	if nc, err := Dial(ctx, o.Socket); err == nil || !errors.Is(err, ErrNoDaemon) {
		return nc, err
	}
	if msg := o.failedBefore(); msg != "" {
		return nil, fmt.Errorf("%w: %s", ErrDaemonStart, msg)
	}
	exited, err := spawn(o)
	if err != nil {
		return nil, err
	}
	wait := o.Wait
	if wait <= 0 {
		wait = 5 * time.Second
	}
	deadline := time.Now().Add(wait)
	for delay := time.Millisecond; ; delay = min(delay*2, 50*time.Millisecond) {
		nc, err := Dial(ctx, o.Socket)
		if err == nil || !errors.Is(err, ErrNoDaemon) {
			if err == nil && o.FailPath != "" {
				os.Remove(o.FailPath)
				go o.watchEarlyExit(exited)
			}
			return nc, err
		}
		select {
		case err := <-exited:
			failed := fmt.Errorf("%w: %s exited (%v)%s", ErrDaemonStart, strings.Join(o.Command, " "), err, logTail(o.LogPath))
			o.rememberFailure(failed)
			return nil, failed
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w within %s; see %s", ErrDaemonStart, wait, o.LogPath)
		}
	}
}

// restartGap is how long after a client started a daemon others take it
// to be on its way: a daemon takes a moment to hold its lock.
const restartGap = 5 * time.Second

// StartDetached starts the daemon of o as DialOrStart does, without
// waiting for it: for a client that handed its work over another way (a
// hook's journal) and only needs a daemon to come and take it. It takes
// the start lock without waiting (a client holding it is starting one),
// looks again (Running), and spawns the daemon unless a client did
// in the last few seconds (the time in the start lock's file). It reports
// whether it spawned one.
func StartDetached(o StartOptions) (bool, error) {
	if Running(o.Socket) {
		return false, nil
	}
	lock, err := o.openLock()
	if err != nil {
		return false, err
	}
	defer lock.Close()
	if ok, err := tryLock(lock); err != nil || !ok {
		return false, err
	}
	defer unlock(lock)
	if Running(o.Socket) {
		return false, nil
	}
	stamp := make([]byte, 32)
	n, _ := lock.ReadAt(stamp, 0)
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(stamp[:n]))); err == nil {
		if since := time.Since(t); since >= 0 && since < restartGap {
			return false, nil
		}
	}
	if msg := o.failedBefore(); msg != "" {
		return false, fmt.Errorf("%w: %s", ErrDaemonStart, msg)
	}
	if _, err := spawn(o); err != nil {
		return false, err
	}
	if err := lock.Truncate(0); err == nil {
		_, _ = lock.WriteAt([]byte(time.Now().UTC().Format(time.RFC3339Nano)), 0)
	}
	return true, nil
}

// failedBefore is what a remembered failed start (FailPath) said, when
// nothing it watched has changed since; "" otherwise.
func (o StartOptions) failedBefore() string {
	if o.FailPath == "" {
		return ""
	}
	b, err := os.ReadFile(o.FailPath)
	if err != nil {
		return ""
	}
	fp, msg, ok := strings.Cut(string(b), "\n")
	if !ok || fp != o.fingerprint() {
		return ""
	}
	return msg + "\n(That start failed, and nothing it depends on has changed since: no daemon is started again until the store, the settings or the mnemo binary change. `mnemo daemon` runs one in this terminal.)"
}

// earlyExit is how long after it listens a daemon that exits with an
// error is taken for one that failed to start: one that panics on what it
// reads as it opens (a damaged store) listens first.
const earlyExit = 5 * time.Second

// watchEarlyExit remembers a failed start (rememberFailure) when the
// daemon this client started exits with an error within earlyExit, and no
// other daemon listens then.
func (o StartOptions) watchEarlyExit(exited <-chan error) {
	select {
	case err := <-exited:
		if err == nil {
			return
		}
		if nc, derr := Dial(context.Background(), o.Socket); derr == nil {
			nc.Close()
			return
		}
		o.rememberFailure(fmt.Errorf("%w: %s exited just after it started (%v)%s", ErrDaemonStart, strings.Join(o.Command, " "), err, logTail(o.LogPath)))
	case <-time.After(earlyExit):
	}
}

// rememberFailure keeps err in FailPath, with what the start depended on.
func (o StartOptions) rememberFailure(err error) {
	if o.FailPath == "" {
		return
	}
	msg := fmt.Sprintf("at %s: %s", time.Now().Format("2006-01-02 15:04:05"), strings.TrimPrefix(err.Error(), ErrDaemonStart.Error()+": "))
	_ = os.MkdirAll(filepath.Dir(o.FailPath), 0o700)
	_ = os.WriteFile(o.FailPath, []byte(o.fingerprint()+"\n"+msg), 0o600)
}

// fingerprint sums what a start depends on: the names, sizes and times of
// the files of Watch (a folder's files, its lock file aside) and of the
// binary the command runs.
func (o StartOptions) fingerprint() string {
	h := sha256.New()
	paths := slices.Clone(o.Watch)
	if len(o.Command) > 0 {
		paths = append(paths, o.Command[0])
	}
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00", p)
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			h.Write([]byte("-\x00"))
		case fi.IsDir():
			entries, _ := os.ReadDir(p)
			for _, e := range entries {
				if e.Name() == "LOCK" {
					continue
				}
				if info, err := e.Info(); err == nil {
					fmt.Fprintf(h, "%s %d %d\x00", e.Name(), info.Size(), info.ModTime().UnixNano())
				}
			}
		default:
			fmt.Fprintf(h, "%d %d\x00", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// StartFailPath is where a failed start of the daemon of home is
// remembered (StartOptions.FailPath); a daemon that opened its store
// removes it.
func StartFailPath(home string) string { return filepath.Join(home, "run", "start-failed") }

// openLock opens the start lock's file (LockPath), making its folder;
// the caller locks it.
func (o StartOptions) openLock() (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(o.LockPath), 0o700); err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	lock, err := os.OpenFile(o.LockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	return lock, nil
}

// spawn starts the daemon detached (detach: in its own session on Unix, with
// no console on Windows) with stdin closed and its output in the log file.
// The returned channel gets its exit if it exits.
func spawn(o StartOptions) (<-chan error, error) {
	if len(o.Command) == 0 {
		return nil, fmt.Errorf("%w: no daemon command", ErrDaemonStart)
	}
	if err := os.MkdirAll(filepath.Dir(o.LogPath), 0o700); err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	logf, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	cmd.Env = o.Env
	cmd.Stdout, cmd.Stderr = logf, logf
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDaemonStart, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited, nil
}

// lockContext takes an exclusive lock on f (tryLock), polling so that ctx
// can end the wait.
func lockContext(ctx context.Context, f *os.File) error {
	for delay := time.Millisecond; ; delay = min(delay*2, 20*time.Millisecond) {
		ok, err := tryLock(f)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// logTail returns the last lines of a log file, for error messages.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 1024 {
		b = b[len(b)-1024:]
	}
	return "; its log ends with:\n" + strings.TrimSpace(string(b))
}

// DaemonCommand is the argv that starts the daemon of home with the mnemo
// binary at mnemo; the daemon logs to <home>/logs/daemon.log.
func DaemonCommand(mnemo, home string) []string {
	return []string{mnemo, "--home", home, "daemon", "--log-file", filepath.Join(home, "logs", "daemon.log")}
}

// StartFor returns how clients start the daemon of home with command: the
// socket of Path, the start lock <home>/run/start.lock, and
// <home>/logs/daemon-start.log for what the daemon prints before its own
// log is open. The environment is the caller's.
func StartFor(home string, command []string, wait time.Duration) StartOptions {
	return StartOptions{
		Socket:   Path(home),
		LockPath: filepath.Join(home, "run", "start.lock"),
		Command:  command,
		LogPath:  filepath.Join(home, "logs", "daemon-start.log"),
		Wait:     wait,
		FailPath: StartFailPath(home),
		Watch:    []string{filepath.Join(home, "db"), filepath.Join(home, "settings.json")},
	}
}
