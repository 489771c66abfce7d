package main_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// After mnemo/watch, an editor's connection is told each change of the
// memory as a mnemo/changed notification: served in process, and
// forwarded from the daemon by `mnemo serve` (over the daemon's socket);
// a connection that did not ask is told nothing.
func TestWatchTellsTheConnectionEachChange(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"in process", []string{"--remote=none"}},
		{"through the daemon", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t)
			if tc.args == nil {
				t.Cleanup(func() { stopDaemon(t, env) })
			}
			c := startServe(t, env, tc.args...)
			if res := c.call(memory.MethodWatch, nil); string(res) != "{}" {
				t.Fatalf("mnemo/watch = %s", res)
			}
			c.call(memory.MethodUserPromptSubmit, memory.UserPromptParams{
				ContentSessionID: "s-watch", Cwd: env.project, Prompt: "fix the rounding of invoices",
			})
			for {
				ch := c.nextChange(10 * time.Second)
				if ch.Kind != memory.KindPrompt {
					continue // the session opened first
				}
				if ch.ContentSessionID != "s-watch" || ch.Title != "fix the rounding of invoices" || ch.Project != "billing-api" || ch.PromptNumber != 1 {
					t.Fatalf("the prompt's change: %+v", ch)
				}
				break
			}

			// Another editor of the daemon, which did not watch, is told
			// nothing. (In process, one editor owns the data directory.)
			if tc.args != nil {
				return
			}
			other := startServe(t, env)
			other.call(memory.MethodStatus, nil)
			c.call(memory.MethodUserPromptSubmit, memory.UserPromptParams{
				ContentSessionID: "s-watch", Cwd: env.project, Prompt: "and the taxes",
			})
			other.call(memory.MethodStatus, nil)
			if len(other.notes) != 0 {
				t.Errorf("a connection that did not watch was told %q", other.notes)
			}
		})
	}
}

// nextChange returns the next mnemo/changed notification's change,
// failing the test after within.
func (c *stdioClient) nextChange(within time.Duration) memory.Change {
	c.t.Helper()
	for {
		var frame []byte
		if len(c.notes) > 0 {
			frame, c.notes = c.notes[0], c.notes[1:]
		} else {
			got := make(chan []byte, 1)
			go func() {
				f, err := readFrame(c.out)
				if err != nil {
					f = nil
				}
				got <- f
			}()
			select {
			case frame = <-got:
			case <-time.After(within):
				c.t.Fatalf("no mnemo/changed within %s; the server's stderr:\n%s", within, c.stderr)
			}
			if frame == nil {
				c.t.Fatalf("the server closed; its stderr:\n%s", c.stderr)
			}
		}
		var msg struct {
			Method string        `json:"method"`
			Params memory.Change `json:"params"`
		}
		if err := json.Unmarshal(frame, &msg); err != nil {
			c.t.Fatalf("frame %s: %v", frame, err)
		}
		if msg.Method == memory.MethodChanged {
			return msg.Params
		}
	}
}
