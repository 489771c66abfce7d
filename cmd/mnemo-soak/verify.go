//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/hook"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
)

// report is what a run did and found.
type report struct {
	o          options
	runID      string
	hooks      map[string]*stageCount // by event
	hookRuns   int
	killed     int     // hook runs killed before they exited (-kill-hooks)
	killedKept int     // of those, the ones whose event was stored (once)
	journaled  int     // hook calls that missed the daemon and were journaled (hook.log)
	spooled    int     // hook calls the hooks spooled (hook.log)
	unspooled  int     // hook calls neither delivered nor spooled (hook.log)
	ingested   int     // spooled calls the daemons ingested (daemon.log)
	syncLag    float64 // the longest a daemon took to sync an acknowledged write, ms
	syncStart  float64 // the longest a write waited for its sync to start, ms
	syncMax    float64 // the longest one sync took, ms
	ordered    int     // sessions whose tool events were checked in order
	kills      int
	restarts   int
	freezes    int
	daemons    int // daemons that served (daemon.log)
	serves     int
	searches   struct{ ok, failed int }
	editor     struct{ acked, unacked, ackedStored, unackedStored int }
	stored     struct{ sessions, prompts, observations, summaries int }
	markers    struct{ tool, prompt, stop int }
	opened     int // content sessions the clients opened
	ended      int
	completed  int
	drain      time.Duration
	steady     *steadyResult // the steady mode's numbers
	violations []string
}

// stageCount is the hook runs of one event.
type stageCount struct {
	runs, late, overBudget int
	max                    time.Duration
	budget, deadline       time.Duration
}

func (r *report) violate(format string, args ...any) {
	if len(r.violations) < 200 {
		r.violations = append(r.violations, fmt.Sprintf(format, args...))
	} else if len(r.violations) == 200 {
		r.violations = append(r.violations, "… (more violations not listed)")
	}
}

// verify restarts the daemon (it ingests the spool at start), waits for
// the queue to drain, exports the memory and checks it against what the
// clients sent.
func (s *soak) verify(ctx context.Context) (*report, error) {
	rep := &report{o: s.o, runID: s.runID, hooks: map[string]*stageCount{}, kills: s.kills, restarts: s.restarts, freezes: s.freezes, serves: s.serves, searches: s.searches}
	if _, err := s.mnemo(ctx, "daemon", "stop"); err != nil {
		return nil, err
	}
	start := time.Now()
	if _, err := s.mnemo(ctx, "status"); err != nil {
		return nil, err
	}
	var st memory.Status
	for {
		st = memory.Status{}
		out, err := s.mnemo(ctx, "status", "--json")
		if err == nil {
			err = json.Unmarshal([]byte(out), &st)
		}
		if err == nil && st.Counts.Queued == 0 && (st.Journal == nil || st.Journal.Unread == 0) {
			break
		}
		if time.Since(start) > s.o.drain {
			return nil, fmt.Errorf("the queue did not drain within %s: %+v (%v)", s.o.drain, st.Counts, err)
		}
		sleep(ctx, 250*time.Millisecond)
	}
	rep.drain = time.Since(start)
	if left := spoolLeft(hook.SpoolPath(s.home)); left != "" {
		rep.violate("the spool was not ingested by the restarted daemon: %s", left)
	}
	s.noteSync(st)
	rep.syncLag, rep.syncStart, rep.syncMax = s.syncLag, s.syncStart, s.syncMax
	// The window holds when one sync takes the disk at most half of it
	// (a write may wait for the sync running, then for its own).
	if st.Sync != nil && rep.syncLag > st.Sync.WindowMs && rep.syncMax <= st.Sync.WindowMs/2 {
		rep.violate("a daemon synced an acknowledged write %.1f ms after it, over the %.0f ms window, though no sync took over %.1f ms", rep.syncLag, st.Sync.WindowMs, rep.syncMax)
	}

	export := filepath.Join(s.root, "export.jsonl")
	if _, err := s.mnemo(ctx, "export", export); err != nil {
		return nil, err
	}
	recs, err := readExport(export)
	if err != nil {
		return nil, err
	}
	doc, err := call(ctx, s, time.Minute, (*client.Client).Doctor)
	if err != nil {
		return nil, fmt.Errorf("mnemo/doctor: %w", err)
	}
	for _, p := range doc.Problems {
		rep.violate("mnemo doctor: [%s] %s", p.Check, p.Detail)
	}

	s.checkHooks(rep)
	s.checkStore(rep, recs)
	s.readLogs(rep)
	return rep, nil
}

