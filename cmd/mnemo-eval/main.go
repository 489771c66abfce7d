// Command mnemo-eval measures recall on work Mnemo has never seen (`just
// eval`): it replays the raw Claude Code hook payloads of each split of
// testdata/replay (dev, on which ranking is tuned, and test, written
// before any tuning and never tuned on) through the five stages into a
// fresh memory with the local agent, asks each split's questions, and
// scores keyword, vector and hybrid search beside grep over the raw
// events, by kind of question.
//
// A hit answers a question when it names one of the files the question is
// about, in its project. Questions of kind "none" have no answer: for them
// the table gives the share that returned nothing (quiet).
//
// A second table scores the prompt recall: each question asked as the
// first prompt of a new session, what UserPromptSubmit's context gives
// back with the relevance floor in force.
//
// The conversation splits (testdata/conversation: dev, and the held-out
// test and test2, alike) score what the next session gets of what earlier ones settled in their
// conversation: each task is the first prompt of a new session in its
// project; it passes when SessionStart's context and the prompt's recall
// together carry the words the task needs (conversation.go).
//
// The knowledge splits (testdata/knowledge) score project knowledge: in
// multi-session histories, the SessionStart context of a later session
// must carry a fact learned early (how to run the tests, the fix of a
// recurring error, a decision in force) and never a replaced one
// (knowledge.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mnemo-eval:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("mnemo-eval", flag.ContinueOnError)
	review := reviewFlags(fs)
	data := fs.String("data", filepath.Join("cmd", "mnemo-eval", "testdata", "replay"), "the folder of the splits")
	splits := fs.String("splits", "dev,test", "the splits to run, comma-separated")
	embedder := fs.String("embedder", "both", "hash, default (the sentence encoder when installed) or both")
	models := fs.String("models", os.Getenv("MNEMO_MODELS"), "where `mnemo model install` put the sentence encoder")
	misses := fs.String("misses", "", "print the hybrid misses at rank 1 of this kind (\"all\" for every kind) with what was found instead; for the dev split only")
	convData := fs.String("conversation-data", filepath.Join("cmd", "mnemo-eval", "testdata", "conversation"), "the folder of the conversation splits")
	convSplits := fs.String("conversation", "dev,test,test2", "the conversation splits to run, comma-separated (\"\" for none)")
	tasks := fs.Bool("tasks", false, "print each conversation task's outcome, with the context and recall of those missed; for the dev split only")
	benchmarks := fs.String("benchmarks", filepath.Join("..", "shared", "benchmarks"), "the folder of the public benchmarks (LoCoMo, DevBench), beside the checkout; skipped, with a note, when absent")
	public := fs.String("public", "locomo,devbench", "the public benchmarks to run, comma-separated (\"\" for none)")
	embedCache := fs.String("embed-cache", "", "a file that keeps the sentence encoder's vectors between runs, by text (for tuning: the same texts are embedded once)")
	locomoOnly := fs.String("locomo-conversations", "", "LoCoMo's conversations to replay, by file name (\"26,30\"); all when empty")
	knowData := fs.String("knowledge-data", filepath.Join("cmd", "mnemo-eval", "testdata", "knowledge"), "the folder of the knowledge splits")
	knowSplits := fs.String("knowledge", "dev,test,test2", "the knowledge splits to run, comma-separated (\"\" for none)")
	knowCases := fs.Bool("knowledge-cases", false, "print each knowledge case's outcome, with the context of those missed; for the dev split only")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if review.repo != "" {
		return review.run(ctx, w)
	}
	var embs []vector.Embedder
	if *embedder == "hash" || *embedder == "both" {
		embs = append(embs, vector.NewHashEmbedder())
	}
	if *embedder == "default" || *embedder == "both" {
		e, notice := vector.DefaultEmbedder(*models)
		if notice != "" {
			fmt.Fprintf(w, "note: %s\n", notice)
		}
		if _, hash := e.(vector.HashEmbedder); !hash || *embedder == "default" {
			if *embedCache != "" && !hash {
				c, err := newCachedEmbedder(e, *embedCache)
				if err != nil {
					return err
				}
				defer func() {
					if err := c.save(); err != nil {
						fmt.Fprintln(os.Stderr, "mnemo-eval: keep the embeddings:", err)
					}
				}()
				e = c
			}
			embs = append(embs, e)
		}
	}
	for _, name := range strings.Split(*splits, ",") {
		if name == "" {
			continue
		}
		s, err := LoadSet(filepath.Join(*data, name))
		if err != nil {
			return err
		}
		for _, emb := range embs {
			if err := report(ctx, w, s, emb, *misses); err != nil {
				return err
			}
		}
	}
	if err := runPublic(ctx, w, os.Stderr, *benchmarks, *public, *locomoOnly, embs); err != nil {
		return err
	}
	for _, name := range strings.Split(*convSplits, ",") {
		if name == "" {
			continue
		}
		if *tasks && heldOut(name) {
			return fmt.Errorf("-tasks would show the held-out %s split's tasks: look at dev only", name)
		}
		s, err := LoadConversation(filepath.Join(*convData, name))
		if err != nil {
			return err
		}
		for _, emb := range embs {
			if _, err := reportConversation(ctx, w, s, emb, *tasks); err != nil {
				return err
			}
		}
	}
	for _, name := range strings.Split(*knowSplits, ",") {
		if name == "" {
			continue
		}
		if *knowCases && strings.HasPrefix(name, "test") {
			return fmt.Errorf("-knowledge-cases would show the held-out test split's cases: look at dev only")
		}
		s, err := LoadKnowledge(filepath.Join(*knowData, name))
		if err != nil {
			return err
		}
		// The context does not search: one embedder says it all.
		if _, err := reportKnowledge(ctx, w, s, embs[0], *knowCases); err != nil {
			return err
		}
	}
	return nil
}

