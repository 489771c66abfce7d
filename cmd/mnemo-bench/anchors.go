//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
)

// anchorsResult is what checking observations' anchors costs the context
// of a session's start: mnemo/context on two stores of n observations made
// by the same edits (turns of 10, each ending in a summary), one anchored
// (live events) and one not (the same events dated an hour back, as a
// back-fill sends them), then on the anchored one after a tenth of its
// files changed and a twentieth lost what was written into them.
type anchorsResult struct {
	n                             int
	files                         int
	plain, anchored, afterChanges dist
	states                        map[string]int // of the context's candidates after the changes, from a search
}

// measureAnchors makes a project of files and edits each of them over
// and over through mnemo/postToolUse (the hooks' call), in two homes.
func measureAnchors(ctx context.Context, newEnv func(name string) (*env, error), n int) (anchorsResult, error) {
	res := anchorsResult{n: n, files: 500}
	type home struct {
		e       *env
		d       *daemon
		cl      *client.Client
		project string
	}
	var homes [2]home
	for i, name := range []string{"anchors-plain", "anchors-live"} {
		e, err := newEnv(name)
		if err != nil {
			return res, err
		}
		project := filepath.Join(filepath.Dir(e.home), "billing")
		if err := os.MkdirAll(filepath.Join(project, ".git"), 0o700); err != nil {
			return res, err
		}
		for f := range res.files {
			if err := os.WriteFile(filepath.Join(project, fmt.Sprintf("handler%03d.go", f)), []byte(anchorFile(f, 0)), 0o600); err != nil {
				return res, err
			}
		}
		d, err := e.startDaemon()
		if err != nil {
			return res, err
		}
		defer d.stop()
		if err := e.waitServing(ctx, d, time.Minute); err != nil {
			return res, err
		}
		rc, err := e.dial(ctx)
		if err != nil {
			return res, err
		}
		defer rc.Close()
		homes[i] = home{e: e, d: d, cl: client.New(rc), project: project}
	}
	for i, h := range homes {
		at := time.Time{}
		if i == 0 {
			at = time.Now().Add(-time.Hour) // history: not anchored
		}
		for j := range n {
			// Sessions of 10 prompts of 10 edits, as the other data sets.
			csid := fmt.Sprintf("bench-anchors-%03d", j/100)
			if j%10 == 0 {
				if _, err := h.cl.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: csid, Cwd: h.project, Prompt: fmt.Sprintf("rename handlers %d to %d", j, j+9), At: at}); err != nil {
					return res, err
				}
			}
			f := j % res.files
			path := filepath.Join(h.project, fmt.Sprintf("handler%03d.go", f))
			in, _ := json.Marshal(map[string]any{"file_path": path, "old_string": fmt.Sprintf("func old%d_%d() {}", f, j), "new_string": fmt.Sprintf("func handle%d() error { return nil }", f)})
			if _, err := h.cl.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: csid, Cwd: h.project, ToolName: "Edit", ToolInput: in,
				ToolResponse: json.RawMessage(`{"filePath":` + string(mustJSON(path)) + `}`), ToolUseID: fmt.Sprintf("toolu_%d", j), At: at}); err != nil {
				return res, err
			}
			if j%10 == 9 {
				// The turn ends: its summary names its edits, and the
				// context checks the lines that name a record gone since.
				if _, err := h.cl.Stop(ctx, memory.StopParams{ContentSessionID: csid, LastAssistantMessage: fmt.Sprintf("Renamed handlers %d to %d.", j-9, j), At: at}); err != nil {
					return res, err
				}
			}
		}
		if err := waitQueue(ctx, h.cl, 10*time.Minute); err != nil {
			return res, err
		}
	}
	timeContext := func(h home, into *dist) error {
		for i := range 10 + 100 {
			t0 := time.Now()
			if _, err := h.cl.Context(ctx, memory.ContextParams{Project: "billing", Cwd: h.project}); err != nil {
				return err
			}
			if i >= 10 {
				*into = append(*into, time.Since(t0))
			}
		}
		return nil
	}
	if err := timeContext(homes[0], &res.plain); err != nil {
		return res, err
	}
	if err := timeContext(homes[1], &res.anchored); err != nil {
		return res, err
	}
	// A tenth of the files change (their functions stay), a twentieth
	// lose what the edits wrote.
	for f := range res.files {
		switch {
		case f%20 == 0:
			os.WriteFile(filepath.Join(homes[1].project, fmt.Sprintf("handler%03d.go", f)), []byte(anchorFile(f, 2)), 0o600)
		case f%10 == 0:
			os.WriteFile(filepath.Join(homes[1].project, fmt.Sprintf("handler%03d.go", f)), []byte(anchorFile(f, 1)), 0o600)
		}
	}
	if err := timeContext(homes[1], &res.afterChanges); err != nil {
		return res, err
	}
	sr, err := homes[1].cl.Search(ctx, memory.SearchParams{Project: "billing", Limit: 200})
	if err != nil {
		return res, err
	}
	res.states = map[string]int{}
	for _, h := range sr.Hits {
		res.states[h.State]++
	}
	return res, nil
}

// anchorFile is a handler file: version 0 as the edits left it, 1 with a
// comment added (changed, the function still there), 2 with the function
// renamed (what the edits wrote is gone).
func anchorFile(f, version int) string {
	switch version {
	case 1:
		return fmt.Sprintf("package billing\n\n// handle%d handles it.\nfunc handle%d() error { return nil }\n", f, f)
	case 2:
		return fmt.Sprintf("package billing\n\nfunc serve%d() error { return nil }\n", f)
	}
	return fmt.Sprintf("package billing\n\nfunc handle%d() error { return nil }\n", f)
}

// waitQueue waits until the daemon's queue is empty.
func waitQueue(ctx context.Context, cl *client.Client, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		st, err := cl.Status(ctx)
		if err != nil {
			return err
		}
		if st.Counts.Queued == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d events still queued after %v", st.Counts.Queued, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