// checkHooks checks every hook run: exit 0, a valid answer, in time.
func (s *soak) checkHooks(rep *report) {
	rep.hookRuns = len(s.hooks)
	rep.opened = len(s.sessions)
	for _, h := range s.hooks {
		if h.killed {
			rep.killed++
			continue
		}
		stage, _ := hosts.StageOf(hosts.ClaudeCode, h.event)
		c := rep.hooks[h.event]
		if c == nil {
			// The hook's own budget, plus slack for process start and exit on
			// a loaded machine, but never past Claude Code's timeout, at which
			// it kills the hook.
			c = &stageCount{budget: stage.Budget, deadline: min(stage.Budget+s.o.slack, time.Duration(stage.Timeout)*time.Second)}
			rep.hooks[h.event] = c
		}
		c.runs++
		c.max = max(c.max, h.elapsed)
		if h.elapsed > stage.Budget {
			c.overBudget++
		}
		if h.elapsed > c.deadline {
			c.late++
			rep.violate("%s hook of %s took %s, over its deadline %s%s", h.event, h.session, h.elapsed.Round(time.Millisecond), c.deadline, s.hookLog(h))
		}
		if h.err != nil || h.code != 0 {
			rep.violate("%s hook of %s: exit %d, %v", h.event, h.session, h.code, h.err)
			continue
		}
		var answer hosts.Output
		err := json.Unmarshal([]byte(h.out), &answer)
		switch ctx := answer.HookSpecificOutput; {
		case err != nil:
			rep.violate("%s hook of %s printed %q, not a JSON answer", h.event, h.session, h.out)
		case h.event == hosts.EventSessionStart:
		case ctx != nil && stage.Context:
			// A prompt's recall of the earlier sessions' work.
			if ctx.HookEventName != h.event || !strings.HasPrefix(ctx.AdditionalContext, "<"+memory.ContextTag) {
				rep.violate("%s hook of %s printed %q, want {} or a %s's context", h.event, h.session, h.out, h.event)
			}
		case strings.TrimSpace(h.out) != "{}":
			rep.violate("%s hook of %s printed %q, want {}", h.event, h.session, h.out)
		}
	}
}

// markerRE matches the markers the clients put in their events: a tool
// event's (-t<turn>-e<n>), a prompt's (-p<turn>), a Stop's (-s<turn>), an
// editor open's (-o<n>) or save's (-w<n>).
var markerRE = regexp.MustCompile(`soak-[0-9a-f]+-(?:cc-\d+-\d+-(t\d+-e|p|s)\d+|editor-\d+-([ow])\d+)`)

// markersIn returns the distinct markers of one kind ("t", "p", "s" or
// "editor") in texts.
func markersIn(kind string, texts ...string) map[string]bool {
	out := map[string]bool{}
	for _, t := range texts {
		for _, m := range markerRE.FindAllStringSubmatch(t, -1) {
			k := m[1]
			if strings.HasPrefix(k, "t") {
				k = "t"
			}
			if m[2] != "" {
				k = "editor"
			}
			if k == kind {
				out[m[0]] = true
			}
		}
	}
	return out
}

// stored is where a tool event's marker was found: its observation.
type storedAt struct {
	id     uint64
	prompt int
}

