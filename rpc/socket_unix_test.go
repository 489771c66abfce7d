//go:build unix

package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mnemo-dev/mnemo/rpc"
)

func TestSocketPath(t *testing.T) {
	short := t.TempDir()
	long := filepath.Join(t.TempDir(), strings.Repeat("a-very-long-folder-name-", 5))
	xdg := t.TempDir()
	tmp := t.TempDir()
	uidDir := fmt.Sprintf("mnemo-%d", os.Getuid())

	tests := []struct {
		name     string
		home     string
		xdg      string
		wantDir  string // the socket's folder
		wantBase string // "" for a hash name
	}{
		{name: "short home", home: short, xdg: xdg, wantDir: filepath.Join(short, "run"), wantBase: "mnemo.sock"},
		{name: "long home, XDG_RUNTIME_DIR", home: long, xdg: xdg, wantDir: xdg},
		{name: "long home, no XDG_RUNTIME_DIR", home: long, xdg: "", wantDir: filepath.Join(tmp, uidDir)},
		{name: "long home, XDG_RUNTIME_DIR missing", home: long, xdg: filepath.Join(xdg, "gone"), wantDir: filepath.Join(tmp, uidDir)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_RUNTIME_DIR", tt.xdg)
			t.Setenv("TMPDIR", tmp)
			p := rpc.SocketPath(tt.home)
			if len(p) > 107 {
				t.Fatalf("path too long for a socket (%d bytes): %s", len(p), p)
			}
			if filepath.Dir(p) != tt.wantDir {
				t.Errorf("SocketPath = %s, want it in %s", p, tt.wantDir)
			}
			if tt.wantBase != "" && filepath.Base(p) != tt.wantBase {
				t.Errorf("SocketPath = %s, want %s", p, tt.wantBase)
			}
			if p != rpc.SocketPath(tt.home+"/") {
				t.Error("the same home must give the same path")
			}
			if tt.wantBase == "" && p == rpc.SocketPath(tt.home+"x") {
				t.Error("another home must give another path")
			}
		})
	}
	if long := filepath.Join(long, "run", "mnemo.sock"); len(long) <= 107 {
		t.Fatalf("test home is not long enough: %d", len(long))
	}
}

func TestListen(t *testing.T) {
	home := t.TempDir()
	path := rpc.SocketPath(home)
	ln, err := rpc.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	mustMode(t, filepath.Dir(path), os.ModeDir|0o700)
	mustMode(t, path, os.ModeSocket|0o600)

	// A second daemon is refused while the first lives.
	if _, err := rpc.Listen(path); !errors.Is(err, rpc.ErrDaemonRunning) {
		t.Fatalf("second Listen = %v, want ErrDaemonRunning", err)
	}
	// Its socket answers.
	nc, err := rpc.DialSocket(ctxT(t), path)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()

	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket file left after Close: %v", err)
	}
	// The lock is released with the listener.
	ln2, err := rpc.Listen(path)
	if err != nil {
		t.Fatalf("Listen after Close: %v", err)
	}
	ln2.Close()
}

