package memory

import (
	"fmt"
	"strings"
)

// Opt-outs: a project, or one session, can do without capture (nothing
// new is stored from its sessions: no prompt, no queued event, so no
// observation and no summary, and no session record) or without injection
// (no SessionStart context, no prompt recall, nothing audited as given).
// A project's pauses are the daemon's (mnemo/pause, mnemo/resume, kept
// in the settings file); a session's come from PauseEnv in the hook's
// environment, which sends SessionStartParams.NoCapture and NoContext,
// UserPromptParams.NoCapture and NoRecall, and no PostToolUse, Stop or
// SessionEnd.

// What a pause turns off.
const (
	PauseCapture = "capture"
	PauseInject  = "inject"
	PauseAll     = "all"
)

// PauseEnv names the environment variable that pauses one session: its
// value is PauseCapture, PauseInject or PauseAll. The hooks inherit the
// agent's environment, so `MNEMO_PAUSE=all claude` is a session Mnemo
// neither records nor informs.
const PauseEnv = "MNEMO_PAUSE"

// A Pause says what a project or a session does without.
type Pause struct {
	Capture bool `json:"capture"`
	Inject  bool `json:"inject"`
}

// ParsePause reads PauseCapture, PauseInject or PauseAll (any case, blank
// around it); "" is no pause.
func ParsePause(s string) (Pause, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return Pause{}, nil
	case PauseCapture:
		return Pause{Capture: true}, nil
	case PauseInject:
		return Pause{Inject: true}, nil
	case PauseAll:
		return Pause{Capture: true, Inject: true}, nil
	}
	return Pause{}, fmt.Errorf("%q: want %s, %s or %s", s, PauseCapture, PauseInject, PauseAll)
}

// String is the pause as ParsePause reads it ("" for none).
func (p Pause) String() string {
	switch {
	case p.Capture && p.Inject:
		return PauseAll
	case p.Capture:
		return PauseCapture
	case p.Inject:
		return PauseInject
	}
	return ""
}

// Or is what pausing both p and q turns off.
func (p Pause) Or(q Pause) Pause {
	return Pause{Capture: p.Capture || q.Capture, Inject: p.Inject || q.Inject}
}

// PauseParams names a project, by name or by a folder in it, and what to
// pause or resume: PauseCapture, PauseInject or PauseAll (the default).
type PauseParams struct {
	Project string `json:"project,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	What    string `json:"what,omitempty"`
}

// Validate requires a project or a folder, and a known What.
func (p *PauseParams) Validate() error {
	if strings.TrimSpace(p.Project) == "" && strings.TrimSpace(p.Cwd) == "" {
		return &FieldError{"project", "or cwd is required"}
	}
	if _, err := ParsePause(p.What); err != nil {
		return &FieldError{"what", fmt.Sprintf("is %q; want %s, %s or %s", p.What, PauseCapture, PauseInject, PauseAll)}
	}
	return nil
}

// Pause returns what p names: PauseAll when What is empty.
func (p *PauseParams) Pause() Pause {
	if strings.TrimSpace(p.What) == "" {
		return Pause{Capture: true, Inject: true}
	}
	v, _ := ParsePause(p.What)
	return v
}

// A PausedProject is a project with a pause.
type PausedProject struct {
	Project string `json:"project"`
	Pause
}

// PauseResult is the project a pause or a resume named, what it does
// without now, and every paused project.
type PauseResult struct {
	Project string          `json:"project"`
	Pause   Pause           `json:"pause"`
	Paused  []PausedProject `json:"paused"`
}
