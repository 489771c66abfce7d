package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
	"github.com/mnemo-dev/mnemo/adapters/hosts/install"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/rules"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// The refresh after a session ends: the daemon derives the session's
// project knowledge again (store.RefreshKnowledge: off the hooks' path, so
// that SessionStart only reads it), then rewrites Mnemo's block in every
// rules file of the project that has Mnemo's markers (`mnemo install <host>
// --rules` put them there), so that the next session of a host that cannot
// take context from its hooks reads the memory as it now is.
const (
	// rulesEvery is the least time between two refreshes of a project's
	// rules files: a session end within it is served by one refresh at its
	// end.
	rulesEvery = 30 * time.Second
	// rulesSettle bounds the wait for the memory agent to process the
	// session's last events (its last turn's summary) before the refresh.
	rulesSettle = time.Minute
	// rulesTimeout bounds one refresh, settling included.
	rulesTimeout = 2 * time.Minute
)

// rulesRefresher derives projects' knowledge and refreshes their rules
// files in the background: a session's end only schedules the refresh,
// never waits for it.
type rulesRefresher struct {
	mem                    *store.Memory
	log                    *slog.Logger
	files                  []string // the rules files, relative to a project's root
	every, settle, timeout time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// inflight counts the ends not yet served: mnemo/status reports it
	// (knowledgePending), so that a client can wait for the knowledge.
	inflight atomic.Int64

	mu      sync.Mutex
	last    map[string]time.Time // a project's last refresh
	pending map[string]bool      // a project with a refresh scheduled
}

func newRulesRefresher(mem *store.Memory, log *slog.Logger) *rulesRefresher {
	ctx, cancel := context.WithCancel(context.Background())
	r := &rulesRefresher{
		mem: mem, log: log, every: rulesEvery, settle: rulesSettle, timeout: rulesTimeout,
		ctx: ctx, cancel: cancel, last: map[string]time.Time{}, pending: map[string]bool{},
	}
	// The hosts' installers name the rules files.
	for _, in := range install.Installers {
		if in.Rules != "" && !slices.Contains(r.files, in.Rules) {
			r.files = append(r.files, in.Rules)
		}
	}
	return r
}

// Close stops the refreshes under way and waits for them.
func (r *rulesRefresher) Close() {
	r.cancel()
	r.wg.Wait()
}

// ended tells the refresher that a session answered a stage:
// memory.StageSessionEnd, or memory.StageStop (the end of a session for
// hosts that have no SessionEnd). It returns at once.
func (r *rulesRefresher) ended(csid, stage string) {
	if r.ctx.Err() != nil {
		return
	}
	r.inflight.Add(1)
	r.wg.Go(func() {
		defer r.inflight.Add(-1)
		r.schedule(csid, stage)
	})
}

// unserved counts the ends whose refresh has not finished.
func (r *rulesRefresher) unserved() int { return int(r.inflight.Load()) }

// schedule finds the session's project and, when one of its rules files
// has Mnemo's markers, refreshes them: now, or rulesEvery after the
// project's last refresh. One refresh at a time is scheduled per project;
// it serves every session that ends before it starts.
func (r *rulesRefresher) schedule(csid, stage string) {
	sess, err := r.mem.Session(r.ctx, csid)
	if err != nil {
		return
	}
	if stage == memory.StageStop && hasSessionEnd(sess.Platform) {
		return // its SessionEnd will come
	}
	root := ""
	if sess.Cwd != "" && !r.mem.PausedFor(sess.Project).Inject { // the rules file is context too
		root = memory.RootOf(sess.Cwd)
	}
	key := sess.Project + "\x00" + root
	r.mu.Lock()
	if r.pending[key] {
		r.mu.Unlock()
		return
	}
	r.pending[key] = true
	wait := time.Until(r.last[key].Add(r.every))
	r.mu.Unlock()

	if wait > 0 {
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	r.mu.Lock()
	delete(r.pending, key) // a session that ends from now on gets a refresh of its own
	r.last[key] = time.Now()
	r.mu.Unlock()
	r.refresh(sess.Project, root)
}

// marked lists the rules files of the project at root that have Mnemo's
// markers.
func (r *rulesRefresher) marked(root string) []string {
	var out []string
	for _, f := range r.files {
		if p := filepath.Join(root, f); rules.Marked(p) {
			out = append(out, p)
		}
	}
	return out
}

// refresh waits (bounded) for the memory agent to catch up, derives the
// project's knowledge again, then writes the project's context into each
// marked rules file at root ("" for none). Failures are logged.
func (r *rulesRefresher) refresh(project, root string) {
	ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
	defer cancel()
	settle, stop := context.WithTimeout(ctx, r.settle)
	if err := r.mem.WaitIdle(settle); err != nil && ctx.Err() == nil {
		r.log.Info("refreshing before the memory agent caught up", "project", project, "err", err)
	}
	stop()
	start := time.Now()
	if k, err := r.mem.RefreshKnowledge(ctx, project); err != nil {
		r.log.Warn("project knowledge not derived", "project", project, "err", err)
	} else {
		r.log.Info("project knowledge derived", "project", project, "records", k.Records, "lines", len(k.Lines), "ms", time.Since(start).Milliseconds())
	}
	if root == "" || len(r.marked(root)) == 0 {
		return
	}
	res, err := r.mem.Context(ctx, memory.ContextParams{Cwd: root})
	if err != nil {
		r.log.Warn("rules files: no context", "project", root, "err", err)
		return
	}
	for _, path := range r.marked(root) {
		done, err := rules.Refresh(path, res.Context)
		switch {
		case err != nil:
			r.log.Warn("rules file not refreshed", "path", path, "err", err)
		case done.Changed:
			r.log.Info("rules file refreshed", "path", done.Path, "observations", len(res.ObservationIDs))
		}
	}
}

// hasSessionEnd reports whether a host (a session's platform) fires
// SessionEnd.
func hasSessionEnd(platform string) bool {
	h, ok := hosts.Named(platform)
	if !ok {
		return true // an editor's sessions: its own Stop is no end
	}
	for _, stage := range h.Events {
		if stage == memory.StageSessionEnd {
			return true
		}
	}
	return false
}
