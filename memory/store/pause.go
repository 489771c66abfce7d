package store

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/mnemo-dev/mnemo/memory"
)

// Paused projects (memory.Pause): the stages read them on every call, so
// they live in memory, behind an atomic pointer; Pause and Resume change
// them one at a time, saving them first (Options.SavePaused), so that a
// change the file did not take is no change.

// pauses is the current map of project to pause; never changed in place.
type pauses map[string]memory.Pause

// setPauses installs ps (an Options.Paused map) at Open.
func (m *Memory) setPauses(ps map[string]string) error {
	out := pauses{}
	for project, what := range ps {
		p, err := memory.ParsePause(what)
		if err != nil {
			return fmt.Errorf("paused project %q: %w", project, err)
		}
		if p != (memory.Pause{}) {
			out[project] = p
		}
	}
	m.paused.Store(&out)
	return nil
}

// PausedFor says what a project does without.
func (m *Memory) PausedFor(project string) memory.Pause {
	return (*m.paused.Load())[project]
}

// Paused lists the paused projects by name.
func (m *Memory) Paused() []memory.PausedProject {
	ps := *m.paused.Load()
	out := []memory.PausedProject{}
	for _, name := range slices.Sorted(maps.Keys(ps)) {
		out = append(out, memory.PausedProject{Project: name, Pause: ps[name]})
	}
	return out
}

// Pause turns off capture, injection or both (p.What) for a project,
// named or found from a folder, from the next call on: a capture-paused
// project stores nothing new from hooks or editors (no session, prompt,
// event, observation or summary); an injection-paused one gets no
// SessionStart context and no prompt recall, and nothing is audited as
// given. It keeps the pauses with Options.SavePaused first.
func (m *Memory) Pause(ctx context.Context, p memory.PauseParams) (memory.PauseResult, error) {
	return m.changePause(p, func(old, what memory.Pause) memory.Pause { return old.Or(what) })
}

// Resume undoes Pause for what p.What names (everything by default).
func (m *Memory) Resume(ctx context.Context, p memory.PauseParams) (memory.PauseResult, error) {
	return m.changePause(p, func(old, what memory.Pause) memory.Pause {
		return memory.Pause{Capture: old.Capture && !what.Capture, Inject: old.Inject && !what.Inject}
	})
}

func (m *Memory) changePause(p memory.PauseParams, change func(old, what memory.Pause) memory.Pause) (memory.PauseResult, error) {
	if err := p.Validate(); err != nil {
		return memory.PauseResult{}, err
	}
	project := m.project(p.Project, p.Cwd)
	m.pauseMu.Lock()
	defer m.pauseMu.Unlock()
	next := maps.Clone(*m.paused.Load())
	now := change(next[project], p.Pause())
	if now == (memory.Pause{}) {
		delete(next, project)
	} else {
		next[project] = now
	}
	if m.opts.SavePaused != nil {
		save := map[string]string{}
		for name, v := range next {
			save[name] = v.String()
		}
		if err := m.opts.SavePaused(save); err != nil {
			return memory.PauseResult{}, fmt.Errorf("keep the paused projects: %w", err)
		}
	}
	m.paused.Store(&next)
	m.log.Info("pauses changed", "project", project, "pause", now.String())
	return memory.PauseResult{Project: project, Pause: now, Paused: m.Paused()}, nil
}

// capturePaused says why nothing of a project is stored, or "".
func (m *Memory) capturePaused(project string) string {
	if m.PausedFor(project).Capture {
		return "capture is paused for project " + project
	}
	return ""
}
