//go:build unix

package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
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
	out = append(out, r)

	for _, host := range []struct {
		name  string
		write func(userHome string, n int) error
	}{{"codex", writeRollouts}, {"gemini", writeGeminiChats}} {
		he, err := newEnv("history-backfill-" + host.name)
		if err != nil {
			return nil, err
		}
		if err := host.write(he.userHome, n); err != nil {
			return nil, fmt.Errorf("%s transcripts: %w", host.name, err)
		}
		r, err := measureHistoryCommand(ctx, he, n, "mnemo backfill "+host.name, "backfill", host.name)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// benchSessions calls session for each session of the n tool events of a
// back-fill benchmark (sessions of 10 turns of 10 edits), with its id, its
// folder and a writer of JSON lines into path.
func benchSessions(n int, path func(sid, cwd string) string, session func(sid, cwd string, line func(any) error) error) error {
	for s := range max(1, n/100) {
		sid := fmt.Sprintf("01a2%04x-0000-7000-8000-%012d", s, s)
		cwd := fmt.Sprintf("/src/project-%02d", s%20)
		p := path(sid, cwd)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		enc := json.NewEncoder(w)
		if err := session(sid, cwd, func(v any) error { return enc.Encode(v) }); err != nil {
			f.Close()
			return err
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// writeRollouts writes Codex CLI rollouts (0.169's records) holding n
// tool events under ~/.codex/sessions: each edit an apply_patch call and
// its output.
func writeRollouts(userHome string, n int) error {
	t0 := time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
	return benchSessions(n, func(sid, _ string) string {
		return filepath.Join(userHome, ".codex", "sessions", "2025", "11", "01", "rollout-2025-11-01T09-00-00-"+sid+".jsonl")
	}, func(sid, cwd string, line func(any) error) error {
		at := t0
		rec := func(typ string, payload map[string]any) error {
			at = at.Add(time.Second)
			return line(map[string]any{"timestamp": at.Format(time.RFC3339Nano), "type": typ, "payload": payload})
		}
		if err := rec("session_meta", map[string]any{"id": sid, "cwd": cwd, "originator": "codex_exec", "cli_version": "0.169.0"}); err != nil {
			return err
		}
		for turn := range 10 {
			tid := fmt.Sprintf("%s-t%d", sid, turn)
			if err := rec("event_msg", map[string]any{"type": "task_started", "turn_id": tid}); err != nil {
				return err
			}
			if err := rec("event_msg", map[string]any{"type": "item_completed", "turn_id": tid, "item": map[string]any{
				"type": "UserMessage", "id": tid + "-u", "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("turn %d: rename the handlers of pkg%d", turn, turn)}}}}); err != nil {
				return err
			}
			for i := range 10 {
				id := fmt.Sprintf("call_%s_%d_%d", sid, turn, i)
				file := fmt.Sprintf("pkg%d/handler%d.go", turn, i)
				patch := fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n@@\n-func oldName%d() {}\n+func newName%d() {}\n*** End Patch\n", file, i, i)
				if err := rec("response_item", map[string]any{"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": id}); err != nil {
					return err
				}
				if err := rec("response_item", map[string]any{"type": "custom_tool_call_output", "call_id": id,
					"output": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM " + file + "\n"}); err != nil {
					return err
				}
			}
			if err := rec("event_msg", map[string]any{"type": "task_complete", "turn_id": tid, "last_agent_message": fmt.Sprintf("Renamed the handlers of pkg%d.", turn)}); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeGeminiChats writes Gemini CLI chats (0.61's JSON lines) holding n
// tool events under ~/.gemini/tmp, with ~/.gemini/projects.json naming
// their folders: each edit a replace call of a gemini message, written
// twice as the CLI writes it (before and after its tool ran).
func writeGeminiChats(userHome string, n int) error {
	gemini := filepath.Join(userHome, ".gemini")
	projects := map[string]string{}
	t0 := time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
	err := benchSessions(n, func(sid, cwd string) string {
		name := filepath.Base(cwd)
		projects[cwd] = name
		return filepath.Join(gemini, "tmp", name, "chats", "session-2025-11-01T09-00-"+sid[:8]+".jsonl")
	}, func(sid, cwd string, line func(any) error) error {
		at := t0
		ts := func() string { at = at.Add(time.Second); return at.Format(time.RFC3339Nano) }
		sum := sha256.Sum256([]byte(cwd))
		if err := line(map[string]any{"sessionId": sid, "projectHash": hex.EncodeToString(sum[:]), "startTime": ts(), "kind": "main"}); err != nil {
			return err
		}
		for turn := range 10 {
			if err := line(map[string]any{"id": fmt.Sprintf("%s-u%d", sid, turn), "timestamp": ts(), "type": "user",
				"content": []any{map[string]any{"text": fmt.Sprintf("turn %d: rename the handlers of pkg%d", turn, turn)}}}); err != nil {
				return err
			}
			for i := range 10 {
				id := fmt.Sprintf("%s-g%d-%d", sid, turn, i)
				file := filepath.Join(cwd, fmt.Sprintf("pkg%d/handler%d.go", turn, i))
				msg := map[string]any{"id": id, "timestamp": ts(), "type": "gemini", "content": "Renaming."}
				if err := line(msg); err != nil {
					return err
				}
				out := "Successfully modified file: " + file + " (1 replacements)."
				msg["toolCalls"] = []any{map[string]any{"id": id + "-call", "name": "replace", "status": "success", "timestamp": ts(),
					"args":   map[string]any{"file_path": file, "old_string": fmt.Sprintf("oldName%d", i), "new_string": fmt.Sprintf("newName%d", i)},
					"result": []any{map[string]any{"functionResponse": map[string]any{"id": id + "-call", "name": "replace", "response": map[string]any{"output": out}}}}}}
				if err := line(msg); err != nil {
					return err
				}
			}
			if err := line(map[string]any{"id": fmt.Sprintf("%s-e%d", sid, turn), "timestamp": ts(), "type": "gemini",
				"content": fmt.Sprintf("Renamed the handlers of pkg%d.", turn)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	b, err := json.Marshal(map[string]any{"projects": projects})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(gemini, "projects.json"), b, 0o600)
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
	return benchSessions(n, func(sid, cwd string) string {
		return filepath.Join(dir, strings.ReplaceAll(cwd, "/", "-"), sid+".jsonl")
	}, func(sid, cwd string, enc func(any) error) error {
		line := func(v map[string]any) error {
			v["sessionId"], v["cwd"], v["isSidechain"] = sid, cwd, false
			return enc(v)
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
		return nil
	})
}
