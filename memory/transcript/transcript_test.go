package transcript_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/transcript"
)

// Lines as Claude Code 2.1 writes them: one content block a line.
func userLine(text string) string {
	return fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":%s},"uuid":"u"}`, quote(text))
}

func userBlocksLine(text string) string {
	return fmt.Sprintf(`{"isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"text","text":%s}]}}`, quote(text))
}

func toolResultLine(id, out string) string {
	return fmt.Sprintf(`{"isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":%s,"type":"tool_result","content":%s,"is_error":false}]},"toolUseResult":{"stdout":%s}}`, quote(id), quote(out), quote(out))
}

func textLine(text string) string {
	return fmt.Sprintf(`{"isSidechain":false,"type":"assistant","message":{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":%s}],"stop_reason":null}}`, quote(text))
}

func thinkingLine(text string) string {
	return fmt.Sprintf(`{"isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[{"type":"thinking","thinking":%s,"signature":"x"}]}}`, quote(text))
}

func toolUseLine(id string) string {
	return fmt.Sprintf(`{"isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":%s,"name":"Bash","input":{"command":"ls"}}]}}`, quote(id))
}

func sidechainLine(text string) string {
	return fmt.Sprintf(`{"isSidechain":true,"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":%s}]}}`, quote(text))
}

// filler is a big line of the kind that makes most of a transcript
// (Claude Code stores whole API requests in some).
func filler(n int) string {
	return fmt.Sprintf(`{"type":"api-request-blob","blob":%s}`, quote(strings.Repeat("x", n)))
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func write(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func texts(pairs ...any) []memory.TurnText {
	var out []memory.TurnText
	for _, p := range pairs {
		switch p := p.(type) {
		case string:
			out = append(out, memory.TurnText{Text: p})
		case []string:
			out[len(out)-1].ToolUseIDs = p
		}
	}
	return out
}

func TestReadLastTurn(t *testing.T) {
	big := filler(100 << 10) // longer than one read chunk
	tests := []struct {
		name       string
		lines      []string // nil: the recorded transcript
		max        int64
		wantPrompt string
		wantTexts  []memory.TurnText
		complete   bool
	}{
		{
			name:       "a transcript recorded from Claude Code 2.1.330",
			wantPrompt: "SCENARIO:bash do the task",
			wantTexts:  texts("Calling Bash (scenario bash step 0).", []string{"toolu_fake_0001"}, "Done: scenario bash finished after 1 step(s)."),
			complete:   true,
		},
		{
			name: "the last turn only, each text with the calls right after it",
			lines: []string{userLine("earlier"), textLine("old answer"),
				userLine("why does it hang?"), thinkingLine("hmm"), textLine("Let me look at the pool."), toolUseLine("t1"), toolUseLine("t2"),
				toolResultLine("t1", "a"), toolResultLine("t2", "b"), toolUseLine("t3"), toolResultLine("t3", "c"),
				textLine("The pool is exhausted."), textLine("Raise MaxIdleConns.")},
			wantPrompt: "why does it hang?",
			wantTexts:  texts("Let me look at the pool.", []string{"t1", "t2"}, "The pool is exhausted.", "Raise MaxIdleConns."),
			complete:   true,
		},
		{
			name:       "prompts as text blocks; a text after a result explains the next call",
			lines:      []string{userBlocksLine("first"), textLine("one"), userBlocksLine("second"), toolUseLine("t1"), toolResultLine("t1", "x"), textLine("now the tests"), toolUseLine("t2")},
			wantPrompt: "second",
			wantTexts:  texts("now the tests", []string{"t2"}),
			complete:   true,
		},
		{
			name:       "sub-agents' lines are not the session's",
			lines:      []string{userLine("go"), textLine("main answer"), sidechainLine("subagent answer")},
			wantPrompt: "go",
			wantTexts:  texts("main answer"),
			complete:   true,
		},
		{
			name:       "a turn opened by Claude Code's own message has no prompt",
			lines:      []string{userLine("go"), textLine("started"), userLine("<task-notification>\n<task-id>b1</task-id>\n</task-notification>"), textLine("The task finished.")},
			wantPrompt: "",
			wantTexts:  texts("The task finished."),
			complete:   true,
		},
		{
			// 2.0.76 names a background shell's and a background agent's
			// ends apart from a task's.
			name:       "a background shell's or agent's notification has no prompt either",
			lines:      []string{userLine("go"), textLine("started"), userLine("<bash-notification>\n<shell-id>ba33168</shell-id>\n<status>completed</status>\n</bash-notification>"), textLine("The shell finished."), userLine("<agent-notification>\n<agent-id>a6b5626</agent-id>\n</agent-notification>"), textLine("The agent finished.")},
			wantPrompt: "",
			wantTexts:  texts("The agent finished."),
			complete:   true,
		},
		{
			name:       "lines across chunk boundaries",
			lines:      []string{big, userLine("before the blobs"), big, textLine("between"), big, big, filler(70 << 10)},
			wantPrompt: "before the blobs",
			wantTexts:  texts("between"),
			complete:   true,
		},
		{
			name:       "a last line still being written",
			lines:      []string{userLine("q"), textLine("a"), `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"half`},
			wantPrompt: "q",
			wantTexts:  texts("a"),
			complete:   true,
		},
		{
			name:      "a turn longer than the bytes read: its end only",
			lines:     []string{userLine("too far back"), textLine("also too far"), big, big, textLine("near the end")},
			max:       150 << 10,
			wantTexts: texts("near the end"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join("testdata", "recorded-2.1.330.jsonl")
			if tt.lines != nil {
				path = write(t, tt.lines...)
			}
			got, err := transcript.ReadLastTurn(path, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if got.Prompt != tt.wantPrompt || got.Complete != tt.complete || !reflect.DeepEqual(got.Texts, tt.wantTexts) {
				t.Errorf("ReadLastTurn = prompt %q, complete %v, texts %+v\nwant prompt %q, complete %v, texts %+v", got.Prompt, got.Complete, got.Texts, tt.wantPrompt, tt.complete, tt.wantTexts)
			}
			if tt.max > 0 && got.Read > tt.max {
				t.Errorf("read %d bytes, more than the %d asked", got.Read, tt.max)
			}
		})
	}

	t.Run("a missing file", func(t *testing.T) {
		_, err := transcript.ReadLastTurn(filepath.Join(t.TempDir(), "none.jsonl"), 0)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err = %v, want ErrNotExist", err)
		}
	})
	t.Run("not a regular file", func(t *testing.T) {
		_, err := transcript.ReadLastTurn(t.TempDir(), 0)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("err = %v, want a refusal", err)
		}
	})
}

// The back-fill builds each turn from its lines in order (AddAssistant,
// ToolResult); the daemon reads the last turn from the end. On the same
// lines, the two give the same texts.
func TestTurnAgreesWithReadLastTurn(t *testing.T) {
	lines := []string{userLine("fix it"), textLine("Reading the config first."), toolUseLine("t1"), toolResultLine("t1", "cfg"),
		thinkingLine("so"), textLine("The timeout is 5s;"), textLine("raising it to 30s."), toolUseLine("t2"), toolResultLine("t2", "ok"), textLine("Done: the timeout was too short.")}
	var turn transcript.Turn
	for _, l := range lines[1:] {
		var line struct {
			Type    string
			Message struct{ Content json.RawMessage }
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatal(err)
		}
		if line.Type == "assistant" {
			turn.AddAssistant(line.Message.Content)
		} else {
			turn.ToolResult()
		}
	}
	last, err := transcript.ReadLastTurn(write(t, lines...), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(turn.Texts, last.Texts) {
		t.Errorf("in order: %+v\nfrom the end: %+v", turn.Texts, last.Texts)
	}
	want := texts("Reading the config first.", []string{"t1"}, "The timeout is 5s;", "raising it to 30s.", []string{"t2"}, "Done: the timeout was too short.")
	if !reflect.DeepEqual(last.Texts, want) {
		t.Errorf("texts = %+v, want %+v", last.Texts, want)
	}
}

// FuzzReadLastTurn reads arbitrary transcript files: it must not fail on
// content (only on opening or reading), and gives valid UTF-8 for valid
// UTF-8 input.
func FuzzReadLastTurn(f *testing.F) {
	f.Fuzz(func(t *testing.T, content []byte) {
		path := filepath.Join(t.TempDir(), "transcript.jsonl")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		turn, err := transcript.ReadLastTurn(path, 0)
		if err != nil {
			t.Fatalf("ReadLastTurn of %d bytes: %v", len(content), err)
		}
		if !utf8.Valid(content) {
			return
		}
		if !utf8.ValidString(turn.Prompt) {
			t.Errorf("prompt %q: invalid UTF-8", turn.Prompt)
		}
		for _, x := range turn.Texts {
			if !utf8.ValidString(x.Text) || strings.TrimSpace(x.Text) == "" {
				t.Errorf("text %q: invalid UTF-8 or empty", x.Text)
			}
		}
	})
}
