package rpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// The methods whose calls set up an editor's session in the daemon: a
// resuming forwarder says them again to a new daemon.
var resumeMethods = map[string]bool{"initialize": true, "initialized": true, "mnemo/watch": true}

// ForwardResuming is Forward for an editor whose daemon may go away
// while the editor stays: an upgrade's hand-over, an idle exit, a crash.
// When the daemon's side ends first, it connects again with connect
// (which starts a daemon, and says hello as resuming), says to the new
// daemon what set up the editor's session (initialize, initialized,
// mnemo/watch: their answers are not passed on, the editor had them), sends
// again the editor's calls that had no answer yet, and relays on: the
// editor sees nothing but the time it took. Notifications the old daemon
// had not read when it went are lost with it, as a crash loses them; an
// editor's saves (didSave) are not acknowledged by LSP.
//
// It stops resuming once the editor sent shutdown or exit, and gives up
// when connect fails for 10 s; it then ends as Forward does. Its errors
// are Forward's, or connect's last error.
func ForwardResuming(ctx context.Context, editor io.ReadWriteCloser, daemon io.ReadWriteCloser, connect func(ctx context.Context) (io.ReadWriteCloser, error), log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &resumer{editor: editor, pending: map[jsonrpc2.ID][]byte{}, swallow: map[jsonrpc2.ID]bool{}, log: log}
	stop := context.AfterFunc(ctx, func() { editor.Close(); f.closeDaemon() })
	defer stop()

	// The editor's frames, read by one goroutine for the whole session.
	frames := make(chan []byte)
	editorErr := make(chan error, 1)
	go func() {
		in := jsonrpc2.NewHeaderStream(editor).(frameStream)
		for {
			frame, _, err := in.ReadFrame(ctx)
			if err != nil {
				if isClosed(err) {
					err = nil
				} else if errors.Is(err, jsonrpc2.ErrInvalidHeader) {
					err = fmt.Errorf("forward editor→daemon: read: %w (%w)", ErrBadHeader, err)
				} else {
					err = fmt.Errorf("forward editor→daemon: read: %w", err)
				}
				editorErr <- err
				close(frames)
				return
			}
			frames <- bytes.Clone(frame) // the stream reuses its buffer
		}
	}()

	daemonDone := f.attach(daemon)
	var first error
	for {
		select {
		case frame, ok := <-frames:
			if !ok {
				// The editor closed: the session is over.
				first = <-editorErr
				f.closeDaemon()
				<-daemonDone
				editor.Close()
				return cmpErr(ctx, first)
			}
			resend := f.note(frame)
			if err := f.write(frame); err != nil {
				f.closeDaemon()
				<-daemonDone
				var cerr error
				if daemonDone, cerr = f.resume(ctx, connect); cerr != nil {
					editor.Close()
					return cmpErr(ctx, cerr)
				}
				if resend {
					// A notification: calls are sent again by resume.
					if err := f.write(frame); err != nil {
						f.closeDaemon()
					}
				}
			}
		case err := <-daemonDone:
			if f.ending() || ctx.Err() != nil || errors.Is(err, errEditorGone) {
				editor.Close()
				drain(frames)
				return cmpErr(ctx, err)
			}
			f.log.Info("the daemon went; connecting to a new one", "err", err)
			var cerr error
			if daemonDone, cerr = f.resume(ctx, connect); cerr != nil {
				editor.Close()
				drain(frames)
				return cmpErr(ctx, cerr)
			}
		}
	}
}

func drain(frames <-chan []byte) {
	for range frames {
	}
}

func cmpErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// resumer is the state of a resuming forwarder.
type resumer struct {
	editor io.ReadWriteCloser
	log    *slog.Logger

	mu      sync.Mutex
	daemon  io.ReadWriteCloser
	out     frameStream
	setup   []setupMsg
	pending map[jsonrpc2.ID][]byte
	order   []jsonrpc2.ID
	swallow map[jsonrpc2.ID]bool // answers of replayed setup calls
	exiting bool
	replays int
}

// setupMsg is a call or notification that set up the editor's session.
type setupMsg struct {
	method string
	params jsonrpc2.RawMessage
	id     jsonrpc2.ID // a call's
	call   bool
}

// errEditorGone ends a daemon's relay when the editor can no longer be
// written to.
var errEditorGone = errors.New("forward daemon→editor: the editor is gone")

