package claudecode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// A TranscriptSource is one host's session transcripts on this machine:
// where they are, how to list them, and how to rebuild each session's
// hook calls from one (Backfill).
type TranscriptSource struct {
	// Host is the host whose sessions the transcripts are (HostCodex…).
	Host string
	// Where says where the transcripts are looked for, for people.
	Where string

	root     func() (string, error)
	find     func(root string) ([]TranscriptFile, error)
	cwd      func(f TranscriptFile) (string, error)
	backfill func(f TranscriptFile, o BackfillOptions, emit func(BackfillCall) error) (BackfillCounts, error)
}

// TranscriptSources lists the hosts whose transcripts can be back-filled:
// Claude Code, Codex CLI and Gemini CLI.
func TranscriptSources() []TranscriptSource {
	return []TranscriptSource{
		{
			Host:     HostClaudeCode,
			Where:    "~/.claude/projects, or $CLAUDE_CONFIG_DIR/projects",
			root:     TranscriptsRoot,
			find:     FindTranscripts,
			cwd:      func(f TranscriptFile) (string, error) { return TranscriptCwd(f.Path) },
			backfill: backfillClaude,
		},
		{
			Host:     HostCodex,
			Where:    "~/.codex/sessions, or $CODEX_HOME/sessions",
			root:     codexSessionsRoot,
			find:     findCodexRollouts,
			cwd:      func(f TranscriptFile) (string, error) { return f.Cwd, nil },
			backfill: backfillCodex,
		},
		{
			Host:     HostGemini,
			Where:    "~/.gemini/tmp/*/chats, or under $GEMINI_CLI_HOME",
			root:     geminiTmpRoot,
			find:     findGeminiChats,
			cwd:      func(f TranscriptFile) (string, error) { return f.Cwd, nil },
			backfill: backfillGemini,
		},
	}
}

// TranscriptSourceFor returns the transcript source of a host.
func TranscriptSourceFor(host string) (TranscriptSource, bool) {
	for _, s := range TranscriptSources() {
		if s.Host == host {
			return s, true
		}
	}
	return TranscriptSource{}, false
}

// Root is the folder the host keeps its transcripts in.
func (s TranscriptSource) Root() (string, error) { return s.root() }

// Find lists the session transcripts under root, oldest first. A root that
// does not exist has none.
func (s TranscriptSource) Find(root string) ([]TranscriptFile, error) { return s.find(root) }

// Cwd is the folder the session of a transcript ran in, "" when the
// transcript does not say.
func (s TranscriptSource) Cwd(f TranscriptFile) (string, error) { return s.cwd(f) }

// Backfill reads one transcript and rebuilds, in order, the calls the
// host's live hooks would have made: each call goes through the hook's
// own reading of the host's payloads (dialect, tool names, privacy, the
// skip list) and carries BackfillKey's event key and the time of its
// work. emit gets each call as soon as it is known; its error stops the
// read and is returned. A transcript with no prompt gives no call.
func (s TranscriptSource) Backfill(f TranscriptFile, o BackfillOptions, emit func(BackfillCall) error) (BackfillCounts, error) {
	return s.backfill(f, o, emit)
}

// sortTranscripts orders transcripts oldest first, then by path.
func sortTranscripts(out []TranscriptFile) {
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
// the host's dialect read as Claude Code's (wire.normalize), then
// Translate.
type hostReplay struct {
	host   string
	sid    string // the host's own session id, not yet namespaced
	path   string
	o      BackfillOptions
	emit   func(BackfillCall) error
	counts *BackfillCounts

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
	return r.send(&wire{HookEventName: event, Source: source}, "")
}

// send completes one payload in the host's dialect (session, transcript,
// cwd), reads it as the hook reads it and emits its call, keyed by uuid
// (the transcript's name for the event) and dated r.at. A tool the skip
// list drops is counted, not an error.
func (r *hostReplay) send(w *wire, uuid string) error {
	w.SessionID, w.TranscriptPath, w.Cwd = r.sid, r.path, r.cwd
	p := w.normalize(r.host, w.HookEventName)
	method, params, err := Translate(p, TranslateOptions{
		EventKey:  BackfillKey(p.SessionID, uuid, p.HookEventName),
		SkipTools: r.o.SkipTools,
		Log:       r.o.Log,
	})
	if errors.Is(err, ErrSkippedTool) {
		r.counts.SkippedTools++
		return nil
	}
	if err != nil {
		return err
	}
	setAt(params, r.at)
	stage, _ := stageOf(p.Host, p.HookEventName)
	switch stage {
	case EventUserPromptSubmit:
		r.counts.Prompts++
	case EventPostToolUse, EventPostToolUseFailure:
		r.counts.ToolEvents++
	case EventStop:
		r.counts.Turns++
	}
	return r.emit(BackfillCall{Event: stage, Method: method, Params: params})
}
