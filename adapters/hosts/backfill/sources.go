package backfill

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
)

// A Source is one host's session transcripts on this machine:
// where they are, how to list them, and how to rebuild each session's
// hook calls from one (Backfill).
type Source struct {
	// Host is the host whose sessions the transcripts are (hosts.Codex…).
	Host string
	// Where says where the transcripts are looked for, for people.
	Where string

	root     func() (string, error)
	find     func(root string) ([]Transcript, error)
	cwd      func(f Transcript) (string, error)
	backfill func(f Transcript, o Options, emit func(Call) error) (Counts, error)
}

// Sources lists the hosts whose transcripts can be back-filled:
// Claude Code, Codex CLI and Gemini CLI.
func Sources() []Source {
	return []Source{
		{
			Host:     hosts.ClaudeCode,
			Where:    "~/.claude/projects, or $CLAUDE_CONFIG_DIR/projects",
			root:     ClaudeCodeRoot,
			find:     FindClaudeCode,
			cwd:      func(f Transcript) (string, error) { return ClaudeCodeCwd(f.Path) },
			backfill: claudeCode,
		},
		{
			Host:     hosts.Codex,
			Where:    "~/.codex/sessions, or $CODEX_HOME/sessions",
			root:     codexSessionsRoot,
			find:     findCodexRollouts,
			cwd:      func(f Transcript) (string, error) { return f.Cwd, nil },
			backfill: backfillCodex,
		},
		{
			Host:     hosts.Gemini,
			Where:    "~/.gemini/tmp/*/chats, or under $GEMINI_CLI_HOME",
			root:     geminiTmpRoot,
			find:     findGeminiChats,
			cwd:      func(f Transcript) (string, error) { return f.Cwd, nil },
			backfill: backfillGemini,
		},
	}
}

// SourceFor returns the transcript source of a host.
func SourceFor(host string) (Source, bool) {
	for _, s := range Sources() {
		if s.Host == host {
			return s, true
		}
	}
	return Source{}, false
}

// Root is the folder the host keeps its transcripts in.
func (s Source) Root() (string, error) { return s.root() }

// Find lists the session transcripts under root, oldest first. A root that
// does not exist has none.
func (s Source) Find(root string) ([]Transcript, error) { return s.find(root) }

// Cwd is the folder the session of a transcript ran in, "" when the
// transcript does not say.
func (s Source) Cwd(f Transcript) (string, error) { return s.cwd(f) }

// Backfill reads one transcript and rebuilds, in order, the calls the
// host's live hooks would have made: each call goes through the hook's
// own reading of the host's payloads (dialect, tool names, privacy, the
// skip list) and carries Key's event key and the time of its
// work. emit gets each call as soon as it is known; its error stops the
// read and is returned. A transcript with no prompt gives no call.
func (s Source) Backfill(f Transcript, o Options, emit func(Call) error) (Counts, error) {
	return s.backfill(f, o, emit)
}

// sortTranscripts orders transcripts oldest first, then by path.
func sortTranscripts(out []Transcript) {
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].ModTime.Equal(out[j].ModTime) {
			return out[i].ModTime.Before(out[j].ModTime)
		}
		return out[i].Path < out[j].Path
	})
}

// walkFiles calls fn for every regular file under root whose name has
// the prefix and one of the suffixes. A root that does not exist has none.
func walkFiles(root, prefix string, suffixes []string, fn func(path string, fi os.FileInfo) error) error {
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if path == root && errors.Is(err, os.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		name := d.Name()
		if d.IsDir() || !strings.HasPrefix(name, prefix) || !hasSuffix(name, suffixes) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		return fn(path, fi)
	})
	if err != nil {
		return fmt.Errorf("transcripts: %w", err)
	}
	return nil
}

func hasSuffix(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// hostReplay sends the hook payloads of one session of a host other than
// Claude Code, rebuilt from its transcript, through the hook's own path:
// the host's dialect read as Claude Code's (hosts.Wire.Normalize), then
// Translate.
type hostReplay struct {
	host   string
	sid    string // the host's own session id, not yet namespaced
	path   string
	o      Options
	emit   func(Call) error
	counts *Counts

	cwd     string
	at      time.Time // when the work of the next call happened
	started bool
}

// start sends SessionStart once, before the session's first prompt.
func (r *hostReplay) start(event, source string) error {
	if r.started {
		return nil
	}
	r.started = true
	return r.send(&hosts.Wire{HookEventName: event, Source: source}, "")
}

// send completes one payload in the host's dialect (session, transcript,
// cwd), reads it as the hook reads it and emits its call, keyed by uuid
// (the transcript's name for the event) and dated r.at. A tool the skip
// list drops is counted, not an error.
func (r *hostReplay) send(w *hosts.Wire, uuid string) error {
	w.SessionID, w.TranscriptPath, w.Cwd = r.sid, r.path, r.cwd
	p := w.Normalize(r.host, w.HookEventName)
	method, params, err := hook.Translate(p, hook.TranslateOptions{
		EventKey:  Key(p.SessionID, uuid, p.HookEventName),
		SkipTools: r.o.SkipTools,
		Log:       r.o.Log,
	})
	if errors.Is(err, hook.ErrSkippedTool) {
		r.counts.SkippedTools++
		return nil
	}
	if err != nil {
		return err
	}
	hook.SetAt(params, r.at)
	stage := p.Stage.Event
	switch stage {
	case hosts.EventUserPromptSubmit:
		r.counts.Prompts++
	case hosts.EventPostToolUse, hosts.EventPostToolUseFailure:
		r.counts.ToolEvents++
	case hosts.EventStop:
		r.counts.Turns++
	}
	return r.emit(Call{Event: stage, Method: method, Params: params})
}
