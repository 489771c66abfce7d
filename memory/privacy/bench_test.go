package privacy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// prose is ordinary text: a prompt, a tool's output, source code.
var prose = strings.Repeat(`The handler reads the request, checks a < b && c > d, and
returns <b>bold</b> HTML. func (s *Store) Get(ctx context.Context, id string) error {
	return fmt.Errorf("get %s: %w", id, err) // skip-list, task-runner, 3f2a9c1d
}
`, 256)

func BenchmarkStrip(b *testing.B) {
	const mb = 1 << 20
	rep := func(s string) string { return strings.Repeat(s, mb/len(s)) }
	var tags150 strings.Builder
	for range 150 {
		tags150.WriteString("<private>secret</private> text ")
	}
	benches := []struct {
		name string
		in   string
	}{
		{"prose-no-tags", prose},
		{"prose-with-tags", strings.ReplaceAll(prose, "<b>bold</b>", "<system-reminder>bold</system-reminder>")},
		{"150-tags", tags150.String()},
		{"10k-tag", "<private>" + strings.Repeat("x", 10000) + "</private> keep this"},
		{"1MB-open-without-gt", rep("<private")},
		{"1MB-lt", rep("<")},
		{"1MB-lt-then-elements", rep("<")[:mb/2] + rep("<private>x</private>")[:mb/2]},
		{"1MB-elements", rep("<private>x</private> ")},
		{"1MB-joined", rep("<priv<private>x</private>ate>")},
	}
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(bb.in)))
			for b.Loop() {
				privacy.Strip(bb.in)
			}
		})
	}
}

func BenchmarkRedact(b *testing.B) {
	const mb = 1 << 20
	benches := []struct {
		name string
		in   string
	}{
		{"prose-no-secrets", prose},
		{"prose-with-secrets", strings.ReplaceAll(prose, "3f2a9c1d", "password=hunter2hunter2 "+awsKeyID)},
		{"1MB-sk", strings.Repeat("sk-", mb/3)},
		{"1MB-assignments", strings.Repeat("token=", mb/6)},
		{"1MB-colons", strings.Repeat(":", mb)},
	}
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(bb.in)))
			for b.Loop() {
				privacy.Redact(bb.in)
			}
		})
	}
}

func BenchmarkClean(b *testing.B) {
	in := strings.ReplaceAll(prose, "<b>bold</b>", "<private>bold</private> token=abc123def456")
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		privacy.Clean(in)
	}
}

// BenchmarkCleanJSON cleans a PostToolUse payload of about 8 KB, the size
// of a typical Read.
func BenchmarkCleanJSON(b *testing.B) {
	content := strings.Repeat("\tif err := run(ctx); err != nil {\n\t\treturn fmt.Errorf(\"run: %w\", err)\n\t}\n", 80)
	payload, err := json.Marshal(map[string]any{
		"session_id":      "3f2a9c1d-0000-4000-8000-000000000000",
		"hook_event_name": "PostToolUse",
		"tool_name":       "Read",
		"tool_input":      map[string]any{"file_path": "/src/main.go"},
		"tool_response": map[string]any{
			"type": "text",
			"file": map[string]any{"filePath": "/src/main.go", "content": content + "<system-reminder>CLAUDE.md</system-reminder>", "numLines": 240},
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if _, err := privacy.CleanJSON(payload); err != nil {
			b.Fatal(err)
		}
	}
}
