//go:build unix

package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the claude-mem database the import reads

	"github.com/mnemo-dev/mnemo/memory"
)

// historyResult is one way of bringing history in: the command's wall
// time, its own peak RSS, the time until the daemon's store caught up, the
// daemon's peak RSS, and what the store holds after.
type historyResult struct {
	what          string
	records       int
	command       time.Duration
	caughtUp      time.Duration
	commandPeakMB float64
	daemonPeakMB  float64
	counts        memory.Counts
	note          string
}

// measureHistory brings n records of history into fresh homes: `mnemo
// import claude-mem` of a claude-mem database (claude-mem's schema,
// adapters/claudemem/testdata/schema-v49.sql) of n observations, and
// `mnemo backfill claude-code` of transcripts holding n tool events. Each
// home has its own daemon, started by the benchmark so that its peak RSS
// (VmHWM) is known.
func measureHistory(ctx context.Context, newEnv func(name string) (*env, error), n int) ([]historyResult, error) {
	var out []historyResult
	ie, err := newEnv("history-import")
	if err != nil {
		return nil, err
	}
	db := filepath.Join(filepath.Dir(ie.home), "claude-mem.db")
	if err := writeClaudeMemDB(db, n); err != nil {
		return nil, fmt.Errorf("claude-mem database: %w", err)
	}
	r, err := measureHistoryCommand(ctx, ie, n, "mnemo import claude-mem", "import", "claude-mem", "--db", db)
	if err != nil {
		return nil, err
	}
	out = append(out, r)

	be, err := newEnv("history-backfill")
	if err != nil {
		return nil, err
	}
	if err := writeTranscripts(filepath.Join(be.userHome, ".claude", "projects"), n); err != nil {
		return nil, fmt.Errorf("transcripts: %w", err)
	}
	r, err = measureHistoryCommand(ctx, be, n, "mnemo backfill claude-code", "backfill", "claude-code")
	if err != nil {
		return nil, err
	}
	return append(out, r), nil
}

// measureHistoryCommand starts e's daemon, runs the command, then waits
// until the queue is empty and the counts stay put.
func measureHistoryCommand(ctx context.Context, e *env, n int, what string, args ...string) (historyResult, error) {
	res := historyResult{what: what, records: n}
	d, err := e.startDaemon()
	if err != nil {
		return res, err
	}
	defer d.stop()
	if err := e.waitServing(ctx, d, 30*time.Second); err != nil {
		return res, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(e.bin, "mnemo"), args...)
	cmd.Env = e.environ()
	var errb strings.Builder
	cmd.Stderr = &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return res, fmt.Errorf("%s: %w: %s", what, err, strings.TrimSpace(errb.String()))
	}
	res.command = time.Since(start)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.commandPeakMB = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	// Caught up: nothing queued, and the counts the same for a second
	// since they last changed.
	var last memory.Counts
	changed := time.Now()
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		st, err := e.status(ctx)
		if err != nil {
			return res, err
		}
		if st.Counts != last || st.Counts.Queued > 0 {
			last, changed = st.Counts, time.Now()
		} else if time.Since(changed) >= time.Second {
			break
		}
		if time.Now().After(deadline) {
			res.note = "did not settle within 10 minutes"
			break
		}
	}
	res.caughtUp = changed.Sub(start)
	res.counts = last
	r, err := d.rssMB()
	res.daemonPeakMB = r.peak
	return res, err
}

