package observer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/local"
)

// collector turns the replies of one run into the run's output: it fills
// in what the event itself proves (tool, request, time, files), drops
// repeats within the run and of the turn's stored notes, and makes the
// summary of a stop event.
type collector struct {
	in   memory.AgentInput
	out  memory.AgentOutput
	seen map[string]bool
	turn []memory.Observation // the turn so far, this run's notes included
}

func newCollector(in memory.AgentInput, id string) *collector {
	c := &collector{in: in, out: memory.AgentOutput{MemorySessionID: id}, seen: map[string]bool{}, turn: slices.Clone(in.Turn)}
	for i := range in.Turn {
		c.seen[noteKey(&in.Turn[i])] = true
	}
	return c
}

// maxReplyBytes bounds the part of a reply that is parsed: a few notes
// take a few kilobytes.
const maxReplyBytes = 256 << 10

// add takes the reply to one event.
func (c *collector) add(ctx context.Context, ev memory.Event, text string) {
	r := Parse(text[:min(len(text), maxReplyBytes)])
	switch ev.Kind {
	case memory.EventTool:
		read, modified := toolFiles(ev)
		for _, o := range r.Observations {
			o.Tool, o.Request, o.Time = ev.ToolName, c.in.Request, ev.Time
			o.FilesRead = relAll(ev.Cwd, read, o.FilesRead)
			o.FilesModified = relAll(ev.Cwd, modified, o.FilesModified)
			k := noteKey(&o)
			if c.seen[k] {
				continue
			}
			c.seen[k] = true
			c.out.Observations = append(c.out.Observations, o)
			c.turn = append(c.turn, o)
		}
	case memory.EventStop:
		s := r.Summary
		if s == nil && r.SkipReason == "" {
			// No usable summary and no reason to skip one: the local
			// compressor writes it, so the turn is not left without.
			out, _ := local.Agent{}.Run(ctx, memory.AgentInput{
				Session: c.in.Session, NewID: c.out.MemorySessionID, Request: c.in.Request,
				Events: []memory.Event{ev}, Turn: c.turn,
			})
			s = out.Summary
		}
		if s == nil {
			return
		}
		if s.Request == "" {
			s.Request = strings.TrimSpace(firstNonEmpty(c.in.Request, ev.LastUserMessage))
		}
		read, modified := map[string]bool{}, map[string]bool{}
		for _, o := range c.turn {
			for _, f := range o.FilesRead {
				read[f] = true
			}
			for _, f := range o.FilesModified {
				modified[f] = true
			}
		}
		s.FilesRead, s.FilesModified = sortedSet(read), sortedSet(modified)
		c.out.Summary = s
	}
}

func sortedSet(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// noteKey identifies an observation's content, for dropping repeats.
func noteKey(o *memory.Observation) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", o.Type, strings.ToLower(o.Title), o.Narrative)
	for _, part := range [][]string{o.Facts, o.FilesRead, o.FilesModified} {
		for _, s := range part {
			fmt.Fprintf(h, "%s\x01", s)
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// toolFiles returns the files a tool event read and modified, as its input
// names them: the model's lists may miss them or name them differently.
func toolFiles(ev memory.Event) (read, modified []string) {
	var in struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	if json.Unmarshal(ev.ToolInput, &in) != nil {
		return nil, nil
	}
	file := firstNonEmpty(in.FilePath, in.NotebookPath)
	if file == "" {
		return nil, nil
	}
	switch ev.ToolName {
	case "Edit", "MultiEdit", "Write", "NotebookEdit", "Save":
		return nil, []string{file}
	case "Read", "NotebookRead", "Open":
		return []string{file}, nil
	}
	return nil, nil
}

// relAll joins lists of paths, relative to cwd where they are inside it,
// without repeats.
func relAll(cwd string, lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, p := range l {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			if cwd != "" && filepath.IsAbs(p) {
				if r, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(r, "..") {
					p = r
				}
			}
			out = append(out, filepath.ToSlash(p))
		}
	}
	return dedupe(out)
}
