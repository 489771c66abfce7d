package observer_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/observer"
)

var elidedRE = regexp.MustCompile(`<elided chars="(\d+)" original_size_chars="(\d+)" reason="oversize" />`)

func TestCapText(t *testing.T) {
	long := strings.Repeat("h", 700) + strings.Repeat("m", 1000) + strings.Repeat("t", 300) // 2000
	tests := []struct {
		name             string
		in               string
		max              int
		head, tail       string
		elided, original int
	}{
		{name: "short stays whole", in: "hello", max: 10},
		{name: "exactly max stays whole", in: strings.Repeat("x", 100), max: 100},
		{name: "long: 60% head, 30% tail", in: long, max: 1000, head: strings.Repeat("h", 600), tail: strings.Repeat("t", 300), elided: 1100, original: 2000},
		{name: "counted in characters, not bytes", in: strings.Repeat("é", 30) + strings.Repeat("ü", 20), max: 10,
			head: strings.Repeat("é", 6), tail: strings.Repeat("ü", 3), elided: 41, original: 50},
		{name: "multibyte under the cap stays whole", in: strings.Repeat("日", 50), max: 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := observer.CapText(tt.in, tt.max)
			if tt.original == 0 {
				if got != tt.in {
					t.Fatalf("capped %d characters under a cap of %d", utf8.RuneCountInString(tt.in), tt.max)
				}
				return
			}
			m := elidedRE.FindStringSubmatchIndex(got)
			if m == nil {
				t.Fatalf("no elision marker in %q", got)
			}
			if h := strings.TrimSuffix(got[:m[0]], "\n"); h != tt.head {
				t.Errorf("head %q, want %q", h, tt.head)
			}
			if tl := strings.TrimPrefix(got[m[1]:], "\n"); tl != tt.tail {
				t.Errorf("tail %q, want %q", tl, tt.tail)
			}
			if e, o := got[m[2]:m[3]], got[m[4]:m[5]]; e != fmt.Sprint(tt.elided) || o != fmt.Sprint(tt.original) {
				t.Errorf("marker says %s elided of %s, want %d of %d", e, o, tt.elided, tt.original)
			}
			if !utf8.ValidString(got) {
				t.Error("cut inside a character")
			}
		})
	}
}

func TestPrompt(t *testing.T) {
	huge := strings.Repeat("line of build output\n", 5000) // ~105k characters
	resp, _ := json.Marshal(map[string]any{"stdout": huge, "stderr": "", "interrupted": false})
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	in := memory.AgentInput{
		Request: "Make the build faster. We decided to cache the module downloads.",
		Turn: []memory.Observation{
			{Type: "discovery", Title: "Tests failed: go test ./...", FilesRead: []string{"build/cache.go"}},
		},
	}
	tool := memory.Event{Kind: memory.EventTool, ToolName: "Bash", Cwd: "/src/app", Time: at,
		ToolInput: json.RawMessage(`{"command":"go build ./...","description":"Build"}`), ToolResponse: resp}
	stop := memory.Event{Kind: memory.EventStop, LastAssistantMessage: "Caching is on; builds take 4 s instead of 40 s."}

	tests := []struct {
		name    string
		ev      memory.Event
		fresh   bool
		want    []string
		notWant []string
		max     int
	}{
		{
			name: "tool event, fresh memory session", ev: tool, fresh: true,
			want: []string{
				"<user_request>Make the build faster. We decided to cache the module downloads.</user_request>",
				"<what_happened>Bash</what_happened>", "<occurred_at>2026-11-22T10:00:00Z</occurred_at>",
				"<working_directory>/src/app</working_directory>", `"command": "go build ./..."`,
				`reason="oversize"`, "<earlier_observations_of_this_turn>",
				"- [discovery] Tests failed: go test ./... (build/cache.go)", "<observation> blocks",
			},
			// the output is capped: 16,000 characters and the markup around them
			max: observer.MaxFieldChars + 2000,
		},
		{
			name: "tool event, resumed memory session", ev: tool,
			want:    []string{"<what_happened>Bash</what_happened>"},
			notWant: []string{"<earlier_observations_of_this_turn>"},
			max:     observer.MaxFieldChars + 2000,
		},
		{
			name: "stop event asks for a summary", ev: stop,
			want: []string{"--- PROGRESS SUMMARY ---", "<user_request>Make the build faster.",
				"<observations_of_this_turn>", "<last_assistant_message>Caching is on; builds take 4 s instead of 40 s.</last_assistant_message>",
				"exactly one <summary> block"},
			notWant: []string{"<observed_from_primary_session>"},
			max:     2000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := observer.Prompt(in, tt.ev, tt.fresh)
			for _, w := range tt.want {
				if !strings.Contains(p, w) {
					t.Errorf("prompt lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(p, w) {
					t.Errorf("prompt has %q", w)
				}
			}
			if n := utf8.RuneCountInString(p); n > tt.max {
				t.Errorf("prompt is %d characters, want at most %d", n, tt.max)
			}
		})
	}

	t.Run("input is capped too", func(t *testing.T) {
		content, _ := json.Marshal(map[string]string{"file_path": "/src/app/big.go", "content": huge})
		ev := memory.Event{Kind: memory.EventTool, ToolName: "Write", ToolInput: content, ToolResponse: json.RawMessage(`{"type":"create"}`)}
		p := observer.Prompt(memory.AgentInput{}, ev, false)
		if n := len(elidedRE.FindAllString(p, -1)); n != 1 {
			t.Errorf("%d elision markers, want 1 (the input)", n)
		}
		if !strings.Contains(p, `"file_path": "/src/app/big.go"`) {
			t.Error("the head of the capped input is gone")
		}
	})
	t.Run("extra system prompt is appended", func(t *testing.T) {
		s := observer.SystemPrompt("SCENARIO:x")
		if !strings.HasSuffix(s, "\n\nSCENARIO:x") || !strings.Contains(s, "<observation>") || !strings.Contains(s, "<summary>") {
			t.Errorf("system prompt:\n%s", s)
		}
	})
}
