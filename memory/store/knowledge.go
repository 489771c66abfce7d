package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/knowledge"
	"github.com/mnemo-dev/mnemo/memory/rules"
)

// Project knowledge (memory/knowledge derives it): derived off the hooks'
// path — after a session ends, by the daemon in the background, or on
// demand — and kept under one key per project, so that SessionStart only
// reads it. A line goes with its records: forgetting a record or marking
// it wrong drops the lines that name it, in the same transaction; a
// derivation keeps only lines whose records all still hold when it is
// stored; SessionStart checks the decisions' (superseded or reverted
// since). The next derivation says what the records left add up to.
//
//	k/<project>                         memory.Knowledge
var pKnowledge = []byte("k/")

// knowledgeSettle bounds the wait for the memory agent's queue before
// knowledge is derived on demand.
const knowledgeSettle = 3 * time.Second

// contextKnowledgeShare is the part of the context's budget the block of
// project knowledge may take.
const contextKnowledgeShare = 0.25

// instructionFiles are the project's own instructions to its agents, which
// the block does not repeat (relative to the project's root).
var instructionFiles = []string{"CLAUDE.md", filepath.Join(".claude", "CLAUDE.md"), "AGENTS.md"}

// Knowledge returns a project's knowledge: the last derived, or derived now
// (p.Refresh, or none yet); the lines whose records no longer hold left
// out.
func (m *Memory) Knowledge(ctx context.Context, p memory.KnowledgeParams) (memory.Knowledge, error) {
	if err := p.Validate(); err != nil {
		return memory.Knowledge{}, err
	}
	project := m.project(p.Project, p.Cwd)
	var k memory.Knowledge
	found := false
	if !p.Refresh {
		err := m.store.view(func(txn *badger.Txn) error {
			err := getJSON(txn, key(pKnowledge, []byte(project)), &k)
			found = err == nil
			if errors.Is(err, memory.ErrNotFound) {
				return nil
			}
			return err
		})
		if err != nil {
			return k, fmt.Errorf("knowledge: %w", err)
		}
	}
	if !found {
		// What the records add up to now: the memory agent's queue first
		// (bounded: what it has not made yet is left for the next time).
		settle, cancel := context.WithTimeout(ctx, knowledgeSettle)
		err := m.WaitIdle(settle)
		cancel()
		if err != nil && ctx.Err() != nil {
			return k, ctx.Err()
		}
		if k, err = m.RefreshKnowledge(ctx, project); err != nil {
			return k, err
		}
	}
	err := m.store.view(func(txn *badger.Txn) error {
		var err error
		k.Lines, err = m.holding(txn, k.Lines)
		return err
	})
	if err != nil {
		return k, fmt.Errorf("knowledge: %w", err)
	}
	return k, nil
}

// knowledgeScan bounds the records a derivation reads: a project's newest
// (a record seen again is one record, with its count), months of work.
// Reading a record (Badger, inflating its frame, JSON) took 36 µs with the
// store's pages in memory (`mnemo-bench -parts knowledge`, 10k) and up to
// 300 µs from disk on the loaded 2-core machine (100k: 6 s for the largest
// project, bound or not): the bound caps the time as a project grows.
const knowledgeScan = 20_000

// RefreshKnowledge derives a project's knowledge from its newest
// knowledgeScan records now and keeps it (off the hooks' path: `just
// bench` has its time at 10k and 100k records).
func (m *Memory) RefreshKnowledge(ctx context.Context, project string) (memory.Knowledge, error) {
	b := knowledge.New(project)
	read := 0
	err := m.store.view(func(txn *badger.Txn) error {
		return scan(txn, key(pObsProject, []byte(project), []byte{0}), true, func(item *badger.Item) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if read++; read > knowledgeScan {
				return errStop
			}
			k := item.Key()
			o, err := m.store.observation(txn, beUint64(k[len(k)-8:]))
			if errors.Is(err, memory.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			var seenIn []uint64
			if o.Count > 1 {
				if seenIn, err = foldSessions(txn, o.ID); err != nil {
					return err
				}
			}
			if o.Type == memory.TypeDecision {
				o.State = m.anchors.state(o)
			}
			b.Add(o, seenIn)
			return nil
		})
	})
	if err != nil {
		return memory.Knowledge{}, fmt.Errorf("derive knowledge: %w", err)
	}
	derived := b.Knowledge(m.now())
	var k memory.Knowledge
	err = m.store.update(ctx, func(txn *badger.Txn) error {
		// A record forgotten or marked wrong while the records were read
		// takes its lines with it.
		k = derived
		var err error
		if k.Lines, err = m.holding(txn, derived.Lines); err != nil {
			return err
		}
		return setJSON(txn, key(pKnowledge, []byte(project)), &k)
	})
	if err != nil {
		return k, fmt.Errorf("keep knowledge: %w", err)
	}
	return k, nil
}

// dropKnowledgeOf drops the knowledge lines of o's project that name o,
// forgotten or marked wrong in txn.
func dropKnowledgeOf(txn *badger.Txn, o *memory.Observation) error {
	k, err := storedKnowledge(txn, o.Project)
	if err != nil || k == nil {
		return err
	}
	kept := k.Lines[:0]
	for _, l := range k.Lines {
		if !slices.Contains(l.IDs, o.ID) {
			kept = append(kept, l)
		}
	}
	if len(kept) == len(k.Lines) {
		return nil
	}
	k.Lines = kept
	return setJSON(txn, key(pKnowledge, []byte(o.Project)), k)
}

