//go:build unix

package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
)

// The knowledge rows: deriving a project's knowledge (mnemo/knowledge
// with refresh, what the daemon does after a session ends, off the hooks'
// path) on the data sets of the size rows, and SessionStart once it is
// derived (its block read, its lines' records checked).

// knowledgeRuns is how many times the largest project's knowledge is
// derived; knowledgeStarts the SessionStart calls after it.
const (
	knowledgeRuns   = 5
	knowledgeStarts = 100
)

type knowledgeResult struct {
	n        int    // observations in the store
	project  string // the largest project
	records  int    // its records
	lines    int    // the lines derived of it
	derive   dist   // deriving the largest project's knowledge
	all      time.Duration
	projects int
	start    dist // SessionStart of the largest project, knowledge derived
	before   dist // the same before any knowledge was derived
	rss      rss  // the daemon's after the derivations
}

// measureKnowledge loads ds into e's home, derives every project's
// knowledge once, then the largest project's knowledgeRuns times, and
// times SessionStart of that project.
func measureKnowledge(ctx context.Context, log *slog.Logger, e *env, ds *dataSet) (knowledgeResult, error) {
	res := knowledgeResult{n: ds.n}
	d, _, _, err := load(ctx, log, e, ds)
	defer func() { d.stop() }()
	if err != nil {
		return res, err
	}
	rc, err := e.dial(ctx)
	if err != nil {
		return res, err
	}
	defer rc.Close()
	cl := client.New(rc)
	largest := projects[0]
	for _, p := range projects[1:] {
		if p.weight > largest.weight {
			largest = p
		}
	}
	if res.before, err = timeStarts(ctx, cl, ds.n, "before", largest.name); err != nil {
		return res, err
	}
	t0 := time.Now()
	for _, p := range projects {
		k, err := cl.Knowledge(ctx, memory.KnowledgeParams{Project: p.name, Refresh: true})
		if err != nil {
			return res, fmt.Errorf("knowledge of %s: %w", p.name, err)
		}
		if k.Records > res.records {
			res.project, res.records, res.lines = p.name, k.Records, len(k.Lines)
		}
		res.projects++
	}
	res.all = time.Since(t0)
	for range knowledgeRuns {
		t0 := time.Now()
		if _, err := cl.Knowledge(ctx, memory.KnowledgeParams{Project: res.project, Refresh: true}); err != nil {
			return res, err
		}
		res.derive = append(res.derive, time.Since(t0))
	}
	if res.start, err = timeStarts(ctx, cl, ds.n, "after", res.project); err != nil {
		return res, err
	}
	if res.rss, err = d.rssMB(); err != nil {
		return res, err
	}
	return res, nil
}

// timeStarts times knowledgeStarts SessionStart calls of a project, after
// 10 unmeasured ones.
func timeStarts(ctx context.Context, cl *client.Client, n int, tag, project string) (dist, error) {
	var out dist
	for i := range 10 + knowledgeStarts {
		t0 := time.Now()
		_, err := cl.SessionStart(ctx, memory.SessionStartParams{
			ContentSessionID: fmt.Sprintf("bench-knowledge-%d-%s-%05d", n, tag, i), Cwd: "/home/dev/src/" + project, Source: "startup", Platform: "claude-code",
		})
		if err != nil {
			return nil, fmt.Errorf("sessionStart: %w", err)
		}
		if i >= 10 {
			out = append(out, time.Since(t0))
		}
	}
	return out, nil
}

func (k *knowledgeResult) rows() []row {
	return []row{
		{fmt.Sprintf("project knowledge derived, %s observations (mnemo/knowledge, off the hooks' path)", sizeName(k.n)),
			fmt.Sprintf("p50 %s (max %s)", ms(k.derive.p50()), ms(k.derive.pct(100))), "", "",
			fmt.Sprintf("the largest project, %s: %d records read, %d lines; %d runs over the socket; all %d projects once: %s; the daemon's RSS after: %s",
				k.project, k.records, k.lines, len(k.derive), k.projects, ms(k.all), k.rss)},
		{fmt.Sprintf("SessionStart context with the knowledge block, %s observations", sizeName(k.n)),
			p50p99(k.start), "", "",
			fmt.Sprintf("%d calls of the largest project once its knowledge is derived (the block read, its lines' records checked); before it was derived, in the same run: %s", len(k.start), p50p99(k.before))},
	}
}