// note records what a frame of the editor's means for a resume, and
// reports whether it must be written again after one (a notification).
func (f *resumer) note(frame []byte) (notification bool) {
	msg, err := jsonrpc2.DecodeMessage(frame)
	if err != nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc2.Call:
		if m.Method() == "shutdown" {
			f.exiting = true
		}
		if resumeMethods[m.Method()] {
			f.setup = append(f.setup, setupMsg{method: m.Method(), params: m.Params(), id: m.ID(), call: true})
		}
		f.pending[m.ID()] = frame
		f.order = append(f.order, m.ID())
		if len(f.order) > 64+2*len(f.pending) {
			kept := f.order[:0]
			for _, id := range f.order {
				if _, ok := f.pending[id]; ok {
					kept = append(kept, id)
				}
			}
			f.order = kept
		}
		return false
	case *jsonrpc2.Notification:
		if m.Method() == "exit" {
			f.exiting = true
		}
		if resumeMethods[m.Method()] {
			f.setup = append(f.setup, setupMsg{method: m.Method(), params: m.Params()})
		}
		return true
	}
	return false
}

func (f *resumer) ending() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exiting
}

func (f *resumer) write(frame []byte) error {
	f.mu.Lock()
	out := f.out
	f.mu.Unlock()
	if out == nil {
		return io.ErrClosedPipe
	}
	_, err := out.WriteFrame(context.Background(), frame)
	return err
}

func (f *resumer) closeDaemon() {
	f.mu.Lock()
	d := f.daemon
	f.mu.Unlock()
	if d != nil {
		d.Close()
	}
}

// attach makes d the daemon and relays its frames to the editor: answers
// of replayed setup calls are dropped, and an answer clears its call. The
// channel gets the end of d's side.
func (f *resumer) attach(d io.ReadWriteCloser) <-chan error {
	f.mu.Lock()
	f.daemon, f.out = d, jsonrpc2.NewHeaderStream(d).(frameStream)
	f.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		in := jsonrpc2.NewHeaderStream(d).(frameStream)
		out := jsonrpc2.NewHeaderStream(f.editor).(frameStream)
		for {
			frame, _, err := in.ReadFrame(context.Background())
			if err != nil {
				if isClosed(err) {
					err = nil
				}
				done <- err
				return
			}
			if msg, err := jsonrpc2.DecodeMessage(frame); err == nil {
				if r, ok := msg.(*jsonrpc2.Response); ok {
					f.mu.Lock()
					drop := f.swallow[r.ID()]
					delete(f.swallow, r.ID())
					delete(f.pending, r.ID())
					f.mu.Unlock()
					if drop {
						continue
					}
				}
			}
			if _, err := out.WriteFrame(context.Background(), frame); err != nil {
				done <- fmt.Errorf("%w: %w", errEditorGone, err)
				return
			}
		}
	}()
	return done
}

// resume connects to a new daemon (for up to 10 s), replays the session's
// setup and the calls still unanswered, and attaches it.
func (f *resumer) resume(ctx context.Context, connect func(context.Context) (io.ReadWriteCloser, error)) (<-chan error, error) {
	deadline := time.Now().Add(10 * time.Second)
	var d io.ReadWriteCloser
	for delay := 20 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		cctx, cancel := context.WithDeadline(ctx, deadline)
		var err error
		d, err = connect(cctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("forward: reconnect to the daemon: %w", err)
		}
		f.log.Debug("reconnect to the daemon", "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
	f.mu.Lock()
	var frames [][]byte
	for _, s := range f.setup {
		if !s.call {
			frames = append(frames, jsonrpc2.AppendNotification(nil, s.method, s.params))
			continue
		}
		if _, unanswered := f.pending[s.id]; unanswered {
			continue // sent again below, its answer for the editor
		}
		f.replays++
		id := jsonrpc2.NewStringID("mnemo-resume-" + strconv.Itoa(f.replays))
		f.swallow[id] = true
		frames = append(frames, jsonrpc2.AppendCall(nil, id, s.method, s.params))
	}
	kept := f.order[:0]
	for _, id := range f.order {
		if frame, ok := f.pending[id]; ok {
			frames = append(frames, frame)
			kept = append(kept, id)
		}
	}
	f.order = kept
	f.mu.Unlock()
	done := f.attach(d)
	for _, frame := range frames {
		if err := f.write(frame); err != nil {
			d.Close()
			break
		}
	}
	f.log.Info("resumed the editor's session on a new daemon", "replayed", len(frames))
	return done, nil
}
