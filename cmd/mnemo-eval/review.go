package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// The review's rule measured (-review-repo): how many records a rule of
// "needs review after N days unconfirmed" flags on real work. A git
// repository's history is replayed, commit by commit at its commit time,
// into a working folder and through the stages of the real store: the
// commits of one author (-review-author; every author when empty) are the
// work Mnemo saw, each changed file an Edit whose old and new text are the
// lines the commit removed and added, anchored as the hook's event is;
// the other authors' commits change the files as a pull does, unseen.
// Every week of the history, each store (one per threshold, the same
// events) counts the records that need review then (mnemo/review's
// total), beside the records stored and those changed since (the
// "at once" store).

// reviewOptions are -review-repo's flags.
type reviewOptions struct {
	repo, author, days string
}

// reviewFlags adds -review-repo, -review-author and -review-days to fs.
func reviewFlags(fs *flag.FlagSet) *reviewOptions {
	o := &reviewOptions{}
	fs.StringVar(&o.repo, "review-repo", "", "measure the review's rule on this git repository's history instead (review.go)")
	fs.StringVar(&o.author, "review-author", "", "with -review-repo: the author whose commits Mnemo saw (others' change the files unseen); empty: every author's")
	fs.StringVar(&o.days, "review-days", "1,3,7,14,30", "with -review-repo: the thresholds to measure, in days")
	return o
}

// run measures the rule with the flags' repository, author and days.
func (o *reviewOptions) run(ctx context.Context, w io.Writer) error {
	var days []int
	for _, d := range strings.Split(o.days, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(d))
		if err != nil || n < 1 {
			return fmt.Errorf("-review-days: %q is not a number of days", d)
		}
		days = append(days, n)
	}
	return runReview(ctx, w, o.repo, o.author, days)
}

// reviewCommit is one commit of the history, with the lines each file
// gained and lost.
type reviewCommit struct {
	hash   string
	time   time.Time
	author string
	files  []reviewFile
}

type reviewFile struct {
	path           string
	deleted        bool
	binary         bool
	added, removed []string
}

// reviewHistory reads the repository's history, oldest first, without
// merges.
func reviewHistory(repo string) ([]reviewCommit, error) {
	cmd := exec.Command("git", "-C", repo, "log", "--reverse", "--no-merges", "--no-renames", "--no-color", "-U0", "-p",
		"--format=%x00%H %ct %ae")
	out, err := cmd.Output()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && len(ee.Stderr) > 0 {
		return nil, fmt.Errorf("git log in %s: %s", repo, strings.TrimSpace(string(ee.Stderr)))
	}
	if err != nil {
		return nil, fmt.Errorf("git log in %s: %w", repo, err)
	}
	var (
		commits []reviewCommit
		c       *reviewCommit
		f       *reviewFile
	)
	for line := range strings.SplitSeq(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "\x00"):
			parts := strings.Fields(line[1:])
			if len(parts) != 3 {
				return nil, fmt.Errorf("git log: bad header %q", line)
			}
			sec, err := strconv.ParseInt(parts[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("git log: bad time %q", line)
			}
			commits = append(commits, reviewCommit{hash: parts[0], time: time.Unix(sec, 0), author: parts[2]})
			c, f = &commits[len(commits)-1], nil
		case c == nil:
		case strings.HasPrefix(line, "diff --git "):
			c.files = append(c.files, reviewFile{})
			f = &c.files[len(c.files)-1]
		case f == nil:
		case strings.HasPrefix(line, "deleted file mode"):
			f.deleted = true
		case strings.HasPrefix(line, "Binary files"):
			f.binary = true
		case strings.HasPrefix(line, "--- "):
			if p, ok := strings.CutPrefix(line, "--- a/"); ok {
				f.path = p
			}
		case strings.HasPrefix(line, "+++ "):
			if p, ok := strings.CutPrefix(line, "+++ b/"); ok {
				f.path = p
			}
		case strings.HasPrefix(line, "+"):
			f.added = append(f.added, line[1:])
		case strings.HasPrefix(line, "-"):
			f.removed = append(f.removed, line[1:])
		}
	}
	return commits, nil
}

