package backfill_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/backfill"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/privacy"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/memory/transcript"
)

// transcriptsDir holds real transcripts of several Claude Code versions,
// recorded by adapters/claudecode/e2e/record (its README.md says what each
// version wrote): <version>/projects is a ~/.claude/projects,
// <version>/manifest.json what the recorder typed and what tools the model
// called, <version>/hooks.jsonl the hook payloads the CLI sent.
const transcriptsDir = "../../claudecode/testdata/transcripts"

// recording is a version's manifest.json.
type recording struct {
	Version string    `json:"version"`
	Project string    `json:"project"`
	Runs    []recRun  `json:"runs"`
	Tools   []recTool `json:"tools"`
	dir     string    // testdata/transcripts/<version>
	byRun   map[string]*recRun
}

type recRun struct {
	Label      string    `json:"label"`
	SessionIDs []string  `json:"sessionIds"`
	Turns      []recTurn `json:"turns"`
	Error      string    `json:"error"`
}

type recTurn struct {
	Kind    string `json:"kind"`
	Prompt  string `json:"prompt"` // its first 600 bytes
	Bytes   int    `json:"bytes"`
	Reached bool   `json:"reached"` // the model got it
}

// person reports a turn the person typed that reached the model: not
// /compact, which runs locally, nor a command the version refused.
func (t recTurn) person() bool { return t.Kind != "compact" && t.Reached }

type recTool struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Run       string `json:"run"`
	Turn      int    `json:"turn"`
	Sidechain bool   `json:"sidechain"`
}

func recordings(t *testing.T) []*recording {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(transcriptsDir, "*", "manifest.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no recorded transcripts in %s: %v", transcriptsDir, err)
	}
	var out []*recording
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		r := &recording{dir: filepath.Dir(name), byRun: map[string]*recRun{}}
		if err := json.Unmarshal(b, r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range r.Runs {
			r.byRun[r.Runs[i].Label] = &r.Runs[i]
		}
		out = append(out, r)
	}
	return out
}

// sessions is what the person typed in each session, in order: a run that
// resumed a session goes on in it (2.0 and later), or in a session of its
// own (1.0 copies the conversation into a new one).
//
// A run's session is the one of the ids it named that has a transcript:
// 2.1.30 resumed in -p names a new id first, and goes on in the old file.
func (r *recording) sessions() (order []string, turns map[string][]recTurn, runOf map[string]string) {
	turns, runOf = map[string][]recTurn{}, map[string]string{}
	for _, run := range r.Runs {
		sid := r.sessionOf(run.Label)
		if sid == "" {
			continue
		}
		if _, ok := turns[sid]; !ok {
			order = append(order, sid)
		}
		runOf[run.Label] = sid
		for _, tu := range run.Turns {
			if tu.person() {
				turns[sid] = append(turns[sid], tu)
			}
		}
	}
	return order, turns, runOf
}

// sessionOf is the session a run went on in: the last id it named that
// has a transcript.
func (r *recording) sessionOf(run string) string {
	ids := r.byRun[run].SessionIDs
	for i := len(ids) - 1; i >= 0; i-- {
		if m, _ := filepath.Glob(filepath.Join(r.dir, "projects", "*", ids[i]+".jsonl")); len(m) > 0 {
			return ids[i]
		}
	}
	return ""
}

// ordinal is the number of the prompt a run's turn is in its session.
func (r *recording) ordinal(run string, turn int) int {
	n := 0
	sid := r.sessionOf(run)
	for _, rr := range r.Runs {
		if sid == "" || r.sessionOf(rr.Label) != sid {
			continue
		}
		for i, tu := range rr.Turns {
			if rr.Label == run && i == turn {
				return n + 1
			}
			if tu.person() {
				n++
			}
		}
	}
	return -1
}

