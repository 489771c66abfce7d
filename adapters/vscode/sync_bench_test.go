package vscode_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/mnemo-dev/mnemo/memory/privacy"
)

// How the server learns what a save changed, two ways, for one edit: a
// line of 40 characters typed into a 20 KB Go file, then saved. The
// server's work per edit (decoding what the client sends, and keeping the
// text it needs, stripped of private parts) and the bytes the client sends:
//
//   - save with text (what the editor asks for): one didSave holding the
//     whole text;
//   - incremental sync: one didChange per keystroke (a range and the typed
//     character) applied to the kept text, then a didSave without text.
//
// go test ./adapters/vscode -run '^$' -bench Sync -benchtime 200x

const syncLine = "\tapplyLoyaltyDiscount(lines, customerID)" // 40 characters

func syncFile() string {
	var b strings.Builder
	b.WriteString("package billing\n\n")
	for i := 0; b.Len() < 20<<10; i++ {
		fmt.Fprintf(&b, "// total%d sums the lines.\nfunc total%d(lines []Line) int {\n\tsum := 0\n\tfor _, l := range lines {\n\t\tsum += l.Amount\n\t}\n\treturn sum\n}\n\n", i, i)
	}
	return b.String()
}

func BenchmarkSyncSaveWithText(b *testing.B) {
	text := syncFile()
	at := strings.Index(text, "\tsum := 0\n")
	saved := text[:at] + syncLine + "\n" + text[at:]
	msg, err := json.Marshal(map[string]any{"textDocument": map[string]any{"uri": "file:///src/billing/total.go"}, "text": saved})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	defer func() { b.ReportMetric(float64(len(msg)), "wire-B/edit") }()
	for range b.N {
		var p protocol.DidSaveTextDocumentParams
		if err := protocol.Unmarshal(msg, &p); err != nil {
			b.Fatal(err)
		}
		if kept := privacy.Clean(*p.Text); len(kept) != len(saved) {
			b.Fatal("the text changed")
		}
	}
}

func BenchmarkSyncIncremental(b *testing.B) {
	text := syncFile()
	at := strings.Index(text, "\tsum := 0\n")
	line := strings.Count(text[:at], "\n")
	// One didChange per keystroke, then Enter.
	var msgs [][]byte
	wire := 0
	for i, r := range syncLine + "\n" {
		p := map[string]any{
			"textDocument": map[string]any{"uri": "file:///src/billing/total.go", "version": i + 2},
			"contentChanges": []any{map[string]any{
				"range": map[string]any{"start": map[string]any{"line": line, "character": i}, "end": map[string]any{"line": line, "character": i}},
				"text":  string(r),
			}},
		}
		m, err := json.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		msgs = append(msgs, m)
		wire += len(m)
	}
	save, _ := json.Marshal(map[string]any{"textDocument": map[string]any{"uri": "file:///src/billing/total.go"}})
	wire += len(save)
	want := text[:at] + syncLine + "\n" + text[at:]
	b.ResetTimer()
	defer func() { b.ReportMetric(float64(wire), "wire-B/edit") }()
	for range b.N {
		cur := text
		for _, m := range msgs {
			var p protocol.DidChangeTextDocumentParams
			if err := protocol.Unmarshal(m, &p); err != nil {
				b.Fatal(err)
			}
			for _, c := range p.ContentChanges {
				var ch protocol.TextDocumentContentChangePartial
				switch v := c.(type) {
				case *protocol.TextDocumentContentChangePartial:
					ch = *v
				default:
					b.Fatalf("change %T", c)
				}
				cur = applyChange(cur, ch)
			}
		}
		var p protocol.DidSaveTextDocumentParams
		if err := protocol.Unmarshal(save, &p); err != nil {
			b.Fatal(err)
		}
		if kept := privacy.Clean(cur); kept != want {
			b.Fatal("the changes did not make the saved text")
		}
	}
}

// applyChange applies an incremental change: LSP positions count lines
// and UTF-16 code units.
func applyChange(text string, c protocol.TextDocumentContentChangePartial) string {
	start, end := offsetOf(text, c.Range.Start), offsetOf(text, c.Range.End)
	return text[:start] + c.Text + text[end:]
}

func offsetOf(text string, p protocol.Position) int {
	i := 0
	for line := uint32(0); line < p.Line; line++ {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return len(text)
		}
		i += j + 1
	}
	for units := uint32(0); units < p.Character && i < len(text) && text[i] != '\n'; {
		r, size := utf8.DecodeRuneInString(text[i:])
		units++
		if r >= 0x10000 {
			units++
		}
		i += size
	}
	return i
}
