package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

// DevBench (mcp-memory-service's scripts/benchmarks/devbench_dataset.json,
// Apache-2.0): 30 memories of a software project and 20 questions, 5 of
// them with no answer. Read from the benchmarks folder beside the
// checkout, never copied here. Each memory is saved on purpose, as
// `mnemo remember` saves it (its text; the title, as remember's default,
// its first line), in one project; each question is searched in that
// project. Scored as mcp-memory-service scores it: R@5 is the share of a
// question's expected memories among the first 5 hits, MRR by the first
// expected one; for the questions without an answer, how many got
// nothing above the relevance floor, at search and at the prompt's
// recall.

// A DevBench is the data set.
type DevBench struct {
	Memories []DevMemory `json:"memories"`
	Queries  []DevQuery  `json:"queries"`
}

// A DevMemory is one memory to save.
type DevMemory struct {
	ID         string   `json:"id"`
	Content    string   `json:"content"`
	Tags       []string `json:"tags"`
	MemoryType string   `json:"memory_type"`
}

// A DevQuery is one question and the memories (by id) that answer it.
type DevQuery struct {
	ID       string   `json:"id"`
	Category string   `json:"category"`
	Question string   `json:"question"`
	Expected []string `json:"expected_tags"`
}

// DevCategories are DevBench's categories, in the order tables show them.
var DevCategories = []string{"exact", "semantic", "cross_type", "negative"}

// LoadDevBench reads DevBench's JSON file.
func LoadDevBench(file string) (*DevBench, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var d DevBench
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(d.Memories) == 0 || len(d.Queries) == 0 {
		return nil, fmt.Errorf("%s: no memories or no queries", file)
	}
	ids := map[string]bool{}
	for _, m := range d.Memories {
		ids[m.ID] = true
	}
	for _, q := range d.Queries {
		if !slices.Contains(DevCategories, q.Category) {
			return nil, fmt.Errorf("%s: query %s: unknown category %q", file, q.ID, q.Category)
		}
		for _, e := range q.Expected {
			if !ids[e] {
				return nil, fmt.Errorf("%s: query %s expects %q, which no memory is", file, q.ID, e)
			}
		}
	}
	return &d, nil
}

// devCwd is the folder DevBench's project is remembered in.
const devCwd = "/home/dev/devbench"

// devType is the type a memory of a DevBench memory_type is saved as.
func devType(t string) string {
	switch t {
	case "decision":
		return memory.TypeDecision
	case "bug-fix":
		return memory.TypeBugfix
	case "learning":
		return memory.TypeDiscovery
	}
	return memory.TypeNote // architecture, configuration
}