// turnRE reads the turn and the tool event's number out of a marker.
var turnRE = regexp.MustCompile(`-t(\d+)-e(\d+)$`)

// checkStore counts every marker in the export against what was sent: an
// acknowledged event stored once, an unacknowledged one (its hook killed)
// at most once; and a session's tool events stored in the order they
// happened, each under the prompt of its turn (when every prompt of the
// session was acknowledged).
func (s *soak) checkStore(rep *report, recs []memory.Record) {
	stored := map[string]int{} // marker → records holding it
	where := map[string]storedAt{}
	sessions := map[string]int{}
	status := map[string]memory.SessionStatus{}
	for _, r := range recs {
		switch {
		case r.Session != nil:
			rep.stored.sessions++
			sessions[r.Session.ContentSessionID]++
			status[r.Session.ContentSessionID] = r.Session.Status
		case r.Prompt != nil:
			rep.stored.prompts++
			for m := range markersIn("p", r.Prompt.Text) {
				stored[m]++
			}
		case r.Observation != nil:
			rep.stored.observations++
			o := r.Observation
			texts := append([]string{o.Title, o.Subtitle}, o.Facts...)
			texts = append(texts, o.Files()...)
			for _, kind := range []string{"t", "editor"} {
				for m := range markersIn(kind, texts...) {
					stored[m]++
					where[m] = storedAt{o.ID, o.PromptNumber}
				}
			}
		case r.Summary != nil:
			rep.stored.summaries++
			// The agent may put the last message in any field.
			sum := r.Summary
			for m := range markersIn("s", sum.Request, sum.Investigated, sum.Learned, sum.Completed, sum.NextSteps, sum.Notes) {
				stored[m]++
			}
		}
	}
	for csid, n := range sessions {
		if n > 1 {
			rep.violate("content session %s stored %d times", csid, n)
		}
	}
	for _, h := range s.hooks {
		if sessions[h.session] == 0 && !h.killed {
			rep.violate("session %s (hooks) was never stored", h.session)
			sessions[h.session] = -1 // once
		}
		if h.marker == "" {
			continue
		}
		switch h.event {
		case hosts.EventPostToolUse:
			rep.markers.tool++
		case hosts.EventUserPromptSubmit:
			rep.markers.prompt++
		case hosts.EventStop:
			rep.markers.stop++
		}
		n := stored[h.marker]
		switch {
		case h.killed && n > 1:
			rep.violate("%s event %s (its hook killed) stored %d times, want at most once", h.event, h.marker, n)
		case h.killed:
			rep.killedKept += n
		case n != 1:
			rep.violate("%s event %s stored %d times, want once", h.event, h.marker, n)
		}
	}
	s.checkOrder(rep, where)
	for sid := range s.ended {
		rep.ended++
		if status[sid] == memory.StatusCompleted {
			rep.completed++
		} else {
			rep.violate("session %s ran SessionEnd but is %q", sid, status[sid])
		}
	}
	for _, e := range s.edits {
		n := stored[e.marker]
		if e.acked {
			if sessions[e.session] == 0 {
				rep.violate("editor session %s acknowledged events but was never stored", e.session)
				sessions[e.session] = -1 // once
			}
			rep.editor.acked++
			if n > 0 {
				rep.editor.ackedStored++
			}
			if n != 1 {
				rep.violate("acknowledged editor %s %s stored %d times, want once", e.kind, e.marker, n)
			}
			continue
		}
		rep.editor.unacked++
		if n > 0 {
			rep.editor.unackedStored++
		}
		if n > 1 {
			rep.violate("unacknowledged editor %s %s stored %d times, want at most once", e.kind, e.marker, n)
		}
	}
}