// backfillInto back-fills every transcript of a recording into mem, as
// `mnemo backfill claude-code` does (no context, no recall), and returns
// the calls made, by session.
func backfillInto(t *testing.T, mem *store.Memory, root string) map[string][]backfill.Call {
	t.Helper()
	src, _ := backfill.SourceFor(hosts.ClaudeCode)
	files, err := src.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := map[string][]backfill.Call{}
	for _, f := range files {
		_, err := src.Backfill(f, backfill.Options{}, func(c backfill.Call) error {
			calls[f.SessionID] = append(calls[f.SessionID], c)
			var err error
			switch p := c.Params.(type) {
			case *memory.SessionStartParams:
				p.NoContext = true
				_, err = mem.SessionStart(ctx, *p)
			case *memory.UserPromptParams:
				p.NoRecall = true
				_, err = mem.UserPromptSubmit(ctx, *p)
			case *memory.ToolUseParams:
				_, err = mem.PostToolUse(ctx, *p)
			case *memory.StopParams:
				_, err = mem.Stop(ctx, *p)
			case *memory.SessionEndParams:
				_, err = mem.SessionEnd(ctx, *p)
			}
			return err
		})
		if err != nil {
			t.Fatalf("back-fill %s: %v", f.Path, err)
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := mem.WaitIdle(waitCtx); err != nil {
		t.Fatal(err)
	}
	return calls
}

// markerRE is the recorder's script marker, which no person would type.
var markerRE = regexp.MustCompile(`SCENARIO:\S+\s*`)

// TestRecordedTranscriptsBackfill back-fills the transcripts of every
// recorded Claude Code version into a real memory (Badger in memory, the
// local agent) and checks, against what the recorder typed and what the
// model server asked for (manifest.json, not the transcripts):
//   - every prompt the person typed is stored once, in its session, as
//     typed (a slash command as "/name args"), and nothing else is: no
//     task notification, command output, caveat, skill body, compaction
//     summary, nor a copy of an earlier session's turns;
//   - every tool the model ran, the sub-agents' included (inline, beside
//     the session or in <session>/subagents/), is back-filled once, in its
//     session, under the prompt of its turn;
//   - the prompt of every turn is found by search: by the records of its
//     tools, or by the record of what the answer explained (a turn in
//     German, say, with no tool call);
//   - no record holds an image's base64, and every session is filed under
//     the project's own folder name.
func TestRecordedTranscriptsBackfill(t *testing.T) {
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	for _, rec := range recordings(t) {
		t.Run(rec.Version, func(t *testing.T) {
			mem, err := store.Open(t.Context(), store.Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			ctx := context.Background()
			calls := backfillInto(t, mem, filepath.Join(rec.dir, "projects"))
			order, turns, runOf := rec.sessions()

			// Prompts: those typed, once each, and nothing else.
			for _, sid := range order {
				sess, err := mem.Session(ctx, sid)
				if err != nil {
					t.Errorf("session %s: %v", sid, err)
					continue
				}
				if sess.Project != "will-it-rain" {
					t.Errorf("session %s is filed under project %q", sid, sess.Project)
				}
				prompts, err := mem.Prompts(ctx, sess.ID)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, p := range prompts {
					got = append(got, p.Text)
				}
				want := turns[sid]
				ok := len(got) == len(want)
				for i := 0; ok && i < len(want); i++ {
					typed := strings.TrimSpace(want[i].Prompt)
					ok = strings.HasPrefix(unpasted(got[i]), unpasted(typed)) && (want[i].Bytes > 600 || got[i] == typed)
				}
				if !ok {
					t.Errorf("session %s: stored prompts\n%s\nwant\n%s", sid, quoteAll(got), quoteTurns(want))
				}
			}
			src, _ := backfill.SourceFor(hosts.ClaudeCode)
			files, _ := src.Find(filepath.Join(rec.dir, "projects"))
			for _, f := range files {
				sess, err := mem.Session(ctx, f.SessionID)
				if err != nil {
					continue // no prompt
				}
				prompts, _ := mem.Prompts(ctx, sess.ID)
				for _, p := range prompts {
					if raw, _ := json.Marshal(p.Text); !slices.Contains([]hook.PromptKind{hook.PromptPerson}, kindOf(raw)) || strings.HasPrefix(p.Text, "<") {
						t.Errorf("session %s stores %.60q as a prompt", f.SessionID, p.Text)
					}
				}
			}

			// Tool runs: each in its session, under its turn's prompt.
			for _, tool := range rec.Tools {
				if privacy.Skipped(tool.Name, privacy.DefaultSkipTools) {
					continue
				}
				sid := runOf[tool.Run]
				prompt, found := 0, false
				for _, c := range calls[sid] {
					switch p := c.Params.(type) {
					case *memory.UserPromptParams:
						prompt++
					case *memory.ToolUseParams:
						if p.ToolUseID == tool.ID {
							found = true
							if want := rec.ordinal(tool.Run, tool.Turn); tool.Turn >= 0 && prompt != want {
								t.Errorf("%s %s (%s turn %d, sub-agent %v) is under prompt %d, want %d", tool.Name, tool.ID, tool.Run, tool.Turn, tool.Sidechain, prompt, want)
							}
						}
					}
					if found {
						break
					}
				}
				if !found {
					t.Errorf("%s %s (%s turn %d, sub-agent %v) was not back-filled in session %s", tool.Name, tool.ID, tool.Run, tool.Turn, tool.Sidechain, sid)
				}
			}

			// Nothing twice (a copied turn's tool runs are not sent again),
			// nothing the model did not run.
			run := map[string]bool{}
			for _, tool := range rec.Tools {
				run[tool.ID] = true
			}
			sent := map[string]int{}
			for _, cs := range calls {
				for _, c := range cs {
					if p, ok := c.Params.(*memory.ToolUseParams); ok {
						if sent[p.ToolUseID]++; sent[p.ToolUseID] == 2 {
							t.Errorf("%s %s is back-filled twice", p.ToolName, p.ToolUseID)
						}
						if !run[p.ToolUseID] {
							t.Errorf("%s %s is back-filled, but the model never ran it", p.ToolName, p.ToolUseID)
						}
					}
				}
			}

			// Search finds the prompt of each turn.
			for _, run := range rec.Runs {
				sid := runOf[run.Label]
				for i, tu := range run.Turns {
					if !tu.person() {
						continue
					}
					query := strings.TrimSpace(markerRE.ReplaceAllString(tu.Prompt, ""))
					if len(query) > 200 {
						query = query[:200]
					}
					if !foundBySearch(t, mem, query, strings.TrimSpace(tu.Prompt), sid) {
						t.Errorf("search %.60q does not find prompt %d of session %s (%s)", query, rec.ordinal(run.Label, i), sid, run.Label)
					}
				}
			}

			// No image data in any record.
			var export bytes.Buffer
			if _, err := mem.Export(ctx, &export, false); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(export.Bytes(), []byte("iVBORw0KGgo")) {
				t.Error("a record holds a PNG's base64")
			}
		})
	}
}

// pastedRE matches the tags 2.1.330 puts around a paste in a prompt.
var pastedRE = regexp.MustCompile(`</?pasted_content[^>]*>`)

// unpasted is a prompt without paste tags, its white space collapsed.
func unpasted(s string) string {
	return strings.Join(strings.Fields(pastedRE.ReplaceAllString(s, "")), " ")
}

func kindOf(raw json.RawMessage) hook.PromptKind {
	_, k := hook.PersonPrompt(raw, false)
	return k
}

// foundBySearch reports whether a search for query returns, in its first
// ten hits, an observation made in a turn of that prompt. The same
// command run with the same outcome again (in another session, or in a
// later turn of this one) is one observation, seen twice, whose request
// is the first turn's: such a hit of this session counts too.
func foundBySearch(t *testing.T, mem *store.Memory, query, prompt, sid string) bool {
	t.Helper()
	ctx := context.Background()
	res, err := mem.Search(ctx, memory.SearchParams{Query: query, Project: "will-it-rain", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	if len(ids) == 0 {
		return false
	}
	obs, err := mem.Get(ctx, memory.IDsParams{IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs.Observations {
		if strings.HasPrefix(unpasted(o.Request), unpasted(prompt)) || o.ContentSessionID == sid && o.Count > 1 {
			return true
		}
	}
	return false
}

func quoteAll(ss []string) string {
	var b strings.Builder
	for _, s := range ss {
		if len(s) > 80 {
			s = s[:80] + "…"
		}
		b.WriteString("  " + strconv.Quote(s) + "\n")
	}
	return b.String()
}

func quoteTurns(ts []recTurn) string {
	var ss []string
	for _, t := range ts {
		ss = append(ss, strings.TrimSpace(t.Prompt))
	}
	return quoteAll(ss)
}

// hookLine is a line of a recording's hooks.jsonl: a payload the CLI sent
// a hook, and how long the session's transcript was when it did.
type hookLine struct {
	TranscriptSize int64           `json:"transcript_size"`
	Payload        json.RawMessage `json:"payload"`
}

// TestRecordedBackfillEqualsLive: for every recorded version that runs
// hooks, what the live hooks sent (the recorded payloads, through
// Translate, the Stop reading the transcript as long as it was then) and
// what the back-fill rebuilds from the transcripts make the same calls,
// session by session: the same prompts in the same order, under each the
// same tool runs (inputs and responses) and the same turn ends. Not
// compared, as inherent: event keys and times, tool_use ids (before 2.1
// the hook payloads have none), SessionStart's source
// (a back-fill starts each session once), SessionEnd (1.0 has none; a
// back-fill's reason is "other"), and the order of tool runs within a
// turn (a background sub-agent's hooks fire as it runs, the back-fill
// reads its lines by time). Where a version's hooks miss what its
// transcript has, the back-fill has more, and that is left out of the
// comparison: before 2.0.76 no hook runs for a tool that failed, and
// before 2.1 a Stop reads the turn's answer from a transcript that may
// not hold it yet (turnView).
func TestRecordedBackfillEqualsLive(t *testing.T) {
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	for _, rec := range recordings(t) {
		raw, err := os.ReadFile(filepath.Join(rec.dir, "hooks.jsonl"))
		if errors.Is(err, os.ErrNotExist) {
			t.Logf("%s: no hook payloads (the version runs no hooks)", rec.Version)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Run(rec.Version, func(t *testing.T) {
			projects := filepath.Join(rec.dir, "projects")
			tmp := t.TempDir()
			// cut is the transcript as it was when a hook ran: its first
			// size bytes (Claude Code only appends to it).
			cut := func(path string, size int64) string {
				local := filepath.Join(projects, strings.TrimPrefix(path, "/home/dev/.claude/projects/"))
				b, err := os.ReadFile(local)
				if err != nil {
					return local // not written yet
				}
				if size >= 0 && size < int64(len(b)) {
					b = b[:size]
				}
				name := filepath.Join(tmp, strconv.Itoa(len(b))+"-"+filepath.Base(local))
				if err := os.WriteFile(name, b, 0o600); err != nil {
					t.Fatal(err)
				}
				return name
			}
			live := map[string][]backfill.Call{}
			answers, failures := true, false
			opened := map[string]string{}          // by session, what the last UserPromptSubmit got
			early := map[*memory.StopParams]bool{} // Stops that ran before the transcript held their turn
			sub := map[string]bool{}               // the sub-agents' tool runs
			for _, tool := range rec.Tools {
				sub[tool.ID] = tool.Sidechain
			}
			for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
				var h hookLine
				var p hosts.Payload
				if err := json.Unmarshal(line, &h); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(h.Payload, &p); err != nil {
					t.Fatal(err)
				}
				switch p.HookEventName {
				case hosts.EventUserPromptSubmit:
					opened[p.SessionID] = strings.TrimSpace(p.Prompt)
				case hosts.EventStop:
					answers = answers && p.LastAssistantMessage != ""
				case hosts.EventPostToolUseFailure:
					failures = true
				}
				// The hook sends no texts: the daemon reads the turn's from
				// the transcript's end at Stop (memory/store's turnTexts), as
				// long as the transcript was when the hook ran.
				method, params, err := hook.Translate(&p, hook.TranslateOptions{EventKey: "live"})
				switch {
				case errors.Is(err, hook.ErrUnhandledEvent), errors.Is(err, hook.ErrNotPrompt), errors.Is(err, hook.ErrSkippedTool):
					continue
				case err != nil:
					t.Fatalf("translate %s: %v", line, err)
				}
				if pp, ok := params.(*memory.StopParams); ok && pp.TranscriptPath != "" {
					lt, err := transcript.ReadLastTurn(cut(pp.TranscriptPath, h.TranscriptSize), 0)
					if err != nil && !errors.Is(err, os.ErrNotExist) {
						t.Fatal(err)
					}
					pp.Texts = lt.Texts
					// The line that opened the turn was not in the
					// transcript yet when its Stop ran: the daemon reads
					// the turn before's texts.
					raw, _ := json.Marshal(opened[p.SessionID])
					switch _, kind := hook.PersonPrompt(raw, false); {
					case kind == hook.PromptInjected:
						early[pp] = lt.Prompt != ""
					case kind == hook.PromptPerson && !strings.HasPrefix(opened[p.SessionID], "/"):
						early[pp] = lt.Prompt != opened[p.SessionID]
					}
				}
				live[p.SessionID] = append(live[p.SessionID], backfill.Call{Event: p.HookEventName, Method: method, Params: params})
			}

			src, _ := backfill.SourceFor(hosts.ClaudeCode)
			files, err := src.Find(projects)
			if err != nil {
				t.Fatal(err)
			}
			back := map[string][]backfill.Call{}
			for _, f := range files {
				if _, err := src.Backfill(f, backfill.Options{}, func(c backfill.Call) error {
					back[f.SessionID] = append(back[f.SessionID], c)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			for sid, calls := range live {
				if !slices.ContainsFunc(calls, func(c backfill.Call) bool { return c.Event == hosts.EventUserPromptSubmit }) {
					continue // started, never prompted: nothing to back-fill
				}
				if !failures {
					// Before 2.0.76 no hook runs when a tool fails: what
					// live lost, the back-fill has.
					back[sid] = slices.DeleteFunc(back[sid], func(c backfill.Call) bool { return c.Event == hosts.EventPostToolUseFailure })
				}
				textOnly := map[string]bool{}
				for _, c := range back[sid] {
					if p, ok := c.Params.(*memory.ToolUseParams); ok && sub[p.ToolUseID] && bytes.HasPrefix(p.ToolResponse, []byte(`"`)) {
						textOnly[p.ToolUseID] = true
					}
				}
				stops, lagged := unwritten(calls, back[sid], answers, early)
				if lagged > 0 {
					t.Logf("session %s: %d of %d Stops ran before the transcript held all of their turn's texts; those texts are not compared", sid, lagged, stops)
				}
				got, want := turnView(back[sid], answers, textOnly), turnView(calls, answers, textOnly)
				if !slices.Equal(got, want) {
					t.Errorf("session %s: the back-fill differs from live:\n%s", sid, viewDiff(want, got))
				}
			}
		})
	}
}

// turnView is what a session's calls store, turn by turn: the prompt,
// the tool runs under it (sorted: a background sub-agent's hooks fire as
// it runs, the back-fill reads its lines by time), its turn ends in
// order.
//
// With answers false the turn ends' answers are left out: before 2.1 the
// Stop payload has no last_assistant_message, and the hook reads it from
// the transcript, where the turn's last answer is not always written yet
// when Stop runs (the live record keeps an earlier text of the turn).
// Each turn end shows the texts the store keeps of it: those the daemon
// reads from the transcript at a live Stop, or the back-fill sends, the
// answer last (withAnswer, as memory/store ends them), unless answers are
// left out: then so is a last text that explains no call. The responses of the tools in textOnly are left out: 2.1.30 keeps no
// toolUseResult in a sub-agent's transcript, only the text the model got.
func turnView(calls []backfill.Call, answers bool, textOnly map[string]bool) []string {
	var out, tools, stops []string
	n := 0
	flush := func() {
		slices.Sort(tools)
		out = append(append(out, tools...), stops...)
		tools, stops = nil, nil
	}
	short := func(s string) string {
		if len(s) > 300 {
			return s[:300] + "…"
		}
		return s
	}
	started := false
	for _, c := range calls {
		switch p := c.Params.(type) {
		case *memory.SessionStartParams:
			if !started {
				out = append(out, "start cwd="+p.Cwd)
				started = true
			}
		case *memory.UserPromptParams:
			flush()
			n++
			out = append(out, strconv.Itoa(n)+" prompt "+strconv.Quote(short(strings.TrimSpace(p.Prompt))))
		case *memory.ToolUseParams:
			response := short(string(p.ToolResponse))
			if textOnly[p.ToolUseID] {
				response = "(the text the model got)"
			}
			tools = append(tools, strconv.Itoa(n)+" tool "+p.ToolName+" "+short(schemaInput(p.ToolInput))+" → "+response)
		case *memory.StopParams:
			line := strconv.Itoa(n) + " stop"
			if answers {
				line += " / " + strconv.Quote(short(p.LastAssistantMessage))
			}
			texts := withAnswer(p.Texts, p.LastAssistantMessage)
			if n := len(texts); !answers && n > 0 && len(texts[n-1].ToolUseIDs) == 0 {
				texts = texts[:n-1] // the answer, which a live Stop may not find yet
			}
			for _, t := range texts {
				line += "\n    text " + strconv.Quote(short(t.Text)) + " before " + strconv.Itoa(len(t.ToolUseIDs)) + " calls"
			}
			stops = append(stops, line)
		}
	}
	flush()
	return out
}

// unwritten finds the live Stops that ran before the transcript held
// their turn (early: the line that opened it was not there yet), or all
// of its texts (what the daemon read is the start of what the back-fill
// reads from the whole transcript), and gives each and its back-fill
// counterpart the same note for texts: 2.1.30 runs a turn's hooks before
// it writes the turn's lines. Everything else of theirs is compared.
func unwritten(live, back []backfill.Call, answers bool, early map[*memory.StopParams]bool) (stops, lagged int) {
	stopsOf := func(calls []backfill.Call) []*memory.StopParams {
		var out []*memory.StopParams
		for _, c := range calls {
			if p, ok := c.Params.(*memory.StopParams); ok {
				out = append(out, p)
			}
		}
		return out
	}
	ls, bs := stopsOf(live), stopsOf(back)
	if len(ls) != len(bs) {
		return len(ls), 0 // the views differ anyway
	}
	for i, l := range ls {
		b := bs[i]
		whole := b.Texts
		if n := len(whole); !answers && n > 0 && len(whole[n-1].ToolUseIDs) == 0 {
			whole = whole[:n-1] // the answer: turnView leaves it out
		}
		prefix := len(l.Texts) < len(whole) && slices.EqualFunc(l.Texts, whole[:len(l.Texts)], func(x, y memory.TurnText) bool {
			return x.Text == y.Text && slices.Equal(x.ToolUseIDs, y.ToolUseIDs)
		})
		if early[l] || prefix {
			l.Texts, b.Texts = nil, nil
			l.LastAssistantMessage = "(not all written when the Stop ran)"
			b.LastAssistantMessage = l.LastAssistantMessage
			lagged++
		}
	}
	return len(ls), lagged
}

// withAnswer ends a turn's texts with its answer unless they end with it,
// as memory/store does at a turn's end.
func withAnswer(texts []memory.TurnText, answer string) []memory.TurnText {
	answer = strings.TrimSpace(answer)
	if n := len(texts); answer == "" || n > 0 && strings.TrimSpace(texts[n-1].Text) == answer {
		return texts
	}
	return append(texts[:len(texts):len(texts)], memory.TurnText{Text: answer})
}

// schemaInput is a tool's input without the keys a version's schema may
// not know: the hook gets the input as the tool's schema read it (2.0.14
// drops Task's run_in_background), the transcript what the model sent.
func schemaInput(raw json.RawMessage) string {
	var in map[string]json.RawMessage
	if json.Unmarshal(raw, &in) != nil {
		return string(raw)
	}
	delete(in, "run_in_background")
	b, _ := json.Marshal(in)
	return string(b)
}

// viewDiff shows two views side by side where they differ.
func viewDiff(want, got []string) string {
	var b strings.Builder
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		mark := "  "
		if w != g {
			mark = "≠ "
		}
		b.WriteString(mark + "live: " + w + "\n" + mark + "back: " + g + "\n")
	}
	return b.String()
}

// posixPathRE matches the scrubbed home and what follows it in a
// transcript's JSON: a path to rewrite as Windows writes it.
var posixPathRE = regexp.MustCompile(`/home/dev((?:/[A-Za-z0-9._-]+)*)`)

// TestRecordedTranscriptsOnWindows back-fills each recording as if it had
// been written on Windows (every path C:\Users\dev\…, the project folder
// C--Users-dev-code-will-it-rain) on this machine: every session is still
// the project will-it-rain, and the files its observations name are
// relative to it, with forward slashes.
func TestRecordedTranscriptsOnWindows(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows paths are this system's own here")
	}
	t.Setenv("MNEMO_SKIP_TOOLS", "")
	for _, rec := range recordings(t) {
		t.Run(rec.Version, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "projects")
			src := filepath.Join(rec.dir, "projects")
			err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(src, path)
				rel = strings.ReplaceAll(rel, "-home-dev-code-will-it-rain", "C--Users-dev-code-will-it-rain")
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				b = posixPathRE.ReplaceAllFunc(b, func(m []byte) []byte {
					return []byte(`C:\\Users\\dev` + strings.ReplaceAll(string(m[len("/home/dev"):]), "/", `\\`))
				})
				if err := os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755); err != nil {
					return err
				}
				return os.WriteFile(filepath.Join(root, rel), b, 0o644)
			})
			if err != nil {
				t.Fatal(err)
			}
			mem, err := store.Open(t.Context(), store.Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			calls := backfillInto(t, mem, root)
			ctx := context.Background()
			var files []string
			for sid := range calls {
				sess, err := mem.Session(ctx, sid)
				if err != nil {
					t.Fatal(err)
				}
				if sess.Project != "will-it-rain" {
					t.Errorf("session %s (cwd %s) is filed under project %q", sid, sess.Cwd, sess.Project)
				}
				res, err := mem.SessionRecords(ctx, memory.SessionParams{ContentSessionID: sid})
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range res.Observations {
					files = append(files, o.Files...)
				}
			}
			for _, f := range files {
				if strings.ContainsAny(f, `\:`) {
					t.Errorf("an observation names the file %q", f)
				}
			}
			if !slices.Contains(files, "src/forecast.py") {
				t.Errorf("no observation names src/forecast.py: %q", files)
			}
		})
	}
}