// foldSessions are the sessions that saw the fact of observation id again
// (fold.go keeps them, one key per copy).
func foldSessions(txn *badger.Txn, id uint64) ([]uint64, error) {
	var out []uint64
	err := scan(txn, key(pObsFold, be64(id)), false, func(item *badger.Item) error {
		return item.Value(func(v []byte) error {
			if len(v) >= 8 {
				if sid := beUint64(v[:8]); sid != 0 && !slices.Contains(out, sid) {
					out = append(out, sid)
				}
			}
			return nil
		})
	})
	return out, err
}

// holding returns the lines whose records all still hold: none forgotten
// or marked wrong, a decision's neither superseded nor reverted.
func (m *Memory) holding(txn *badger.Txn, lines []memory.KnowledgeLine) ([]memory.KnowledgeLine, error) {
	out := make([]memory.KnowledgeLine, 0, len(lines))
	for _, l := range lines {
		ok, err := m.holds(txn, l)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, l)
		}
	}
	return out, nil
}

func (m *Memory) holds(txn *badger.Txn, l memory.KnowledgeLine) (bool, error) {
	if len(l.IDs) == 0 {
		return false, nil
	}
	for _, id := range l.IDs {
		o, err := m.store.observation(txn, id)
		if errors.Is(err, memory.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if o.Wrong || l.Kind == memory.KnowledgeDecision && (o.SupersededBy != 0 || o.Reverted != 0) {
			return false, nil
		}
	}
	return true, nil
}

// knowledgeSection is the block of project knowledge for a context: the
// project's last derived lines that still hold and that its own
// instructions (CLAUDE.md, AGENTS.md at the root of cwd) do not already
// say, within budget bytes. The lines given and
// left out are recorded in inj, their records in res; a record the
// context gives elsewhere (skip) is not a line's only reason to be given,
// so a decision's line it gives is not repeated.
func (m *Memory) knowledgeSection(txn *badger.Txn, k *memory.Knowledge, cwd string, budget int, skip map[uint64]bool, inj *memory.Injection, res *memory.ContextResult) (string, error) {
	if k == nil {
		return "", nil
	}
	said := instructions(cwd)
	var lines []memory.KnowledgeLine
	for _, l := range k.Lines {
		if l.Kind == memory.KnowledgeDecision && len(l.IDs) == 1 && skip[l.IDs[0]] {
			continue // the section of what was learned and decided gives it
		}
		if name, ok := saidIn(said, l); ok {
			for _, id := range l.IDs[:min(len(l.IDs), 1)] {
				inj.Left = append(inj.Left, memory.InjectionItem{ID: id, Reason: "project knowledge already in " + name + ": " + l.Key})
			}
			continue
		}
		if l.Kind == memory.KnowledgeDecision {
			// Superseded or reverted since it was derived (forgetting or
			// marking a record wrong drops its lines at once).
			ok, err := m.holds(txn, l)
			if err != nil {
				return "", err
			}
			if !ok {
				continue
			}
		}
		lines = append(lines, l)
	}
	text, shown := knowledge.Render(lines, budget)
	for _, l := range shown {
		for _, id := range l.IDs[:min(len(l.IDs), 3)] {
			res.ObservationIDs = append(res.ObservationIDs, id)
			inj.Items = append(inj.Items, memory.InjectionItem{ID: id, Reason: "project knowledge, " + l.Why})
		}
	}
	return text, nil
}

// storedKnowledge reads a project's last derived knowledge; nil when it has
// none.
func storedKnowledge(txn *badger.Txn, project string) (*memory.Knowledge, error) {
	var k memory.Knowledge
	err := getJSON(txn, key(pKnowledge, []byte(project)), &k)
	if errors.Is(err, memory.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &k, nil
}

// replacedRuns maps the records of the passing runs of commands no longer
// offered to why: the context leaves them out, as what no longer says how
// to work here.
func replacedRuns(k *memory.Knowledge) map[uint64]string {
	if k == nil || len(k.Replaced) == 0 {
		return nil
	}
	out := map[uint64]string{}
	for _, l := range k.Replaced {
		for _, id := range l.IDs {
			out[id] = "left out: " + l.Text
		}
	}
	return out
}

// uniqueIDs keeps the first of each id, in order.
func uniqueIDs(ids []uint64) []uint64 {
	out := ids[:0]
	seen := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// instructions reads the project's own instructions files at the root of
// cwd, by name, Mnemo's block taken out of each.
func instructions(cwd string) map[string]string {
	if cwd == "" {
		return nil
	}
	root := memory.RootOf(cwd)
	out := map[string]string{}
	for _, name := range instructionFiles {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil || len(data) > 1<<20 {
			continue
		}
		out[filepath.ToSlash(name)] = rules.Outside(data)
	}
	return out
}

// saidIn names the instructions file that already says what l is about.
func saidIn(files map[string]string, l memory.KnowledgeLine) (string, bool) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if knowledge.Said(files[name], l) {
			return name, true
		}
	}
	return "", false
}

func beUint64(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n
}
