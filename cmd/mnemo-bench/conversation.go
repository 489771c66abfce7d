//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/memory/transcript"
	"github.com/mnemo-dev/mnemo/vector"
)

// The conversation rows: what reading a turn's texts at its end costs the
// daemon (memory/transcript on a big transcript, as Claude Code leaves
// it), and what the records of what turns said cost in the store. They
// run in-process: the read is the daemon's own function, the records are
// made by the store and the local agent from generated turns.

// convTurns is how many turns the generated transcript has; its size
// grows to about 60 MB.
const convTurns = 1200

// conversationResult is what the conversation rows measured.
type conversationResult struct {
	fileMB     float64 // the transcript's size at the end
	reads      dist    // ReadLastTurn at the last turns' ends
	readBytes  []int64 // bytes each read read
	complete   int     // reads that reached the turn's prompt
	texts      int     // texts found by the last read
	turns      int     // turns stored
	records    int     // conversation records made of them (no tool call)
	others     int     // tool records
	whys       int     // tool records that got a why
	recordB    []int   // the stored JSON of each conversation record
	toolB      []int   // and of each tool record
	livePerObs int64   // the store's live bytes per observation
}

// genTurn appends one turn of Claude Code transcript lines to w: a
// prompt, 0 to 10 tool calls each after a short text, tool results of
// 200 B to 6 KB (one in 150 of 256 KB: a big file read), each twice (the
// message's and the line's toolUseResult, as Claude Code writes them),
// and an answer of 200 B to 3 KB. It returns the turn's answer.
func genTurn(w *bufio.Writer, r *rand.Rand, turn int) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	line := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	line(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":%s},"uuid":"u%d","sessionId":"bench"}`, q(fmt.Sprintf("Turn %d: the nightly export of shard %d times out on Mondays, find out why.", turn, r.IntN(64))), turn)
	for i := range r.IntN(11) {
		id := fmt.Sprintf("toolu_%d_%d", turn, i)
		line(`{"isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":%s}]}}`,
			q(fmt.Sprintf("Checking shard %d's worker log next: if the archive job overlaps the export, the lock wait shows there.", i)))
		line(`{"isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":%s,"name":"Read","input":{"file_path":"/src/app/shard%d.log"}}]}}`, q(id), i)
		n := 200 + r.IntN(6<<10)
		if r.IntN(150) == 0 {
			n = 256 << 10
		}
		out := strings.Repeat("2025-10-06 02:15:00 INFO worker: export shard waiting on lock invoice_lines\n", n/76+1)[:n]
		line(`{"isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":%s,"type":"tool_result","content":%s}]},"toolUseResult":{"type":"text","file":{"content":%s}}}`, q(id), q(out), q(out))
	}
	answer := "The root cause is the weekly archive job: it deletes old invoice lines in one transaction that holds the table lock while the export waits on it. " +
		strings.Repeat("Batching the deletes at 5,000 rows per transaction keeps every lock wait under a second. ", 1+r.IntN(30))
	line(`{"isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":%s}]}}`, q(answer))
	return answer
}

