package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/privacy"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

// The prompt recall tests save memories of a shop project (/src/shop, as
// mustPrompt's working directory) and ask about them.

const taxPrompt = "the tax rounding in cart/tax.go is off by a cent again"

// openRecall opens a memory whose search index is loaded (a prompt does
// not wait for the load).
func openRecall(t *testing.T, o store.Options) *store.Memory {
	t.Helper()
	o.InMemory = true
	m := MustOpen(t, o)
	if _, err := m.Search(context.Background(), memory.SearchParams{}); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustSave(t *testing.T, m *store.Memory, typ, title, text string, files ...string) uint64 {
	t.Helper()
	r, err := m.Save(context.Background(), memory.SaveParams{Project: "shop", Type: typ, Title: title, Text: text, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

func saveShop(t *testing.T, m *store.Memory) (tax, invoice uint64) {
	t.Helper()
	tax = mustSave(t, m, memory.TypeBugfix, "Fixed the tax rounding in cart/tax.go", "roundCents used math.Round; tax lines now round half to even", "cart/tax.go")
	invoice = mustSave(t, m, memory.TypeDecision, "Invoice numbers are kept per tenant", "one invoice sequence per tenant, in billing/invoice.go", "billing/invoice.go")
	for i := range 5 {
		mustSave(t, m, memory.TypeDiscovery, fmt.Sprintf("Read docs/page%02d.md", i), fmt.Sprintf("the deploy guide, page %d", i), fmt.Sprintf("docs/page%02d.md", i))
	}
	return tax, invoice
}

func lastInjection(t *testing.T, m *store.Memory) memory.Injection {
	t.Helper()
	inj, err := m.Injections(context.Background(), 1)
	if err != nil || len(inj) != 1 {
		t.Fatalf("injections = %+v, %v", inj, err)
	}
	return inj[0]
}

func countInjections(t *testing.T, m *store.Memory) int {
	t.Helper()
	inj, err := m.Injections(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(inj)
}

// A prompt gets the memory it asks about: one line (id · type · title ·
// files) and the passage of its text the prompt needs, in the
// <mnemo-context> element the privacy stripper removes, audited with the
// source "prompt".
func TestPromptRecallGivesTheMatchingMemory(t *testing.T) {
	m := openRecall(t, store.Options{})
	tax, invoice := saveShop(t, m)
	r := mustPrompt(t, m, "cc-recall", taxPrompt)
	if len(r.ObservationIDs) == 0 || r.ObservationIDs[0] != tax || slices.Contains(r.ObservationIDs, invoice) {
		t.Fatalf("recalled %v, want #%d first and not #%d:\n%s", r.ObservationIDs, tax, invoice, r.Context)
	}
	row := fmt.Sprintf("\n- #%d · bugfix · Fixed the tax rounding in cart/tax.go\n", tax)
	if !strings.HasPrefix(r.Context, `<mnemo-context project="shop" source="prompt">`) || !strings.Contains(r.Context, row) ||
		!strings.HasSuffix(r.Context, "</mnemo-context>\n") || len(r.Context) > memory.MaxPromptContextBytes {
		t.Fatalf("context lacks %q or its element:\n%s", row, r.Context)
	}
	if !strings.Contains(r.Context, row+"  ") || !strings.Contains(r.Context, "tax lines now round half to even\n") {
		t.Errorf("the context does not give the memory's text under its line:\n%s", r.Context)
	}
	if s, _ := privacy.Strip(r.Context); strings.TrimSpace(s) != "" {
		t.Errorf("the privacy stripper leaves %q of the context", s)
	}
	inj := lastInjection(t, m)
	if inj.Source != memory.InjectionPrompt || inj.ContentSessionID != "cc-recall" || inj.PromptNumber != 1 ||
		inj.Project != "shop" || inj.Bytes != len(r.Context) || len(inj.Items) != len(r.ObservationIDs) {
		t.Fatalf("injection audit = %+v", inj)
	}
	for i, it := range inj.Items {
		if it.ID != r.ObservationIDs[i] || !strings.Contains(it.Reason, "score") {
			t.Errorf("audit item %d = %+v", i, it)
		}
	}
}

// Nothing is given twice in a session: not what SessionStart's context
// listed, not what an earlier prompt recalled, not what the session made
// itself. Another session gets them all.
func TestPromptRecallSkipsWhatTheSessionHas(t *testing.T) {
	m := openRecall(t, store.Options{})
	ctx := context.Background()
	tax, _ := saveShop(t, m)
	start, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-dedupe", Cwd: "/src/shop", Source: "startup"})
	if err != nil || !slices.Contains(start.ObservationIDs, tax) {
		t.Fatalf("session start = %v, %v; want #%d in its context", start.ObservationIDs, err, tax)
	}
	vat := mustSave(t, m, memory.TypeBugfix, "VAT lines round per line in cart/tax.go", "tax rounding: each VAT line rounds on its own", "cart/tax.go")

	first := mustPrompt(t, m, "cc-dedupe", taxPrompt)
	if !slices.Equal(first.ObservationIDs, []uint64{vat}) {
		t.Fatalf("first prompt recalled %v, want only #%d (#%d was in the session's context):\n%s", first.ObservationIDs, vat, tax, first.Context)
	}
	if again := mustPrompt(t, m, "cc-dedupe", taxPrompt); again.Context != "" || len(again.ObservationIDs) != 0 {
		t.Fatalf("the same prompt again recalled %v:\n%s", again.ObservationIDs, again.Context)
	}

	// The session fixes cart/tax.go itself: its own observation is not
	// recalled to it.
	mustTool(t, m, "cc-dedupe", "Edit", `{"file_path":"/src/shop/cart/tax.go","old_string":"math.Round(v)","new_string":"math.RoundToEven(v)"}`, `{"filePath":"/src/shop/cart/tax.go"}`)
	waitIdle(t, m)
	own := observationsOf(t, m, mustSession(t, m, "cc-dedupe").ID)
	if len(own) == 0 {
		t.Fatal("the session's edit made no observation")
	}
	if r := mustPrompt(t, m, "cc-dedupe", "the tax rounding fix in cart/tax.go: math.RoundToEven"); r.Context != "" {
		t.Fatalf("the session was given back %v (its own: #%d):\n%s", r.ObservationIDs, own[0].ID, r.Context)
	}

	// A prompt that every one of the three answers in good part (the
	// floor wants half of its terms, or a fifth when the encoder ranks the
	// record first).
	other := mustPrompt(t, m, "cc-other", "the VAT line tax rounding fix in cart/tax.go: math.RoundToEven")
	for _, id := range []uint64{tax, vat, own[0].ID} {
		if !slices.Contains(other.ObservationIDs, id) {
			t.Errorf("another session did not get #%d: %v\n%s", id, other.ObservationIDs, other.Context)
		}
	}
}

// A pinned note reaches the agent with its text, not as a title to look
// up; a pin the budget gave by its title alone is not given for the
// prompt's recall, which gives its text when a prompt asks for it.
func TestPinnedNoteIsGivenWithItsText(t *testing.T) {
	const (
		title  = "Webhook secret location"
		text   = "The Stripe webhook signing secret lives in Vault at secret/billing/stripe, key webhook_secret."
		prompt = "Where in Vault is the Stripe webhook signing secret?"
	)
	for _, tc := range []struct {
		name  string
		bytes int    // the context's budget
		pad   string // more text, to make the excerpt too long for a small budget
		given bool   // the text is in SessionStart's context
	}{
		{"room for its text", 0, "", true},
		{"its title alone", 512, strings.Repeat(" Rotate it there after each incident.", 8), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := openRecall(t, store.Options{ContextBytes: tc.bytes})
			ctx := context.Background()
			id := mustSave(t, m, memory.TypeNote, title, text+tc.pad)
			if _, err := m.Pin(ctx, memory.IDsParams{IDs: []uint64{id}}); err != nil {
				t.Fatal(err)
			}
			start, err := m.SessionStart(ctx, memory.SessionStartParams{ContentSessionID: "cc-pin", Cwd: "/src/shop", Source: "startup"})
			if err != nil || !slices.Contains(start.ObservationIDs, id) || !strings.Contains(start.Context, title) {
				t.Fatalf("session start = %v, %v; want the pin #%d:\n%s", start.ObservationIDs, err, id, start.Context)
			}
			if got := strings.Contains(start.Context, "secret/billing/stripe"); got != tc.given {
				t.Fatalf("the pin's text in the context: %t, want %t:\n%s", got, tc.given, start.Context)
			}
			if item := lastInjection(t, m).Items[0]; item.ID != id || item.Text != tc.given {
				t.Fatalf("audit item %+v, want #%d with text %t", item, id, tc.given)
			}
			r := mustPrompt(t, m, "cc-pin", prompt)
			if recalled := strings.Contains(r.Context, "secret/billing/stripe"); recalled == tc.given {
				t.Fatalf("the prompt recalled the pin's text: %t, want %t:\n%s", recalled, !tc.given, r.Context)
			}
		})
	}
}

// The context's reasons name ranks in words, beside the records' ids
// (the viewer shows "#12 decision, the newest", not "#12 … #1 newest").
func TestContextReasonsSayRanksInWords(t *testing.T) {
	m := openRecall(t, store.Options{})
	saveShop(t, m)
	res, err := m.Context(context.Background(), memory.ContextParams{Project: "shop"})
	if err != nil || len(res.Items) == 0 {
		t.Fatalf("context: %+v, %v", res, err)
	}
	var reasons []string
	for _, it := range res.Items {
		reasons = append(reasons, it.Reason)
	}
	all := strings.Join(reasons, "\n")
	if regexp.MustCompile(`#\d+ newest`).MatchString(all) || !strings.Contains(all, "the newest") {
		t.Errorf("reasons:\n%s", all)
	}
}

// However many memories match, the recall stays within its budget: at most
// MaxPromptContextItems lines, which bind for titles in ASCII, and
// MaxPromptContextBytes, which bind for long titles of wide characters
// (imported here: Save cuts titles shorter).
func TestPromptRecallStaysWithinBudget(t *testing.T) {
	for _, tt := range []struct {
		name, title string
		wantLines   func(int) bool
	}{
		{"items", "Tax rounding fix %d" + strings.Repeat(" and the rounding of the tax in the cart", 1), func(n int) bool { return n == memory.MaxPromptContextItems }},
		{"bytes", "Tax rounding fix %d\n" + strings.Repeat("税額の端数処理", 30), func(n int) bool { return n > 0 && n < memory.MaxPromptContextItems }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := openRecall(t, store.Options{})
			saveShop(t, m)
			var records bytes.Buffer
			enc := json.NewEncoder(&records)
			for i := range 40 {
				enc.Encode(memory.Record{Kind: "observation", Observation: &memory.Observation{Project: "shop", Type: memory.TypeDiscovery,
					Title: fmt.Sprintf("Read web/view%02d.tsx", i), Narrative: fmt.Sprintf("view %d renders the catalogue page %d", i, i),
					FilesRead: []string{fmt.Sprintf("web/view%02d.tsx", i)}, Time: time.Now()}})
			}
			for i := range 30 {
				enc.Encode(memory.Record{Kind: "observation", Observation: &memory.Observation{Project: "shop", Type: memory.TypeBugfix,
					Title: fmt.Sprintf(tt.title, i), Narrative: "tax rounding in cart/tax.go",
					FilesModified: []string{fmt.Sprintf("cart/税/%02d/%s.go", i, strings.Repeat("端数", 20)), "cart/tax.go"}, Time: time.Now()}})
			}
			if _, err := m.Import(context.Background(), &records, nil); err != nil {
				t.Fatal(err)
			}
			r := mustPrompt(t, m, "cc-budget", "tax rounding in cart/tax.go")
			lines := strings.Count(r.Context, "\n- #")
			passages := strings.Count(r.Context, "\n  ")
			if !tt.wantLines(lines) || lines != len(r.ObservationIDs) || len(r.Context) > memory.MaxPromptContextBytes ||
				passages > 2 || strings.Count(r.Context, "\n") != lines+passages+4 {
				t.Fatalf("recall of %d lines, %d passages, %d ids, %d bytes; budget %d lines, %d bytes, one line each, a passage under the best two:\n%s",
					lines, passages, len(r.ObservationIDs), len(r.Context), memory.MaxPromptContextItems, memory.MaxPromptContextBytes, r.Context)
			}
			if lastInjection(t, m).Bytes != len(r.Context) {
				t.Error("the audit does not record the recall's size")
			}
		})
	}
}

// Below the relevance floor nothing is recalled, and nothing is audited: a
// prompt about something the memory does not hold, one of function words
// only, one that shares a word or two with a memory.
func TestPromptRecallFloor(t *testing.T) {
	for _, emb := range []vector.Embedder{vector.NewHashEmbedder(), testEmbedder{vector.NewHashEmbedder(), nil}} {
		t.Run(emb.ID()+fmt.Sprintf("/%T", emb), func(t *testing.T) {
			m := openRecall(t, store.Options{Embedder: emb})
			saveShop(t, m)
			before := countInjections(t, m)
			for _, prompt := range []string{
				"how do we generate the shipping label PDF for customs declarations?",
				"yes, go ahead and do it",
				"write a page about the deploy steps for the new region",
			} {
				if r := mustPrompt(t, m, "cc-floor", prompt); r.Context != "" || r.ObservationIDs != nil {
					t.Errorf("%q recalled %v:\n%s", prompt, r.ObservationIDs, r.Context)
				}
			}
			if n := countInjections(t, m); n != before {
				t.Errorf("%d injections recorded below the floor", n-before)
			}
			if r := mustPrompt(t, m, "cc-floor", taxPrompt); r.Context == "" {
				t.Error("the tax prompt recalled nothing: the floor is too high for this test")
			}
		})
	}
}

// testEmbedder counts the texts it embeds. Wrapping the hashing embedder
// hides what it is, so the index fuses as for a sentence encoder.
type testEmbedder struct {
	vector.Embedder
	n *atomic.Int64
}

func (e testEmbedder) Embed(ctx context.Context, text string) ([]float32, error) {
	if e.n != nil {
		e.n.Add(1)
	}
	return e.Embedder.Embed(ctx, text)
}

// An entirely private prompt gets nothing and searches nothing: not even
// its embedding is computed.
func TestPromptRecallPrivatePrompt(t *testing.T) {
	var embedded atomic.Int64
	m := openRecall(t, store.Options{Embedder: testEmbedder{vector.NewHashEmbedder(), &embedded}})
	saveShop(t, m)
	before, injections := embedded.Load(), countInjections(t, m)
	r := mustPrompt(t, m, "cc-private", "<private>"+taxPrompt+"</private>")
	if !r.Private || r.Context != "" || r.ObservationIDs != nil {
		t.Fatalf("private prompt = %+v", r)
	}
	if n := embedded.Load() - before; n != 0 {
		t.Errorf("a private prompt was embedded %d times", n)
	}
	if n := countInjections(t, m); n != injections {
		t.Errorf("a private prompt recorded %d injections", n-injections)
	}
	// The same words in the open are searched (the check above means
	// something).
	if r := mustPrompt(t, m, "cc-private", taxPrompt); r.Context == "" || embedded.Load() == before {
		t.Fatalf("the open prompt recalled nothing (%d embeddings)", embedded.Load()-before)
	}
}

// With the setting off, prompts are stored and numbered and get nothing.
func TestPromptRecallOff(t *testing.T) {
	m := openRecall(t, store.Options{NoPromptRecall: true})
	saveShop(t, m)
	before := countInjections(t, m)
	r := mustPrompt(t, m, "cc-off", taxPrompt)
	if r.PromptNumber != 1 || r.Context != "" || r.ObservationIDs != nil {
		t.Fatalf("prompt with recall off = %+v", r)
	}
	if n := countInjections(t, m); n != before {
		t.Errorf("%d injections with recall off", n-before)
	}
	if p, _ := m.Prompts(context.Background(), r.SessionID); len(p) != 1 {
		t.Errorf("stored prompts = %+v", p)
	}
}

// A prompt replayed with its event key (the hook's spool) is not counted
// again and recalls nothing again.
func TestPromptRecallReplay(t *testing.T) {
	m := openRecall(t, store.Options{})
	saveShop(t, m)
	p := memory.UserPromptParams{ContentSessionID: "cc-replay", Cwd: "/src/shop", Prompt: taxPrompt, EventKey: "k-replay"}
	first, err := m.UserPromptSubmit(context.Background(), p)
	if err != nil || first.Context == "" {
		t.Fatalf("first = %+v, %v", first, err)
	}
	injections := countInjections(t, m)
	again, err := m.UserPromptSubmit(context.Background(), p)
	if err != nil || again.PromptNumber != first.PromptNumber || again.Context != "" {
		t.Fatalf("replay = %+v, %v; want prompt %d without context", again, err, first.PromptNumber)
	}
	if n := countInjections(t, m); n != injections {
		t.Errorf("the replay recorded %d injections", n-injections)
	}
}