// reportDevBench saves DevBench's memories into a fresh memory with one
// embedder and prints its table.
func reportDevBench(ctx context.Context, w io.Writer, d *DevBench, emb vector.Embedder) error {
	start := time.Now()
	mem, err := store.Open(ctx, store.Options{InMemory: true, Embedder: emb, NoSync: true})
	if err != nil {
		return err
	}
	defer mem.Close()
	memOf := map[uint64]string{}
	g := &textGrep{}
	for _, m := range d.Memories {
		r, err := mem.Save(ctx, memory.SaveParams{Text: m.Content, Type: devType(m.MemoryType), Cwd: devCwd})
		if err != nil {
			return fmt.Errorf("devbench %s: %w", m.ID, err)
		}
		memOf[r.ID] = m.ID
		g.add("devbench", m.ID, m.Content)
	}
	if err := mem.WaitIdle(ctx); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== DevBench, %s embedder: %d memories saved (in %s); %d questions, %d of them without an answer\n",
		emb.ID(), len(d.Memories), time.Since(start).Round(time.Millisecond), len(d.Queries), countNegative(d))
	project := memory.ProjectOf(devCwd)
	rankings := []struct{ name, mode string }{{"keyword", memory.ModeKeyword}, {"vector", memory.ModeVector}, {"hybrid", memory.ModeHybrid}, {"grep", ""}}
	by := map[string]map[string]*graded{}
	for _, r := range rankings {
		by[r.name] = map[string]*graded{"all": {}}
		for _, c := range DevCategories {
			by[r.name][c] = &graded{}
		}
	}
	for _, q := range d.Queries {
		want := map[string]bool{}
		for _, e := range q.Expected {
			want[e] = true
		}
		for _, r := range rankings {
			var ranking []string
			if r.mode == "" {
				ranking = g.search("devbench", q.Question, 10)
			} else {
				res, err := mem.Search(ctx, memory.SearchParams{Query: q.Question, Project: project, Mode: r.mode, Limit: 10})
				if err != nil {
					return fmt.Errorf("devbench %s: %w", q.ID, err)
				}
				for _, h := range res.Hits {
					ranking = append(ranking, memOf[h.ID])
				}
			}
			by[r.name][q.Category].add(want, ranking)
			if q.Category != "negative" {
				by[r.name]["all"].add(want, ranking)
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\tn\tranking\tR@1\tR@5\tR@10\tMRR\tquiet\t")
	for _, c := range append([]string{"all"}, DevCategories...) {
		for _, r := range rankings {
			m := by[r.name][c]
			if c == "negative" {
				fmt.Fprintf(tw, "%s\t%.0f\t%s\t\t\t\t\t%.0f of %.0f\t\n", c, m.n, r.name, m.quiet, m.n)
				continue
			}
			fmt.Fprintf(tw, "%s\t%.0f\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t\t\n", c, m.n, r.name, m.Recall1(), m.Recall5(), m.Recall10(), m.MRR())
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The prompt's recall: each question the first prompt of a new
	// session in the project.
	var n, answered, negatives, quiet int
	for _, q := range d.Queries {
		r, err := mem.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: "mnemo-eval-devbench-" + q.ID, Cwd: devCwd, Prompt: q.Question, Platform: "mnemo-eval"})
		if err != nil {
			return fmt.Errorf("devbench %s: prompt: %w", q.ID, err)
		}
		if q.Category == "negative" {
			negatives++
			if len(r.ObservationIDs) == 0 {
				quiet++
			}
			continue
		}
		n++
		for _, id := range r.ObservationIDs {
			if slices.Contains(q.Expected, memOf[id]) {
				answered++
				break
			}
		}
	}
	fmt.Fprintf(w, "prompt recall (each question the first prompt of a new session; the floor in force): %d of %d answerable questions named an expected memory; %d of %d without an answer quiet\n",
		answered, n, quiet, negatives)
	return nil
}

func countNegative(d *DevBench) int {
	n := 0
	for _, q := range d.Queries {
		if q.Category == "negative" {
			n++
		}
	}
	return n
}

// devBenchFile is where DevBench is in the benchmarks folder.
func devBenchFile(dir string) string { return filepath.Join(dir, "devbench", "devbench_dataset.json") }

// runPublic runs the public benchmarks named in which (LoCoMo, DevBench)
// from dir with each embedder (LoCoMo's conversations named in only, or
// all). A benchmark whose data is not in dir is
// skipped with a note: the data is other people's and is never in the
// repository.
func runPublic(ctx context.Context, w, progress io.Writer, dir, which, only string, embs []vector.Embedder) error {
	for _, name := range strings.Split(which, ",") {
		switch name {
		case "":
		case "locomo":
			file := locomoFile(dir)
			if _, err := os.Stat(file); err != nil {
				fmt.Fprintf(w, "\nnote: LoCoMo skipped: %s is not there (the public benchmarks sit beside the checkout; -benchmarks names another folder)\n", file)
				continue
			}
			convs, err := LoadLocomo(file)
			if err != nil {
				return err
			}
			if only != "" {
				keep := strings.Split(only, ",")
				convs = slices.DeleteFunc(convs, func(c LocomoConv) bool { return !slices.Contains(keep, c.ID) })
				if len(convs) == 0 {
					return fmt.Errorf("-locomo-conversations: none of %q is in %s", only, file)
				}
			}
			for _, emb := range embs {
				if err := reportLocomo(ctx, w, progress, convs, emb); err != nil {
					return err
				}
			}
		case "devbench":
			file := devBenchFile(dir)
			if _, err := os.Stat(file); err != nil {
				fmt.Fprintf(w, "\nnote: DevBench skipped: %s is not there (the public benchmarks sit beside the checkout; -benchmarks names another folder)\n", file)
				continue
			}
			d, err := LoadDevBench(file)
			if err != nil {
				return err
			}
			for _, emb := range embs {
				if err := reportDevBench(ctx, w, d, emb); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("-public: unknown benchmark %q (locomo, devbench)", name)
		}
	}
	return nil
}
