package daemon

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
	"path/filepath"
	"strconv"
	"sync"

	"github.com/mnemo-dev/mnemo/adapters/viewer"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/rpc"
)

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
	// ReplaceFile's temporary file, renamed into place, is the user's
	// alone (0600).
	return ReplaceFile(viewerStatePath(home), func(w io.Writer) error {
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
	conn := v.m.Connect(ctx)
	srv, err := viewer.New(viewer.Options{
		Memory: client.New(conn.Client), Watch: v.m.Memory.Watch, Token: st.Token, Hold: v.hold, Logger: v.m.Logger.With("component", "viewer"),
	})
	if err != nil {
		cancel()
		conn.Close()
		ln.Close()
		return memory.ViewerResult{}, err
	}
	v.cancel, v.done = cancel, make(chan struct{})
	go func() {
		defer close(v.done)
		defer conn.Close()
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
