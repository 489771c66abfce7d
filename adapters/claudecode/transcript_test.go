package claudecode_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/claudecode"
)

// line helpers: transcript lines as Claude Code 2.1.330 writes them.
func userLine(text string) string {
	return fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":%s},"uuid":"u"}`, jsonString(text))
}

func userBlocksLine(text string) string {
	return fmt.Sprintf(`{"isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"text","text":%s}]}}`, jsonString(text))
}

func toolResultLine(out string) string {
	return fmt.Sprintf(`{"isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":%s,"is_error":false}]},"toolUseResult":{"stdout":%s}}`, jsonString(out), jsonString(out))
}

func assistantLine(text string) string {
	return fmt.Sprintf(`{"isSidechain":false,"type":"assistant","message":{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":%s}],"stop_reason":"end_turn"}}`, jsonString(text))
}

func toolUseLine() string {
	return `{"isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}`
}

func sidechainAssistantLine(text string) string {
	return fmt.Sprintf(`{"isSidechain":true,"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":%s}]}}`, jsonString(text))
}

// filler is a big line of the kind that makes up most of a transcript
// (Claude Code stores whole API requests in it).
func filler(n int) string {
	return fmt.Sprintf(`{"type":"api-request-blob","blob":%s}`, jsonString(strings.Repeat("x", n)))
}

func writeTranscript(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadTranscript(t *testing.T) {
	big := filler(100 << 10) // longer than one read chunk
	tests := []struct {
		name               string
		lines              []string
		wantUser, wantAsst string
	}{
		{
			name:     "recorded sample",
			wantUser: "SCENARIO:bash do the task",
			wantAsst: "Done: scenario bash finished after 1 step(s).",
		},
		{
			name:     "tool results are not prompts",
			lines:    []string{userLine("fix calc"), toolUseLine(), toolResultLine("ok"), assistantLine("Fixed the rounding.")},
			wantUser: "fix calc",
			wantAsst: "Fixed the rounding.",
		},
		{
			name:     "text blocks",
			lines:    []string{userBlocksLine("first"), assistantLine("one"), userBlocksLine("second"), assistantLine("two"), toolUseLine()},
			wantUser: "second",
			wantAsst: "two",
		},
		{
			name:     "subagent lines are skipped",
			lines:    []string{userLine("go"), assistantLine("main answer"), sidechainAssistantLine("subagent answer")},
			wantUser: "go",
			wantAsst: "main answer",
		},
		{
			name:     "lines across chunk boundaries",
			lines:    []string{big, userLine("before the blobs"), big, assistantLine("between"), big, big, filler(70 << 10)},
			wantUser: "before the blobs",
			wantAsst: "between",
		},
		{
			name:     "a last line still being written",
			lines:    []string{userLine("q"), assistantLine("a"), `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"half`},
			wantUser: "q",
			wantAsst: "a",
		},
		{
			// A background task's notification starts a turn of its own,
			// whose prompt is still the person's.
			name:     "a task notification is not the person's",
			lines:    []string{userLine("refresh the radar"), assistantLine("started"), userLine("<task-notification>\n<task-id>b1</task-id>\n</task-notification>"), assistantLine("it finished")},
			wantUser: "refresh the radar",
			wantAsst: "it finished",
		},
		{
			name: "a command that ran locally is not a prompt; one the model got is",
			lines: []string{userLine("<command-message>rain-review</command-message>\n<command-name>/rain-review</command-name>\n<command-args>a.py</command-args>"),
				assistantLine("reviewed"), userLine("/compact"), userLine("<local-command-caveat>Caveat: …</local-command-caveat>"),
				userLine("<command-name>/compact</command-name>"), userLine("<local-command-stdout>Compacted</local-command-stdout>")},
			wantUser: "/rain-review a.py",
			wantAsst: "reviewed",
		},
		{
			// 2.1's last-prompt lines are cut at 200 characters and not
			// written for every turn: the prompt itself is read.
			name:     "a prompt before a stale last-prompt line",
			lines:    []string{`{"type":"last-prompt","lastPrompt":"an earlier prompt"}`, userLine("the prompt of this turn"), assistantLine("answer")},
			wantUser: "the prompt of this turn",
			wantAsst: "answer",
		},
		{
			name:     "last-prompt when no prompt is in the tail",
			lines:    []string{`{"type":"last-prompt","lastPrompt":"kept by last-prompt"}`, assistantLine("answer")},
			wantUser: "kept by last-prompt",
			wantAsst: "answer",
		},
		{
			name:     "beyond the bounded tail",
			lines:    append([]string{userLine("too far back"), assistantLine("also too far")}, slicesRepeat(big, claudecode.MaxTranscriptTail/len(big)+2)...),
			wantUser: "",
			wantAsst: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join("testdata", "transcript.jsonl")
			if tt.lines != nil {
				path = writeTranscript(t, tt.lines...)
			}
			got, err := claudecode.ReadTranscript(path)
			if err != nil {
				t.Fatal(err)
			}
			if got.LastUserMessage != tt.wantUser || got.LastAssistantMessage != tt.wantAsst {
				t.Errorf("ReadTranscript = %+v, want user %q, assistant %q", got, tt.wantUser, tt.wantAsst)
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		_, err := claudecode.ReadTranscript(filepath.Join(t.TempDir(), "none.jsonl"))
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want ErrNotExist", err)
		}
	})
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
