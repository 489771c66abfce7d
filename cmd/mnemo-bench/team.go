//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
	"github.com/mnemo-dev/mnemo/memory/team/pgtest"
)

// teamResult is what the team part measured: two daemons (and a third,
// joining late) sharing one project through a throw-away PostgreSQL on
// loopback.
type teamResult struct {
	records  int
	pushTook time.Duration // a join's n queued records, from the join to an empty outbox
	pullTook time.Duration // the other daemon, from the join until all n arrived
	catchUp  time.Duration // a third home joining after them, until all n arrived
	latency  dist          // a save at A until a search at B finds it
	pg       string
}

// measureTeam runs the team part: n records saved at A before it joins
// (the join queues them all: push throughput), B joined already (pull
// while they are pushed), C joining once they are on the server (a
// catch-up), then saves at A one at a time, each timed until B's search
// finds it.
func measureTeam(ctx context.Context, newEnv func(name string) (*env, error), n, samples int) (teamResult, error) {
	r := teamResult{records: n}
	pg, err := pgtest.StartConfig(ctx, pgtest.Config{Fsync: true})
	if err != nil {
		return r, fmt.Errorf("start PostgreSQL: %w", err)
	}
	defer pg.Close()
	r.pg = pg.Bin
	url := pg.URL()
	var homes [3]*env
	var daemons [3]*daemon
	defer func() {
		for _, d := range daemons {
			d.stop()
		}
	}()
	clients := make([]*client.Client, 3)
	for i, name := range []string{"team-a", "team-b", "team-c"} {
		if homes[i], err = newEnv(name); err != nil {
			return r, err
		}
		if daemons[i], err = homes[i].startDaemon(); err != nil {
			return r, err
		}
		if err := homes[i].waitServing(ctx, daemons[i], 30*time.Second); err != nil {
			return r, err
		}
		cl, err := homes[i].dial(ctx)
		if err != nil {
			return r, err
		}
		defer cl.Close()
		clients[i] = client.New(cl)
	}
	a, b, c := clients[0], clients[1], clients[2]
	join := func(cl *client.Client, author string) error {
		_, err := cl.TeamJoin(ctx, memory.TeamParams{URL: url, Project: "billing-api", Author: author})
		return err
	}
	// n records at A, from 8 connections (their fsyncs shared).
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for w := range 8 {
		cl, err := homes[0].dial(ctx)
		if err != nil {
			return r, err
		}
		wg.Go(func() {
			defer cl.Close()
			mc := client.New(cl)
			for i := w; i < n; i += 8 {
				if _, err := mc.Save(ctx, memory.SaveParams{Project: "billing-api", Title: fmt.Sprintf("team bench record %d", i),
					Text: fmt.Sprintf("record %d: the invoice rounding uses banker's rounding in module m%d; see ticket T-%d", i, i%97, i*7)}); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return r, err
	}
	if err := join(b, "bob"); err != nil {
		return r, err
	}
	start := time.Now()
	if err := join(a, "alice"); err != nil {
		return r, err
	}
	var pushed, pulled bool
	for !pushed || !pulled {
		if time.Since(start) > 10*time.Minute {
			return r, fmt.Errorf("the records did not travel within 10 minutes")
		}
		if !pushed {
			st, err := a.TeamStatus(ctx)
			if err != nil {
				return r, err
			}
			if st.LastError != "" && !st.Connected {
				return r, fmt.Errorf("alice: %s", st.LastError)
			}
			if st.Outbox == 0 && st.Pushed >= int64(n) {
				pushed, r.pushTook = true, time.Since(start)
			}
		}
		if !pulled {
			st, err := b.TeamStatus(ctx)
			if err != nil {
				return r, err
			}
			if st.Arrived >= int64(n) {
				pulled, r.pullTook = true, time.Since(start)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	start = time.Now()
	if err := join(c, "carol"); err != nil {
		return r, err
	}
	for {
		st, err := c.TeamStatus(ctx)
		if err != nil {
			return r, err
		}
		if st.Arrived >= int64(n) {
			r.catchUp = time.Since(start)
			break
		}
		if time.Since(start) > 10*time.Minute {
			return r, fmt.Errorf("the catch-up did not end within 10 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Write to searchable, one at a time.
	for i := range samples {
		token := fmt.Sprintf("latencyprobe%dx", i)
		t0 := time.Now()
		if _, err := a.Save(ctx, memory.SaveParams{Project: "billing-api", Title: "probe " + token, Text: "probe " + token}); err != nil {
			return r, err
		}
		for {
			res, err := b.Search(ctx, memory.SearchParams{Query: token, Mode: memory.ModeKeyword, Limit: 1})
			if err != nil {
				return r, err
			}
			if len(res.Hits) > 0 {
				r.latency = append(r.latency, time.Since(t0))
				break
			}
			if time.Since(t0) > 30*time.Second {
				return r, fmt.Errorf("probe %d was not searchable at B within 30 s", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return r, nil
}

// rows are the team part's lines of the table.
func (t *teamResult) rows() []row {
	rate := func(d time.Duration) string { return fmt.Sprintf("%.0f records/s", float64(t.records)/d.Seconds()) }
	k := sizeName(t.records)
	return []row{
		{fmt.Sprintf("team push, %s records (outbox to PostgreSQL, loopback)", k), rate(t.pushTook), "", "",
			fmt.Sprintf("a join queues the home's %s records and the daemon pushes them, 200 to a transaction: %.1f s from the join to an empty outbox; PostgreSQL from %s, fsync on", k, t.pushTook.Seconds(), t.pg)},
		{fmt.Sprintf("team pull while pushed, %s records", k), rate(t.pullTook), "", "",
			fmt.Sprintf("the other daemon, joined before: %.1f s from the join until all arrived (stored, indexed; hashing embedder)", t.pullTook.Seconds())},
		{fmt.Sprintf("team catch-up, %s records", k), rate(t.catchUp), "", "",
			fmt.Sprintf("a third home joining once they are on the server: %.1f s until all arrived, 500 to a pull", t.catchUp.Seconds())},
		{"team, write to searchable on the other machine", p50p99(t.latency), "", "",
			fmt.Sprintf("%d saves at one daemon, one at a time, each until the other's mnemo/search finds it (LISTEN/NOTIFY wakes the pull; the 2 s poll is the fallback)", len(t.latency))},
	}
}