// checkOrder checks that each session's tool events were stored in the
// order their hooks ran (their observations' ids rise), and under the
// prompt of their turn, where every prompt of the session was
// acknowledged: a tool event taken after the next prompt would carry that
// prompt's number.
func (s *soak) checkOrder(rep *report, where map[string]storedAt) {
	type event struct {
		marker string
		turn   int
		at     storedAt
	}
	bySession := map[string][]event{}
	promptKilled := map[string]bool{}
	for _, h := range s.hooks {
		if h.event == hosts.EventUserPromptSubmit && h.killed {
			promptKilled[h.session] = true
		}
		if h.event != hosts.EventPostToolUse || h.killed || h.marker == "" {
			continue
		}
		at, ok := where[h.marker]
		m := turnRE.FindStringSubmatch(h.marker)
		if !ok || m == nil {
			continue // reported as not stored
		}
		turn, _ := strconv.Atoi(m[1])
		bySession[h.session] = append(bySession[h.session], event{h.marker, turn, at})
	}
	for sid, evs := range bySession {
		rep.ordered++
		for i, e := range evs {
			if i > 0 && e.at.id <= evs[i-1].at.id {
				rep.violate("session %s: tool event %s stored before %s, which came first", sid, e.marker, evs[i-1].marker)
			}
			if !promptKilled[sid] && e.at.prompt != e.turn {
				rep.violate("session %s: tool event %s of turn %d stored under prompt %d", sid, e.marker, e.turn, e.at.prompt)
			}
		}
	}
}

// readLogs counts what the hooks spooled and what the daemons ingested.
func (s *soak) readLogs(rep *report) {
	for _, name := range []string{"hook.log.1", "hook.log"} {
		eachLine(filepath.Join(s.home, "logs", name), func(line string) {
			switch {
			case strings.Contains(line, `msg="not delivered; journaled"`):
				rep.journaled++
			case strings.Contains(line, `msg="not delivered, not journaled; spooled"`), strings.Contains(line, `msg="not delivered; spooled"`):
				rep.spooled++
			case strings.Contains(line, `msg="not delivered, and neither journaled nor spooled"`), strings.Contains(line, `msg="not delivered, and not spooled"`):
				rep.unspooled++
				rep.violate("a hook could not journal nor spool: %s", line)
			}
		})
	}
	eachLine(filepath.Join(s.home, "logs", "daemon.log"), func(line string) {
		switch {
		case strings.Contains(line, `msg="daemon serving"`):
			rep.daemons++
		case strings.Contains(line, `msg="ingested the hook spool"`):
			if _, v, ok := strings.Cut(line, "events="); ok {
				n, _ := strconv.Atoi(strings.Fields(v)[0])
				rep.ingested += n
			}
		}
	})
}

// hookLog returns what hook.log says about one hook run, for a violation.
func (s *soak) hookLog(h hookRun) string {
	var lines []string
	want := []string{"event=" + h.event + " ", "session=" + h.session + " "}
	if h.event == hosts.EventPostToolUse {
		want = append(want, "toolUseId=toolu_"+strings.ReplaceAll(h.marker, "-", "_")+" ")
	}
	for _, name := range []string{"hook.log.1", "hook.log"} {
		eachLine(filepath.Join(s.home, "logs", name), func(line string) {
			if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(line, w) }) {
				lines = append(lines, line)
			}
		})
	}
	if len(lines) == 0 {
		return " (hook.log has nothing on it: it was delivered)"
	}
	return "\n      hook.log: " + strings.Join(lines, "\n      hook.log: ")
}

func eachLine(path string, fn func(string)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
}

// spoolLeft describes spool files that still hold entries, or "".
func spoolLeft(path string) string {
	des, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return ""
	}
	var left []string
	for _, de := range des {
		if fi, err := de.Info(); err == nil && fi.Size() > 0 && strings.HasPrefix(de.Name(), filepath.Base(path)) {
			left = append(left, fmt.Sprintf("%s (%d bytes)", de.Name(), fi.Size()))
		}
	}
	return strings.Join(left, ", ")
}

