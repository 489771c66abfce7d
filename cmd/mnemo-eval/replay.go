package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

// A Set is one split of the replay evaluation: the raw hook payloads of a
// few projects and the questions asked about them.
type Set struct {
	Name     string
	Projects []Project
	Queries  []Query
}

// A Project is the hook payloads of one project, in the order Claude Code
// sent them, and the transcript lines Claude Code wrote between them.
type Project struct {
	Name     string
	Cwd      string
	Payloads []*hosts.Payload
	Raw      [][]byte // Raw[i] is the line Payloads[i] was read from
	// Transcript[i] are the transcript lines written before Payloads[i]
	// was sent (Transcript[len(Payloads)]: after the last), each with the
	// session it belongs to.
	Transcript map[int][]TranscriptLine
}

// A TranscriptLine is one line of a session's Claude Code transcript, as
// a project file of the replay format holds it: a line without a
// hook_event_name, with the session in its sessionId.
type TranscriptLine struct {
	SessionID string
	Raw       []byte
}

// A Query is one question with the project-relative files that answer it;
// a query of kind "none" has no answer in the set.
type Query struct {
	ID       string   `json:"id"`
	Project  string   `json:"project"`
	Kind     string   `json:"kind"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
}

// Kinds are the kinds of query, in the order tables show them.
var Kinds = []string{"paraphrase", "why", "identifier", "error", "path", "none"}

// LoadSet reads a set folder: <project>.jsonl files of hook payloads and
// queries.jsonl.
func LoadSet(dir string) (*Set, error) {
	projects, queries, err := loadSplit(dir, "queries.jsonl", func(q Query, _ []Project) error {
		switch {
		case !slices.Contains(Kinds, q.Kind):
			return fmt.Errorf("unknown kind %q", q.Kind)
		case q.Kind != "none" && len(q.Relevant) == 0:
			return fmt.Errorf("a %s query with no relevant file", q.Kind)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Set{Name: filepath.Base(dir), Projects: projects, Queries: queries}, nil
}

// loadSplit reads the folder of a split: its projects (every .jsonl file
// but questions, in the replay format) and its questions (the file named
// questions, one JSON value a line, each held to check with the
// projects). An error names the file and the line.
func loadSplit[Q any](dir, questions string, check func(Q, []Project) error) ([]Project, []Q, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	var projects []Project
	for _, f := range files {
		if filepath.Base(f) == questions {
			continue
		}
		p, err := loadProject(f)
		if err != nil {
			return nil, nil, err
		}
		projects = append(projects, p)
	}
	if len(projects) == 0 {
		return nil, nil, fmt.Errorf("%s: no <project>.jsonl files", dir)
	}
	path := filepath.Join(dir, questions)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var qs []Q
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var q Q
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			return nil, nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		if err := check(q, projects); err != nil {
			return nil, nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		qs = append(qs, q)
	}
	return projects, qs, nil
}

// hasProject reports whether projects hold one named name.
func hasProject(projects []Project, name string) bool {
	return slices.ContainsFunc(projects, func(p Project) bool { return p.Name == name })
}

func loadProject(path string) (Project, error) {
	p := Project{Name: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	f, err := os.Open(path)
	if err != nil {
		return p, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 8<<20)
	for n := 1; sc.Scan(); n++ {
		line := slices.Clone(sc.Bytes())
		var pl hosts.Payload
		if err := json.Unmarshal(line, &pl); err != nil {
			return p, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		if pl.HookEventName == "" {
			var tl struct {
				SessionID string `json:"sessionId"`
			}
			if err := json.Unmarshal(line, &tl); err != nil || tl.SessionID == "" {
				return p, fmt.Errorf("%s line %d: neither a hook payload (hook_event_name) nor a transcript line (sessionId)", path, n)
			}
			if p.Transcript == nil {
				p.Transcript = map[int][]TranscriptLine{}
			}
			i := len(p.Payloads)
			p.Transcript[i] = append(p.Transcript[i], TranscriptLine{SessionID: tl.SessionID, Raw: line})
			continue
		}
		if p.Cwd == "" {
			p.Cwd = pl.Cwd
		}
		p.Payloads = append(p.Payloads, &pl)
		p.Raw = append(p.Raw, line)
	}
	return p, sc.Err()
}

// Replay opens a fresh memory and plays every payload of the set
// through the five stages, as the hook would send them, then waits until
// the memory agent has made everything of them. Each session's
// transcript is written, line by line, into a temporary folder as the
// payloads go (the lines before a payload before it is sent), and every
// payload's transcript_path names that file: what the daemon reads there
// at a turn's end is what Claude Code had written by then.
func Replay(ctx context.Context, s *Set, emb vector.Embedder) (*store.Memory, error) {
	return replayProjects(ctx, s.Projects, emb)
}

func replayProjects(ctx context.Context, projects []Project, emb vector.Embedder) (*store.Memory, error) {
	dir, err := os.MkdirTemp("", "mnemo-eval-transcripts-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	mem, err := store.Open(ctx, store.Options{InMemory: true, Embedder: emb, NoSync: true})
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*store.Memory, error) {
		mem.Close()
		return nil, err
	}
	for _, p := range projects {
		for i := 0; i <= len(p.Payloads); i++ {
			for _, tl := range p.Transcript[i] {
				if err := appendLine(filepath.Join(dir, tl.SessionID+".jsonl"), tl.Raw); err != nil {
					return fail(err)
				}
			}
			if i == len(p.Payloads) {
				break
			}
			pl := *p.Payloads[i]
			pl.TranscriptPath = filepath.Join(dir, pl.SessionID+".jsonl")
			if err := send(ctx, mem, &pl, fmt.Sprintf("%s-%d", p.Name, i)); err != nil {
				return fail(fmt.Errorf("%s event %d (%s): %w", p.Name, i+1, pl.HookEventName, err))
			}
		}
	}
	if err := mem.WaitIdle(ctx); err != nil {
		return fail(err)
	}
	return mem, nil
}

// appendLine appends one line to a file, creating it.
func appendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(slices.Clip(line), '\n'))
	return errors.Join(err, f.Close())
}

// send translates one payload as the hook does and calls the stage.
func send(ctx context.Context, mem *store.Memory, pl *hosts.Payload, key string) error {
	method, params, err := hook.Translate(pl, hook.TranslateOptions{EventKey: key})
	switch {
	case errors.Is(err, hook.ErrUnhandledEvent), errors.Is(err, hook.ErrSkippedTool):
		return nil
	case err != nil:
		return err
	}
	return call(ctx, mem, method, params)
}

// call makes the daemon call of a stage's params.
func call(ctx context.Context, mem *store.Memory, method string, params any) error {
	var err error
	switch p := params.(type) {
	case *memory.SessionStartParams:
		_, err = mem.SessionStart(ctx, *p)
	case *memory.UserPromptParams:
		_, err = mem.UserPromptSubmit(ctx, *p)
	case *memory.ToolUseParams:
		_, err = mem.PostToolUse(ctx, *p)
	case *memory.StopParams:
		_, err = mem.Stop(ctx, *p)
	case *memory.SessionEndParams:
		_, err = mem.SessionEnd(ctx, *p)
	default:
		err = fmt.Errorf("%s: unexpected params %T", method, params)
	}
	return err
}
