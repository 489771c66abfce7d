package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/adapters/viewer"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

func uiCommand() *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: "open the memory viewer in the browser (the daemon serves it on 127.0.0.1)",
		Description: "The viewer shows what Mnemo remembers as it is made, finds it, shows a record whole,\n" +
			"previews the next session's context and why, and forgets what is wrong. Its address\n" +
			"carries this user's secret token once; the browser keeps it in a cookie.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "no-open", Usage: "print the address only, on one line, and open nothing"},
		},
		Action: func(c *cli.Context) error {
			home, err := homeDir(c)
			if err != nil {
				return err
			}
			cl, err := connectDaemon(c.Context, home, newLogger(c, c.App.ErrWriter), rpc.ClientCLI, true)
			if err != nil {
				return err
			}
			defer cl.Close()
			res, err := client.New(cl).Viewer(c.Context)
			if err != nil {
				return fmt.Errorf("start the viewer: %w", err)
			}
			if c.Bool("no-open") {
				fmt.Fprintln(c.App.Writer, res.URL)
				return nil
			}
			if err := openBrowser(res.URL); err != nil {
				fmt.Fprintf(c.App.ErrWriter, "mnemo: could not open a browser (%v); open this address:\n", err)
				fmt.Fprintln(c.App.Writer, res.URL)
				return nil
			}
			fmt.Fprintf(c.App.Writer, "opened %s\n", res.URL)
			return nil
		},
	}
}

// openBrowser asks the desktop to open url.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	return cmd.Run()
}

// viewerState is what the viewer keeps in <home>/viewer.json: the user's
// token, and the port it last served on (taken again when free, so that
// the address, and the browser's cookie, stay the same across runs).
type viewerState struct {
	Token string `json:"token"`
	Port  int    `json:"port"`
}

func viewerStatePath(home string) string { return filepath.Join(home, "viewer.json") }

// loadViewerState reads the state, making a token the first time.
func loadViewerState(home string) (viewerState, error) {
	var st viewerState
	b, err := os.ReadFile(viewerStatePath(home))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return st, err
	default:
		if err := json.Unmarshal(b, &st); err != nil {
			return st, fmt.Errorf("%s: %w (delete it to make a new token)", viewerStatePath(home), err)
		}
	}
	if len(st.Token) < viewer.MinTokenLen {
		raw := make([]byte, 32)
		rand.Read(raw)
		st.Token = hex.EncodeToString(raw)
	}
	return st, nil
}

func (st viewerState) save(home string) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	// replaceFile's temporary file, renamed into place, is the user's
	// alone (0600).
	return replaceFile(viewerStatePath(home), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// preferredPort is the port a home's viewer tries first when it has never
// served: one of 20000–29999, the same for the same home.
func preferredPort(home string) int {
	h := fnv.New32a()
	h.Write([]byte(home))
	return 20000 + int(h.Sum32()%10000)
}

// viewerHost runs the viewer in the process that owns the memory, once it
// is asked for, until Close.
type viewerHost struct {
	m *Main
	// hold counts an open viewer as a client of the daemon; nil outside one.
	hold func() func()

	mu     sync.Mutex
	url    string
	port   int
	cancel context.CancelFunc
	done   chan struct{}
}

// start serves the viewer if it does not serve yet, and returns its
// address.
func (v *viewerHost) start() (memory.ViewerResult, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.url != "" {
		return memory.ViewerResult{URL: v.url, Port: v.port}, nil
	}
	home := v.m.Home
	st, err := loadViewerState(home)
	if err != nil {
		return memory.ViewerResult{}, err
	}
	port := st.Port
	if port == 0 {
		port = preferredPort(home)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		// Taken (by another user, or another program): any free port.
		v.m.Logger.Info("viewer: port taken; taking another", "port", port, "err", err)
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return memory.ViewerResult{}, fmt.Errorf("viewer: listen: %w", err)
		}
	}
	st.Port = ln.Addr().(*net.TCPAddr).Port
	if err := st.save(home); err != nil {
		ln.Close()
		return memory.ViewerResult{}, fmt.Errorf("viewer: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rc, stop := v.m.inProcessClient(ctx)
	srv, err := viewer.New(viewer.Options{
		Memory: client.New(rc), Watch: v.m.Memory.Watch, Token: st.Token, Hold: v.hold, Logger: v.m.Logger.With("component", "viewer"),
	})
	if err != nil {
		cancel()
		stop()
		ln.Close()
		return memory.ViewerResult{}, err
	}
	v.cancel, v.done = cancel, make(chan struct{})
	go func() {
		defer close(v.done)
		defer stop()
		if err := srv.Serve(ctx, ln); err != nil {
			v.m.Logger.Error("viewer", "err", err)
		}
	}()
	v.port, v.url = st.Port, viewer.URL(st.Port, st.Token)
	v.m.Logger.Info("viewer serving", "addr", ln.Addr().String())
	return memory.ViewerResult{URL: v.url, Port: v.port}, nil
}

// Close stops the viewer, if it serves, and waits for it.
func (v *viewerHost) Close() {
	v.mu.Lock()
	cancel, done := v.cancel, v.done
	v.url, v.cancel, v.done = "", nil, nil
	v.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// registerViewer serves memory.MethodViewer on a connection of m.
func registerViewer(mux *rpc.Mux, m *Main) {
	rpc.Handle(mux, memory.MethodViewer, func(ctx context.Context, _ struct{}) (memory.ViewerResult, error) {
		return m.viewer.start()
	})
}
