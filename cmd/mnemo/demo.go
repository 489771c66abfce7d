package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mnemo-dev/mnemo/cmd/internal/daemon"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/client"
)

// demoSession is a recorded Claude Code session (the hook calls it made),
// with {{cwd}} standing for the project folder.
//
//go:embed demo.jsonl
var demoSession []byte

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "play a recorded session into a fresh memory, then show what the next session gets",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "keep", Usage: "keep the demo's data directory and print where it is"},
		},
		Action: func(c *cli.Context) error {
			dir, err := os.MkdirTemp("", "mnemo-demo-")
			if err != nil {
				return err
			}
			if !c.Bool("keep") {
				defer os.RemoveAll(dir)
			}
			if err := runDemo(c.Context, dir, c.App.Writer); err != nil {
				return err
			}
			if c.Bool("keep") {
				// Said last, where a person looks once the demo has scrolled by.
				home := filepath.Join(dir, "home")
				fmt.Fprintf(c.App.Writer, "\nThe demo's memory is kept in %s. Use it with --home, e.g.\n", home)
				fmt.Fprintf(c.App.Writer, "  mnemo --home %s search rounding\n  mnemo --home %s ui\n", home, home)
				fmt.Fprintf(c.App.Writer, "then `mnemo --home %s daemon stop`, and remove %s when done.\n", home, dir)
			}
			return nil
		},
	}
}

// runDemo plays the recorded session into a memory under dir, through the
// same JSON-RPC methods hooks call, and prints the context and searches a
// new session would see.
func runDemo(ctx context.Context, dir string, w io.Writer) error {
	project := filepath.Join(dir, "billing-api")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		return err
	}
	home := filepath.Join(dir, "home")
	m := &daemon.Main{Home: home}
	if err := m.Open(ctx); err != nil {
		return err
	}
	defer m.Close()
	conn := m.Connect(ctx)
	defer conn.Close()
	rc := conn.Client
	cl := client.New(rc)

	fmt.Fprintf(w, "Playing a recorded Claude Code session into a fresh memory (%s)\n\n", home)
	start := time.Now()
	sc := bufio.NewScanner(bytes.NewReader(demoSession))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	calls := 0
	for sc.Scan() {
		line := bytes.ReplaceAll(sc.Bytes(), []byte("{{cwd}}"), []byte(project))
		var rec struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("demo session line %d: %w", calls+1, err)
		}
		var res json.RawMessage
		if err := rc.Call(ctx, rec.Method, rec.Params, &res); err != nil {
			return fmt.Errorf("%s: %w", rec.Method, err)
		}
		fmt.Fprintf(w, "  → %-24s %s\n", rec.Method, describe(rec.Method, rec.Params))
		calls++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := m.Memory.WaitIdle(wctx); err != nil {
		return fmt.Errorf("wait for the memory agent: %w", err)
	}
	fmt.Fprintf(w, "\n%d calls stored and compressed in %s.\n", calls, time.Since(start).Round(time.Millisecond))

	ctxRes, err := cl.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "demo-session-2", Cwd: project, Source: "startup", Platform: "claude-code"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n=== The context a new session in billing-api gets (%d bytes) ===\n\n%s\n", ctxRes.Bytes, ctxRes.Context)

	st, err := cl.Status(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Embedder: %s\n", st.Embedder)
	if st.Notice != "" {
		fmt.Fprintf(w, "Notice: %s\n", st.Notice)
	}
	fmt.Fprintln(w)
	for _, q := range []memory.SearchParams{
		{Query: "rounding", Project: "billing-api", Limit: 5},
		{Files: []string{"payments/"}, Limit: 5},
		// Shares no word with what it should find (the decision to round
		// money half-even): only the sentence encoder can match it.
		{Query: "people paid slightly more than they should", Limit: 3},
	} {
		res, err := cl.Search(ctx, q)
		if err != nil {
			return err
		}
		label := q.Query
		if label == "" {
			label = "files: " + strings.Join(q.Files, ",")
		}
		fmt.Fprintf(w, "=== mnemo search %q ===\n", label)
		for _, h := range res.Hits {
			fmt.Fprintf(w, "  #%-3d %-10s %s\n", h.ID, h.Type, h.Title)
		}
		fmt.Fprintln(w)
	}
	fixes, err := cl.Search(ctx, memory.SearchParams{Project: "billing-api", Types: []string{memory.TypeBugfix}, Files: []string{"rounding.go"}, Limit: 1})
	if err != nil {
		return err
	}
	if len(fixes.Hits) > 0 {
		full, err := cl.GetObservations(ctx, memory.IDsParams{IDs: []uint64{fixes.Hits[len(fixes.Hits)-1].ID}})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "=== mnemo get (a full record) ===\n\n")
		for _, o := range full.Observations {
			io.WriteString(w, o.Markdown())
		}
	}
	return nil
}

func describe(method string, params json.RawMessage) string {
	var p struct {
		ToolName string `json:"toolName"`
		Prompt   string `json:"prompt"`
		Source   string `json:"source"`
		Reason   string `json:"reason"`
	}
	json.Unmarshal(params, &p)
	switch {
	case p.ToolName != "":
		return p.ToolName
	case p.Prompt != "":
		return fmt.Sprintf("%.60q…", p.Prompt)
	default:
		return p.Source + p.Reason
	}
}