func readExport(path string) ([]memory.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []memory.Record
	dec := json.NewDecoder(f)
	for {
		var r memory.Record
		if err := dec.Decode(&r); err == io.EOF {
			return recs, nil
		} else if err != nil {
			return nil, fmt.Errorf("read the export: %w", err)
		}
		recs = append(recs, r)
	}
}

// print writes the counts and the violations.
func (r *report) print(w io.Writer) {
	if r.steady != nil {
		fmt.Fprintf(w, "mnemo-soak -steady: seed %d, %d hook agents, no faults\n\n", r.o.seed, r.o.agents)
		r.steady.print(w, r.o.tolerance)
	} else {
		fmt.Fprintf(w, "mnemo-soak: %s of load, seed %d, %d hook agents\n\n", r.o.duration, r.o.seed, r.o.agents)
	}
	fmt.Fprintf(w, "faults      %d kill -9 of the daemon (%d restarted at once, the rest by the next client), %d freezes (SIGSTOP 1.5-3 s); %d daemons served\n", r.kills, r.restarts, r.freezes, r.daemons)
	fmt.Fprintf(w, "hooks       %d runs, %d of them killed at a random moment (%d of their events stored, once each); %d calls that missed the daemon journaled, %d spooled (%d ingested); %d neither\n",
		r.hookRuns, r.killed, r.killedKept, r.journaled, r.spooled, r.ingested, r.unspooled)
	events := make([]string, 0, len(r.hooks))
	for e := range r.hooks {
		events = append(events, e)
	}
	slices.SortFunc(events, func(a, b string) int { return stageIndex(a) - stageIndex(b) })
	for _, e := range events {
		c := r.hooks[e]
		fmt.Fprintf(w, "  %-17s %5d runs, slowest %7s, %d over the hook's %s budget, %d over the %s deadline\n", e, c.runs, c.max.Round(time.Millisecond), c.overBudget, c.budget, c.late, c.deadline)
	}
	fmt.Fprintf(w, "editor      %d mnemo serve processes; %d acknowledged events (%d stored), %d unacknowledged (%d stored)\n",
		r.serves, r.editor.acked, r.editor.ackedStored, r.editor.unacked, r.editor.unackedStored)
	fmt.Fprintf(w, "searches    %d answered, %d failed (daemon killed under them)\n", r.searches.ok, r.searches.failed)
	fmt.Fprintf(w, "markers     %d tool events, %d prompts, %d stops sent by hooks, each acknowledged one checked stored exactly once; %d sessions' tool events checked in order, under their turn's prompt\n", r.markers.tool, r.markers.prompt, r.markers.stop, r.ordered)
	fmt.Fprintf(w, "sync        an acknowledged write synced at most %.1f ms after it (window %s); its sync started at most %.1f ms after it; the longest sync took the disk %.1f ms (daemons never frozen)\n", r.syncLag, syncWindow, r.syncStart, r.syncMax)
	fmt.Fprintf(w, "sessions    %d opened by the clients; %d ended by SessionEnd, %d of them completed\n", r.opened, r.ended, r.completed)
	fmt.Fprintf(w, "stored      %d sessions, %d prompts, %d observations, %d summaries (queue drained %s after the final restart)\n",
		r.stored.sessions, r.stored.prompts, r.stored.observations, r.stored.summaries, r.drain.Round(time.Millisecond))
	if len(r.violations) == 0 {
		fmt.Fprintln(w, "\nOK: every acknowledged event stored exactly once and in order, no unacknowledged one twice, no session duplicated, every hook in time, every sync in its window")
		return
	}
	fmt.Fprintf(w, "\nFAILED: %d violations\n", len(r.violations))
	for _, v := range r.violations {
		fmt.Fprintln(w, "  "+v)
	}
}

func stageIndex(event string) int {
	for i, s := range hosts.Stages {
		if s.Event == event {
			return i
		}
	}
	return len(hosts.Stages)
}

// syncWindow is the group sync's window, as docs/architecture.md §2 says.
const syncWindow = "100 ms"
