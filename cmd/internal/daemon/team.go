package daemon

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/team"
)

// Team memory (docs/team.md): `mnemo team join|leave|status` ask the
// daemon (mnemo/teamJoin, teamLeave, teamStatus), which keeps the server
// and the shared projects in its settings file and runs team.Sync.

// teamHost runs the daemon's team.Sync for the configured server, and
// serves the team methods.
type teamHost struct {
	m  *Main
	mu sync.Mutex
	// url, author and projects in force; url "" is off.
	url      string
	author   string
	projects []string
	sync     *team.Sync
}

// defaultAuthor is $USER@host.
func defaultAuthor() string {
	host, _ := os.Hostname()
	return cmp.Or(os.Getenv("USER"), os.Getenv("USERNAME"), "someone") + "@" + cmp.Or(host, "localhost")
}

// start applies the configuration Main loaded.
func (h *teamHost) start(cfg Config) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.url, h.author, h.projects = cfg.TeamURL, cmp.Or(cfg.TeamAuthor, defaultAuthor()), slices.Clone(cfg.TeamProjects)
	return h.restart()
}

// restart stops the running Sync and starts one for what is in force.
// Callers hold mu.
func (h *teamHost) restart() error {
	if h.sync != nil {
		h.sync.Close()
		h.sync = nil
	}
	if h.url == "" || len(h.projects) == 0 {
		h.m.Memory.SetShared(nil)
		return nil
	}
	h.m.Memory.SetShared(h.projects)
	s, err := team.Start(h.m.Memory, team.Options{URL: h.url, Author: h.author, Poll: time.Duration(h.m.Config.TeamPollMillis) * time.Millisecond, PushBatch: h.m.Config.TeamPushBatch, Logger: h.m.Logger})
	if err != nil {
		return err
	}
	h.sync = s
	return nil
}

// Close stops the Sync.
func (h *teamHost) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sync != nil {
		h.sync.Close()
		h.sync = nil
	}
}

func (h *teamHost) project(p memory.TeamParams) string {
	if p.Project != "" {
		return p.Project
	}
	return memory.ProjectOf(p.Cwd)
}

// join checks the server, keeps it and the project in the settings, and
// queues the project's records. A bad URL or a server that does not answer
// is an error that changes nothing.
func (h *teamHost) join(ctx context.Context, p memory.TeamParams) (memory.TeamStatus, error) {
	project := h.project(p)
	if project == "" {
		return memory.TeamStatus{}, &memory.FieldError{Field: "project", Reason: "is required (no project for the folder)"}
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := team.Check(cctx, p.URL); err != nil {
		return memory.TeamStatus{}, &memory.FieldError{Field: "url", Reason: "does not work: " + err.Error() + "; nothing was changed"}
	}
	h.mu.Lock()
	if h.url != "" && h.url != p.URL && len(h.projects) > 0 {
		h.mu.Unlock()
		return memory.TeamStatus{}, &memory.FieldError{Field: "url", Reason: fmt.Sprintf("this home shares %s through %s already; mnemo team leave --all first", strings.Join(h.projects, ", "), memory.RedactURL(h.url))}
	}
	h.url = p.URL
	h.author = cmp.Or(p.Author, h.author, defaultAuthor())
	if !slices.Contains(h.projects, project) {
		h.projects = append(h.projects, project)
		slices.Sort(h.projects)
	}
	keys := map[string]any{"teamProjects": h.projects}
	if !p.FromEnv {
		keys["teamUrl"] = h.url
	}
	if p.Author != "" {
		keys["teamAuthor"] = p.Author
	}
	if err := saveSettings(h.m.Home, keys); err != nil {
		h.mu.Unlock()
		return memory.TeamStatus{}, err
	}
	err := h.restart()
	h.mu.Unlock()
	if err != nil {
		return memory.TeamStatus{}, err
	}
	n, err := h.m.Memory.ShareExisting(ctx, project)
	if err != nil {
		return memory.TeamStatus{}, fmt.Errorf("queue the records of %s: %w", project, err)
	}
	st := h.status()
	st.Queued = n
	return st, nil
}

// leave stops sharing a project (or all); its queued pushes are dropped.
func (h *teamHost) leave(ctx context.Context, p memory.TeamParams) (memory.TeamStatus, error) {
	h.mu.Lock()
	if p.All {
		h.projects = nil
	} else {
		project := h.project(p)
		if !slices.Contains(h.projects, project) {
			h.mu.Unlock()
			return memory.TeamStatus{}, &memory.FieldError{Field: "project", Reason: fmt.Sprintf("%q is not shared (shared: %s)", project, strings.Join(h.projects, ", "))}
		}
		h.projects = slices.DeleteFunc(h.projects, func(s string) bool { return s == project })
	}
	keys := map[string]any{"teamProjects": nil}
	if len(h.projects) > 0 {
		keys["teamProjects"] = h.projects
	} else {
		keys["teamUrl"] = nil
		h.url = ""
	}
	err := saveSettings(h.m.Home, keys)
	if err == nil {
		err = h.restart()
	}
	shared := slices.Clone(h.projects)
	h.mu.Unlock()
	if err != nil {
		return memory.TeamStatus{}, err
	}
	if _, err := h.m.Memory.DropOutbox(ctx, func(project string) bool { return slices.Contains(shared, project) }); err != nil {
		return memory.TeamStatus{}, err
	}
	return h.status(), nil
}

// status is the state of team memory here.
func (h *teamHost) status() memory.TeamStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := memory.TeamStatus{Projects: slices.Clone(h.projects), Machine: h.m.Memory.Machine(), Outbox: h.m.Memory.OutboxLen()}
	if st.Projects == nil {
		st.Projects = []string{}
	}
	if h.sync != nil {
		h.sync.Status(&st)
	} else if h.url != "" {
		st.Server, st.Author = memory.RedactURL(h.url), h.author
	}
	return st
}