func TestListenExisting(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		wantErr error  // nil: Listen succeeds
		errText string // a substring of the error
	}{
		{name: "stale socket is removed", prepare: func(t *testing.T, path string) {
			ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			ul.SetUnlinkOnClose(false)
			ul.Close()
			if _, err := os.Lstat(path); err != nil {
				t.Fatalf("no stale socket: %v", err)
			}
		}},
		{name: "live socket of another program", prepare: func(t *testing.T, path string) {
			ln, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
		}, wantErr: rpc.ErrDaemonRunning},
		{name: "regular file is left alone", prepare: func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, errText: "exists and is not a socket"},
		{name: "loose folder is tightened", prepare: func(t *testing.T, path string) {
			if err := os.Chmod(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := rpc.SocketPath(t.TempDir())
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			tt.prepare(t, path)
			ln, err := rpc.Listen(path)
			switch {
			case tt.wantErr != nil || tt.errText != "":
				if err == nil {
					ln.Close()
					t.Fatal("Listen succeeded")
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("err = %v, want it to say %q", err, tt.errText)
				}
				if tt.errText != "" {
					if b, _ := os.ReadFile(path); string(b) != "keep me" {
						t.Fatal("the file was touched")
					}
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				mustMode(t, filepath.Dir(path), os.ModeDir|0o700)
				mustMode(t, path, os.ModeSocket|0o600)
				nc, err := rpc.DialSocket(ctxT(t), path)
				if err != nil {
					t.Fatal(err)
				}
				nc.Close()
			}
		})
	}
}

// TestListenShortPath: a home too long for a socket path listens on the
// short private path, in a fresh 0700 folder.
func TestListenShortPath(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", t.TempDir())
	home := filepath.Join(t.TempDir(), strings.Repeat("h", 120))
	path := rpc.SocketPath(home)
	if strings.HasPrefix(path, home) {
		t.Fatalf("long home got %s", path)
	}
	ln, err := rpc.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	mustMode(t, filepath.Dir(path), os.ModeDir|0o700)
	mustMode(t, path, os.ModeSocket|0o600)
	c, err := rpc.Dial(ctxT(t), path)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestDialSocketErrors(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale.sock")
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ul.SetUnlinkOnClose(false)
	ul.Close()
	live := filepath.Join(dir, "live.sock")
	ln, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name     string
		ctx      context.Context
		path     string
		noDaemon bool
		text     string
	}{
		{name: "no file", ctx: ctxT(t), path: filepath.Join(dir, "none.sock"), noDaemon: true,
			text: "no daemon listening at " + filepath.Join(dir, "none.sock")},
		{name: "stale socket", ctx: ctxT(t), path: stale, noDaemon: true, text: "no daemon listening at " + stale},
		{name: "context ended", ctx: done, path: live, text: "connect to daemon at " + live},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc, err := rpc.DialSocket(tt.ctx, tt.path)
			if err == nil {
				nc.Close()
				t.Fatal("DialSocket succeeded")
			}
			if errors.Is(err, rpc.ErrNoDaemon) != tt.noDaemon {
				t.Errorf("errors.Is(err, ErrNoDaemon) = %v for %v", !tt.noDaemon, err)
			}
			if _, ok := errors.AsType[*rpc.DialError](err); !ok {
				t.Errorf("err is %T, want *rpc.DialError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.text) {
				t.Errorf("err = %q, want it to start %q", err, tt.text)
			}
		})
	}
	if _, err := rpc.Dial(ctxT(t), filepath.Join(dir, "none.sock")); !errors.Is(err, rpc.ErrNoDaemon) {
		t.Errorf("Dial = %v, want ErrNoDaemon", err)
	}
}

// TestListenRefusesOtherUser connects as another uid (a child process run
// as nobody) and checks that the peer check closes that connection unserved
// and logs it. It needs root to run the child as another user.
func TestListenRefusesOtherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to connect as another user")
	}
	const nobody = 65534
	// Everything the child touches must be reachable by nobody: open the
	// folders up after Listen made them private.
	dir, err := os.MkdirTemp("", "rpcpeer")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "run", "mnemo.sock")
	ln, err := rpc.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Dir(path)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "rpc.test")
	copyFile(t, mustExecutable(t), exe, 0o755)

	log, logs := newLogger()
	prev := slog.Default()
	slog.SetDefault(log)
	t.Cleanup(func() { slog.SetDefault(prev) })

	mux, _, _ := newTestMux(t)
	served := make(chan struct{}, 4)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- rpc.ServeListener(ctx, ln, func(ctx context.Context, nc net.Conn) {
			served <- struct{}{}
			c := rpc.Serve(ctx, nc, mux.Handler())
			<-c.Done()
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("ServeListener: %v", err)
		}
	})

	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "RPC_TEST_CHILD=dial-expect-closed", "RPC_TEST_SOCKET="+path, "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child as uid %d: %v\n%s", nobody, err, out)
	}
	select {
	case <-served:
		t.Fatal("a connection from another user was served")
	default:
	}
	if l := logs.String(); !strings.Contains(l, "refused a connection from another user") || !strings.Contains(l, fmt.Sprintf("peerUID=%d", nobody)) {
		t.Errorf("log lacks the refusal:\n%s", l)
	}
	// This user still gets in.
	c, err := rpc.Dial(ctxT(t), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var sum int
	if err := c.Call(ctxT(t), "sum", map[string]int{"a": 1, "b": 2}, &sum); err != nil || sum != 3 {
		t.Fatalf("sum = %d, %v", sum, err)
	}
	waitFor(t, served, "this user's connection to be served")
}

func mustMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode() & (os.ModeType | os.ModePerm); got != want {
		t.Errorf("%s: mode %v, want %v", path, got, want)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