// writeClaudeMemDB makes a claude-mem database of n observations with
// claude-mem's schema: sessions of 100 observations, a prompt for every
// 10 and a summary for every session.
func writeClaudeMemDB(path string, n int) error {
	schema, err := os.ReadFile(filepath.Join("adapters", "claudemem", "testdata", "schema-v49.sql"))
	if err != nil {
		return fmt.Errorf("run the bench from the repository's root: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(string(schema)); err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	at := func(i int) (string, int64) {
		t := base.Add(time.Duration(i) * time.Minute)
		return t.Format("2006-01-02T15:04:05.000Z"), t.UnixMilli()
	}
	sessions := max(1, n/100)
	for s := range sessions {
		iso, ms := at(s * 100)
		project := fmt.Sprintf("project-%02d", s%20)
		if _, err := tx.Exec(`INSERT INTO sdk_sessions (id, content_session_id, memory_session_id, project, user_prompt, started_at, started_at_epoch, status, prompt_counter)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'completed', 10)`, s+1, fmt.Sprintf("cc-%06d", s), fmt.Sprintf("sdk-%06d", s), project, "work on "+project, iso, ms); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO session_summaries (memory_session_id, project, request, investigated, learned, completed, next_steps, prompt_number, created_at, created_at_epoch)
			VALUES (?, ?, ?, ?, ?, ?, ?, 10, ?, ?)`, fmt.Sprintf("sdk-%06d", s), project, "work on "+project, "the handlers", "the handlers were misnamed",
			"renamed the handlers", "run the integration tests", iso, ms); err != nil {
			return err
		}
	}
	for i := range n {
		s := i / 100
		iso, ms := at(i)
		project := fmt.Sprintf("project-%02d", s%20)
		number := i%100/10 + 1
		if i%10 == 0 {
			if _, err := tx.Exec(`INSERT INTO user_prompts (session_db_id, content_session_id, prompt_number, prompt_text, created_at, created_at_epoch) VALUES (?, ?, ?, ?, ?, ?)`,
				s+1, fmt.Sprintf("cc-%06d", s), number, fmt.Sprintf("rename handler %d and fix its callers", i), iso, ms); err != nil {
				return err
			}
		}
		file := fmt.Sprintf("pkg%03d/handler%05d.go", i%997, i)
		facts, _ := json.Marshal([]string{"renamed oldName" + strconv.Itoa(i) + " to newName" + strconv.Itoa(i), "callers in " + file})
		files, _ := json.Marshal([]string{file})
		if _, err := tx.Exec(`INSERT INTO observations (memory_session_id, project, type, title, subtitle, facts, narrative, concepts, files_read, files_modified, prompt_number, created_at, created_at_epoch, content_hash)
			VALUES (?, ?, 'refactor', ?, ?, ?, ?, '["how-it-works"]', '[]', ?, ?, ?, ?, ?)`,
			fmt.Sprintf("sdk-%06d", s), project, fmt.Sprintf("Renamed handler %d in %s", i, file), "oldName → newName",
			string(facts), fmt.Sprintf("Handler %d was renamed so that its name says what it serves.", i), string(files), number, iso, ms, fmt.Sprintf("h%08d", i)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// writeTranscripts writes Claude Code transcripts holding n tool events:
// sessions of 10 turns of 10 edits, each edit a tool_use and its result.
func writeTranscripts(dir string, n int) error {
	sessions := max(1, n/100)
	for s := range sessions {
		sid := fmt.Sprintf("bf-%06d", s)
		cwd := fmt.Sprintf("/src/project-%02d", s%20)
		path := filepath.Join(dir, strings.ReplaceAll(cwd, "/", "-"), sid+".jsonl")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		enc := json.NewEncoder(w)
		line := func(v map[string]any) error {
			v["sessionId"], v["cwd"], v["isSidechain"] = sid, cwd, false
			return enc.Encode(v)
		}
		for turn := range 10 {
			if err := line(map[string]any{"type": "user", "uuid": fmt.Sprintf("%s-u%d", sid, turn),
				"message": map[string]any{"role": "user", "content": fmt.Sprintf("turn %d: rename the handlers of pkg%d", turn, turn)}}); err != nil {
				return err
			}
			for i := range 10 {
				id := fmt.Sprintf("toolu_%s_%d_%d", sid, turn, i)
				file := filepath.Join(cwd, fmt.Sprintf("pkg%d/handler%d.go", turn, i))
				if err := line(map[string]any{"type": "assistant", "uuid": id + "-a", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{
					"type": "tool_use", "id": id, "name": "Edit",
					"input": map[string]any{"file_path": file, "old_string": fmt.Sprintf("oldName%d", i), "new_string": fmt.Sprintf("newName%d", i), "replace_all": false},
				}}}}); err != nil {
					return err
				}
				if err := line(map[string]any{"type": "user", "uuid": id + "-r",
					"message":       map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": "The file " + file + " has been updated successfully."}}},
					"toolUseResult": map[string]any{"filePath": file, "oldString": fmt.Sprintf("oldName%d", i), "newString": fmt.Sprintf("newName%d", i), "userModified": false, "replaceAll": false}}); err != nil {
					return err
				}
			}
			if err := line(map[string]any{"type": "assistant", "uuid": fmt.Sprintf("%s-e%d", sid, turn),
				"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("Renamed the handlers of pkg%d.", turn)}}}}); err != nil {
				return err
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