// measureConversation writes a transcript of convTurns turns, reading its
// last turn (as the daemon does at a turn's end) after each of the last
// 200, and stores 1,000 generated turns through the store's stages (the
// texts as a back-fill sends them) to weigh their records.
func measureConversation(ctx context.Context, root string) (conversationResult, error) {
	var res conversationResult
	path := filepath.Join(root, "transcript.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return res, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(7, 28))
	for turn := range convTurns {
		genTurn(w, r, turn)
		if turn < convTurns-200 {
			continue
		}
		if err := w.Flush(); err != nil {
			return res, err
		}
		start := time.Now()
		t, err := transcript.ReadLastTurn(path, transcript.DefaultMaxBytes)
		if err != nil {
			return res, err
		}
		res.reads = append(res.reads, time.Since(start))
		res.readBytes = append(res.readBytes, t.Read)
		res.texts = len(t.Texts)
		if t.Complete {
			res.complete++
		}
	}
	if fi, err := f.Stat(); err == nil {
		res.fileMB = float64(fi.Size()) / (1 << 20)
	}

	// The records: 1,000 turns of 0 to 6 tool calls (edits, each after a
	// text that says why) and an answer.
	m, err := store.Open(ctx, store.Options{Dir: filepath.Join(root, "db"), NoSync: true, Embedder: vector.NewHashEmbedder()})
	if err != nil {
		return res, err
	}
	defer m.Close()
	for turn := range 1000 {
		csid := fmt.Sprintf("bench-%d", turn/10)
		if _, err := m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: csid, Cwd: "/src/app", Platform: "claude-code",
			Prompt: fmt.Sprintf("Turn %d: the nightly export of shard %d times out on Mondays, find out why and fix it.", turn, r.IntN(64))}); err != nil {
			return res, err
		}
		var texts []memory.TurnText
		for i := range r.IntN(7) {
			id := fmt.Sprintf("t%d-%d", turn, i)
			texts = append(texts, memory.TurnText{Text: fmt.Sprintf("Shard %d's archive step holds the lock; I'll batch its deletes in internal/shard%d/archive.go.", i, i), ToolUseIDs: []string{id}})
			if _, err := m.PostToolUse(ctx, memory.ToolUseParams{ContentSessionID: csid, Cwd: "/src/app", ToolName: "Edit", ToolUseID: id,
				ToolInput:    json.RawMessage(fmt.Sprintf(`{"file_path":"/src/app/internal/shard%d/archive.go","old_string":"deleteAll(tx)","new_string":"deleteBatches(tx, %d)"}`, i, 5000+turn)),
				ToolResponse: json.RawMessage(fmt.Sprintf(`{"filePath":"/src/app/internal/shard%d/archive.go"}`, i))}); err != nil {
				return res, err
			}
		}
		var b strings.Builder
		b.WriteString(fmt.Sprintf("The root cause of turn %d is the weekly archive job: it deletes old invoice lines in one transaction that holds the table lock while the export waits on it. ", turn))
		for range 1 + r.IntN(20) {
			b.WriteString("Batching the deletes at 5,000 rows per transaction keeps every lock wait under a second. ")
		}
		texts = append(texts, memory.TurnText{Text: b.String()})
		if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: csid, Cwd: "/src/app", Texts: texts, At: time.Now().Add(-time.Hour)}); err != nil {
			return res, err
		}
	}
	if err := m.WaitIdle(ctx); err != nil {
		return res, err
	}
	res.turns = 1000
	var buf strings.Builder
	if _, err := m.Export(ctx, &buf, false); err != nil {
		return res, err
	}
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec memory.Record
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Observation == nil {
			continue
		}
		o := rec.Observation
		b, _ := json.Marshal(o)
		if o.Tool == "" {
			res.records++
			res.recordB = append(res.recordB, len(b))
		} else {
			res.others++
			res.toolB = append(res.toolB, len(b))
			if o.Why != "" {
				res.whys++
			}
		}
	}
	fams, err := m.Footprint(ctx)
	if err != nil {
		return res, err
	}
	res.livePerObs = store.Parts(fams).All / int64(max(1, res.records+res.others))
	return res, sc.Err()
}

func (r conversationResult) rows() []row {
	median := func(xs []int) int {
		if len(xs) == 0 {
			return 0
		}
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	readKB := make([]int, len(r.readBytes))
	for i, b := range r.readBytes {
		readKB[i] = int(b >> 10)
	}
	return []row{
		{"turn-end read of a Claude Code transcript (memory/transcript, in the daemon)", p50p99(r.reads), "", "",
			fmt.Sprintf("the last turn of a %.0f MB transcript of %d turns (0–10 tool calls each after a text, results of 200 B–6 KB, one in 150 of 256 KB, each written twice as the CLI does), read at each of the last %d turns' ends; median %d KB read, the most %d KB (the bound: %d MB), %d of %d reached the turn's prompt, %d texts in the last; page cache warm (the CLI has just written it)",
				r.fileMB, convTurns, len(r.reads), median(readKB), slices.Max(append([]int{0}, readKB...)), transcript.DefaultMaxBytes>>20, r.complete, len(r.reads), r.texts)},
		{"conversation records, bytes per record", fmt.Sprintf("median %d B", median(r.recordB)), "", "",
			fmt.Sprintf("%d turns of 0–6 edits (each after a text that says why) and an answer of 0.2–2 KB, stored through the stages with the local agent: %d records of what the turns said (stored JSON: median %d B, at most %d B), %d tool records (median %d B; %d got their why); the store's live bytes per observation, all included, %d B",
				r.turns, r.records, median(r.recordB), slices.Max(append([]int{0}, r.recordB...)), r.others, median(r.toolB), r.whys, r.livePerObs)},
	}
}
