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
	spooled    int // hook calls the hooks spooled (hook.log)
	unspooled  int // hook calls neither delivered nor spooled (hook.log)
	ingested   int // spooled calls the daemons ingested (daemon.log)
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
	for {
		var st memory.Status
		out, err := s.mnemo(ctx, "status", "--json")
		if err == nil {
			err = json.Unmarshal([]byte(out), &st)
		}
		if err == nil && st.Counts.Queued == 0 {
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

// checkStore counts every marker in the export against what was sent.
func (s *soak) checkStore(rep *report, recs []memory.Record) {
	stored := map[string]int{} // marker → records holding it
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
		if sessions[h.session] == 0 {
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
		if n := stored[h.marker]; n != 1 {
			rep.violate("%s event %s stored %d times, want once", h.event, h.marker, n)
		}
	}
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

// readLogs counts what the hooks spooled and what the daemons ingested.
func (s *soak) readLogs(rep *report) {
	for _, name := range []string{"hook.log.1", "hook.log"} {
		eachLine(filepath.Join(s.home, "logs", name), func(line string) {
			switch {
			case strings.Contains(line, `msg="not delivered; spooled"`):
				rep.spooled++
			case strings.Contains(line, `msg="not delivered, and not spooled"`):
				rep.unspooled++
				rep.violate("a hook could not spool: %s", line)
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
	fmt.Fprintf(w, "hooks       %d runs; %d calls spooled by the hooks, %d spooled calls ingested by daemons; %d neither delivered nor spooled\n", r.hookRuns, r.spooled, r.ingested, r.unspooled)
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
	fmt.Fprintf(w, "markers     %d tool events, %d prompts, %d stops sent by hooks, each checked stored exactly once\n", r.markers.tool, r.markers.prompt, r.markers.stop)
	fmt.Fprintf(w, "sessions    %d opened by the clients; %d ended by SessionEnd, %d of them completed\n", r.opened, r.ended, r.completed)
	fmt.Fprintf(w, "stored      %d sessions, %d prompts, %d observations, %d summaries (queue drained %s after the final restart)\n",
		r.stored.sessions, r.stored.prompts, r.stored.observations, r.stored.summaries, r.drain.Round(time.Millisecond))
	if len(r.violations) == 0 {
		fmt.Fprintln(w, "\nOK: every acknowledged or spooled event stored exactly once, no session duplicated, every hook in time")
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
