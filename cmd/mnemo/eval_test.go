package main

import (
	"slices"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// What counts as an identifier and as a test's name in a record.
func TestEvalTokenKinds(t *testing.T) {
	for tok, want := range map[string]string{
		"roundCents": "identifier", "retry_with_backoff": "identifier", "parseV2Config": "identifier",
		"TestInvoiceTotalHalfEven": "test", "test_rolling_mean_empty": "test", "Test_parse": "test",
		"rounding": "", "Testing": "", "ab12cd34ef": "", "1234567": "", "HTTP": "", "_private_": "", "sha256": "",
	} {
		got := ""
		switch {
		case evalTestName(tok):
			got = "test"
		case evalIdentifier(tok):
			got = "identifier"
		}
		if got != want {
			t.Errorf("%q: %q, want %q", tok, got, want)
		}
	}
}

// Questions are drawn from the records of real events: a token held by
// at most three records of its project, answered by those records; a
// turn's prompt, answered by the earlier records of the files the turn
// changed; nothing from a note saved on purpose. Grep ranks the records
// of the question's project holding the most of its words, the newest
// among equals, and leaves out those made after a prompt.
func TestEvalDrawsQuestionsFromTheRecords(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	rec := func(id uint64, project string, session uint64, prompt int, tool, title, request string, files ...string) memory.Observation {
		return memory.Observation{ID: id, Project: project, SessionID: session, PromptNumber: prompt, Tool: tool, Title: title,
			Request: request, FilesModified: files, Time: t0.Add(time.Duration(id) * time.Minute)}
	}
	recs := []memory.Observation{
		rec(1, "shop", 1, 1, "Edit", "Fixed roundCents in billing/rounding.go", "invoice totals are a cent off", "billing/rounding.go"),
		rec(2, "shop", 1, 1, "Bash", "go test ./billing fails: TestInvoiceTotalHalfEven", "invoice totals are a cent off"),
		rec(3, "shop", 2, 1, "Edit", "Added refundCents to billing/rounding.go", "refunds round the cents differently from the invoice totals", "billing/rounding.go"),
		rec(4, "shop", 3, 1, "", "Decision: use banker's rounding", "we decided banker's rounding, note it, sharedSecretName"),
		rec(5, "ledger", 4, 1, "Edit", "Changed postTransfer in api/transfer.go", "transfers post twice", "api/transfer.go"),
	}
	g := newEvalGrep(recs)
	qs := drawQuestions(recs, g, 60)
	byText := map[string]evalQuestion{}
	for _, q := range qs {
		byText[q.kind+" "+q.text] = q
	}
	want := func(kind, text string, answers ...uint64) {
		t.Helper()
		q, ok := byText[kind+" "+text]
		if !ok {
			t.Errorf("no %s question %q among %d", kind, text, len(qs))
			return
		}
		var got []uint64
		for id := range q.answers {
			got = append(got, id)
		}
		slices.Sort(got)
		if !slices.Equal(got, answers) {
			t.Errorf("%s %q: answers %v, want %v", kind, text, got, answers)
		}
	}
	want("identifier", "roundCents", 1)
	want("identifier", "refundCents", 3)
	want("test", "TestInvoiceTotalHalfEven", 2)
	want("identifier", "postTransfer", 5)
	want("path", "billing/rounding.go", 1, 3)
	// The second session's prompt: the first session's edit of the file it
	// changed answers, its own record does not.
	want("prompt", "refunds round the cents differently from the invoice totals", 1)
	if _, ok := byText["identifier sharedSecretName"]; ok {
		t.Error("a question from a decision, which is no event")
	}
	if _, ok := byText["prompt invoice totals are a cent off"]; ok {
		t.Error("a prompt question with no earlier record of its files")
	}
	q := byText["prompt refunds round the cents differently from the invoice totals"]
	// Both records of the first turn hold "invoice totals", the newer first;
	// the record of the prompt's own turn is not among them.
	if got := g.search(q, 10); !slices.Equal(got, []uint64{2, 1}) || firstAnswer(q, got) != 2 {
		t.Errorf("grep for the prompt among the records before it: %v, want [2 1], the answer second", got)
	}
	// The most words first (3 holds billing, rounding and cents; 1 two),
	// the newest among equals (4 before 2), no other project's.
	if got := g.search(evalQuestion{project: "shop", text: "billing rounding cents"}, 10); !slices.Equal(got, []uint64{3, 1, 4, 2}) {
		t.Errorf("grep: %v, want [3 1 4 2]", got)
	}
}
