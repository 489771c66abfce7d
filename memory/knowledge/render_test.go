package knowledge_test

import (
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/knowledge"
)

// The block holds the lines that fit its budget, each under its kind's
// heading with at most three of its ids; a line too long is left out and
// a shorter one after it still given.
func TestRenderKeepsToItsBudget(t *testing.T) {
	lines := []memory.KnowledgeLine{
		{Kind: memory.KnowledgeCommand, Text: "test: `go test ./...` passed 3×", IDs: []uint64{7, 5, 3, 2}},
		{Kind: memory.KnowledgeFailure, Text: strings.Repeat("a very long error ", 20), IDs: []uint64{9}},
		{Kind: memory.KnowledgeDecision, Text: "use int64 for amounts", IDs: []uint64{11}},
	}
	text, shown := knowledge.Render(lines, 300)
	want := knowledge.BlockHead + "How to work here:\n- test: `go test ./...` passed 3× [#7 #5 #3 +1]\nDecisions in force:\n- use int64 for amounts [#11]\n"
	if text != want || len(shown) != 2 {
		t.Errorf("got %d lines:\n%s\nwant:\n%s", len(shown), text, want)
	}
	if text, shown := knowledge.Render(lines, 10); text != "" || shown != nil {
		t.Errorf("nothing fits 10 bytes, got %q", text)
	}
}

// A project's instructions say a line's key when they hold it, spaces and
// case aside; a key of less than three characters is never said.
func TestSaid(t *testing.T) {
	l := memory.KnowledgeLine{Kind: memory.KnowledgeCommand, Key: "go test ./..."}
	for text, want := range map[string]bool{
		"Run `go  test ./...` before you commit.": true,
		"RUN GO TEST ./... FIRST":                 true,
		"Run go test ./pkg/... only.":             false,
		"":                                        false,
	} {
		if got := knowledge.Said(text, l); got != want {
			t.Errorf("Said(%q) = %v, want %v", text, got, want)
		}
	}
	if knowledge.Said("go", memory.KnowledgeLine{Key: "go"}) {
		t.Error("a two-letter key is said by any text that holds it")
	}
}