// heldOut reports whether a split is held out (test, test2, …): nothing
// is tuned on it, so the tools that show single outcomes refuse it.
func heldOut(split string) bool {
	return strings.HasPrefix(split, "test")
}

// report replays a split with one embedder and prints its table.
func report(ctx context.Context, w io.Writer, s *Set, emb vector.Embedder, misses string) error {
	start := time.Now()
	mem, err := Replay(ctx, s, emb)
	if err != nil {
		return err
	}
	defer mem.Close()
	counts, err := mem.Counts(ctx)
	if err != nil {
		return err
	}
	events := 0
	for _, p := range s.Projects {
		for _, pl := range p.Payloads {
			if pl.ToolName != "" {
				events++
			}
		}
	}
	fmt.Fprintf(w, "\n== %s split, %s embedder: %d projects, %d tool events → %d observations (replayed in %s); %d questions\n",
		s.Name, emb.ID(), len(s.Projects), events, counts.Observations, time.Since(start).Round(time.Millisecond), len(s.Queries))
	if err := printFootprint(ctx, w, mem, counts.Observations); err != nil {
		return err
	}
	if err := printDuplicates(ctx, w, mem); err != nil {
		return err
	}
	rows := []struct {
		name   string
		search searcher
	}{
		{"keyword", memorySearch(mem, memory.ModeKeyword)},
		{"vector", memorySearch(mem, memory.ModeVector)},
		{"hybrid", memorySearch(mem, memory.ModeHybrid)},
		{"grep", NewGrep(s).Search},
	}
	results := make([]map[string]*Metrics, len(rows))
	for i, r := range rows {
		if results[i], err = evaluate(ctx, s, r.search); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tn\tranking\tR@1\tR@5\tR@10\tMRR\tquiet\t")
	for _, kind := range append([]string{"all"}, Kinds...) {
		for i, r := range rows {
			m := results[i][kind]
			n := fmt.Sprint(m.Queries())
			if kind == "none" {
				n = fmt.Sprint(int(m.none))
				fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t\t\t%.3f\t\n", kind, n, r.name, m.Quiet())
				continue
			}
			quiet := ""
			if kind == "all" {
				quiet = fmt.Sprintf("%.3f", m.Quiet())
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n", kind, n, r.name, m.Recall1(), m.Recall5(), m.Recall10(), m.MRR(), quiet)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := promptRecall(ctx, w, s, mem); err != nil {
		return err
	}
	if misses != "" {
		if heldOut(s.Name) {
			return fmt.Errorf("-misses would show the held-out %s split's questions: look at dev only", s.Name)
		}
		return printMisses(ctx, w, s, mem, misses)
	}
	return nil
}

// printMisses shows, for each hybrid miss of a kind, the top hits.
func printMisses(ctx context.Context, w io.Writer, s *Set, mem *store.Memory, kind string) error {
	for _, q := range s.Queries {
		if kind != "all" && q.Kind != kind {
			continue
		}
		res, err := mem.Search(ctx, memory.SearchParams{Query: q.Query, Limit: 5})
		if err != nil {
			return err
		}
		rank := 0
		for i, h := range res.Hits {
			if rank == 0 && answers(q, rankedHit{project: h.Project, files: h.Files}) {
				rank = i + 1
			}
		}
		if rank == 1 || q.Kind == "none" && len(res.Hits) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nMISS@1 (rank %d) %s [%s] %q want %v\n", rank, q.ID, q.Kind, q.Query, q.Relevant)
		for _, h := range res.Hits {
			fmt.Fprintf(w, "   #%d %.3f %s %s %v\n", h.ID, h.Score, h.Project, h.Title, h.Files)
		}
	}
	return nil
}

// printFootprint says what the replayed memory holds per observation, by
// kind of record (the live keys and values, before Badger's overhead).
func printFootprint(ctx context.Context, w io.Writer, mem *store.Memory, observations int) error {
	fams, err := mem.Footprint(ctx)
	if err != nil {
		return err
	}
	fp := store.Parts(fams)
	per := func(b int64) int64 { return b / int64(max(1, observations)) }
	fmt.Fprintf(w, "   stored per observation, live bytes: %d in all (observations %d, their vectors %d, indexes %d, sessions, prompts, summaries and the rest %d)\n",
		per(fp.All), per(fp.Observations), per(fp.Vectors), per(fp.Indexes), per(fp.All-fp.Observations-fp.Vectors-fp.Indexes))
	return nil
}