// catFile reads files of commits through one `git cat-file --batch`.
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func openCatFile(repo string) (*catFile, error) {
	cmd := exec.Command("git", "-C", repo, "cat-file", "--batch")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &catFile{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// read returns the file at path in commit; nil when it is not there.
func (c *catFile) read(commit, path string) ([]byte, error) {
	if _, err := fmt.Fprintf(c.in, "%s:%s\n", commit, path); err != nil {
		return nil, err
	}
	head, err := c.out.ReadString('\n')
	if err != nil {
		return nil, err
	}
	fields := strings.Fields(head)
	if len(fields) < 3 {
		return nil, nil // "<name> missing"
	}
	n, err := strconv.Atoi(fields[2])
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %q", head)
	}
	b := make([]byte, n+1) // and its newline
	if _, err := io.ReadFull(c.out, b); err != nil {
		return nil, err
	}
	return b[:n], nil
}

func (c *catFile) close() {
	c.in.Close()
	c.cmd.Wait()
}

// reviewStore is one threshold's store.
type reviewStore struct {
	days   int // -1: at once
	m      *store.Memory
	totals []int // needs review, each week
	// flagged are the records listed last week; flags counts the records
	// that entered the list, cleared those that left it while their text
	// was still in their file: a later record saw the file as it is now
	// (or the file went back), with no person's word.
	flagged        map[uint64]bool
	flags, cleared int
}

// runReview replays repo's history and prints, per threshold, how many
// records need review week by week.
func runReview(ctx context.Context, w io.Writer, repo, author string, thresholds []int) error {
	commits, err := reviewHistory(repo)
	if err != nil {
		return err
	}
	if len(commits) == 0 {
		return fmt.Errorf("%s: no commits", repo)
	}
	cat, err := openCatFile(repo)
	if err != nil {
		return err
	}
	defer cat.close()
	tmp, err := os.MkdirTemp("", "mnemo-eval-review-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, filepath.Base(filepath.Clean(repo)))
	if err := os.MkdirAll(filepath.Join(work, ".git"), 0o700); err != nil {
		return err
	}
	var (
		clockMu sync.Mutex
		clock   time.Time
	)
	now := func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		return clock
	}
	set := func(t time.Time) {
		clockMu.Lock()
		clock = t
		clockMu.Unlock()
	}
	set(commits[0].time)
	var stores []*reviewStore
	for _, d := range append([]int{-1}, thresholds...) {
		after := time.Duration(d) * 24 * time.Hour
		if d < 0 {
			after = -1
		}
		m, err := store.Open(ctx, store.Options{InMemory: true, Now: now, ReviewAfter: after, NoSync: true})
		if err != nil {
			return err
		}
		defer m.Close()
		stores = append(stores, &reviewStore{days: d, m: m})
	}
	project := filepath.Base(work)
	var (
		recorded, edits int
		sessions        = map[string]bool{}
		stored          []int
		week            = 7 * 24 * time.Hour
		next            = commits[0].time.Add(week)
	)
	measure := func(at time.Time) error {
		set(at)
		for _, s := range stores {
			if err := s.m.WaitIdle(ctx); err != nil {
				return err
			}
			r, err := s.m.Review(ctx, memory.ReviewParams{Project: project, Limit: memory.MaxLimit})
			if err != nil {
				return err
			}
			if r.More {
				return fmt.Errorf("more than %d records need review: the measure counts them by id", memory.MaxLimit)
			}
			s.totals = append(s.totals, r.Total)
			now := map[uint64]bool{}
			for _, it := range r.Items {
				now[it.Observation.ID] = true
				if !s.flagged[it.Observation.ID] {
					s.flags++
				}
			}
			var left []uint64
			for id := range s.flagged {
				if !now[id] {
					left = append(left, id)
				}
			}
			if len(left) > 0 {
				g, err := s.m.Get(ctx, memory.IDsParams{IDs: left})
				if err != nil {
					return err
				}
				for _, o := range g.Observations {
					if o.State == memory.StateChanged || o.State == memory.StateCurrent {
						s.cleared++
					}
				}
			}
			s.flagged = now
		}
		st, err := stores[0].m.Status(ctx)
		if err != nil {
			return err
		}
		stored = append(stored, st.Counts.Observations)
		return nil
	}
	for _, c := range commits {
		for !c.time.Before(next) {
			if err := measure(next); err != nil {
				return err
			}
			next = next.Add(week)
		}
		set(c.time)
		mine := author == "" || c.author == author
		if mine {
			recorded++
		}
		csid := "day-" + c.time.UTC().Format(time.DateOnly)
		for _, f := range c.files {
			if f.path == "" || f.binary {
				continue
			}
			path := filepath.Join(work, filepath.FromSlash(f.path))
			if f.deleted {
				os.Remove(path)
				continue
			}
			b, err := cat.read(c.hash, f.path)
			if err != nil {
				return err
			}
			if b == nil || bytes.IndexByte(b, 0) >= 0 {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				return err
			}
			if !mine || len(f.added)+len(f.removed) == 0 {
				continue
			}
			// The anchor keeps at most 64 lines of what an edit wrote; an
			// edit of more is cut there, as a tool's input is bounded.
			in, _ := json.Marshal(map[string]any{"file_path": path, "old_string": strings.Join(f.removed[:min(len(f.removed), 64)], "\n"), "new_string": strings.Join(f.added[:min(len(f.added), 64)], "\n")})
			out, _ := json.Marshal(map[string]any{"filePath": path})
			for _, s := range stores {
				if !sessions[csid] {
					if _, err := s.m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: csid, Cwd: work, Prompt: "work of " + csid}); err != nil {
						return err
					}
				}
				if _, err := s.m.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: csid, Cwd: work, ToolName: "Edit", ToolInput: in, ToolResponse: out}); err != nil {
					return err
				}
			}
			sessions[csid] = true
			edits++
		}
	}
	if err := measure(next); err != nil {
		return err
	}
	who := "every author"
	if author != "" {
		who = author + " (the others' commits change the files unseen)"
	}
	fmt.Fprintf(w, "review rule on %s: %d commits %s – %s, %d of them recorded (%s), %d edits, %d weeks measured, %d records at the end\n",
		repo, len(commits), commits[0].time.UTC().Format(time.DateOnly), commits[len(commits)-1].time.UTC().Format(time.DateOnly),
		recorded, who, edits, len(stored), stored[len(stored)-1])
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "needs review after\tlisted weekly: median\tp90\tmax\tat the end\tshare at the end\tflagged in all\tper week\tcleared with no person's word\t")
	for _, s := range stores {
		name := strconv.Itoa(s.days) + " days"
		if s.days < 0 {
			name = "at once (every changed record)"
		}
		sorted := slices.Sorted(slices.Values(s.totals))
		end := s.totals[len(s.totals)-1]
		share := 0.0
		if n := stored[len(stored)-1]; n > 0 {
			share = 100 * float64(end) / float64(n)
		}
		cleared := 0.0
		if s.flags > 0 {
			cleared = 100 * float64(s.cleared) / float64(s.flags)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f%%\t%d\t%.2f\t%d (%.0f%%)\t\n", name, sorted[len(sorted)/2], sorted[len(sorted)*9/10], sorted[len(sorted)-1], end, share,
			s.flags, float64(s.flags)/float64(len(s.totals)), s.cleared, cleared)
	}
	return tw.Flush()
}
