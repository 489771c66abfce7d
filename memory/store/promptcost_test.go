package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/internal/cputime"
	"github.com/mnemo-dev/mnemo/memory/store"
	"github.com/mnemo-dev/mnemo/vector"
)

// recordingEmbedder records every text it is asked to embed.
type recordingEmbedder struct {
	vector.Embedder
	mu    sync.Mutex
	texts []string
}

func (r *recordingEmbedder) Embed(ctx context.Context, text string) ([]float32, error) {
	r.mu.Lock()
	r.texts = append(r.texts, text)
	r.mu.Unlock()
	return r.Embedder.Embed(ctx, text)
}

func (r *recordingEmbedder) Texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.texts)
}

// pastedPrompt is a prompt of n bytes: a request and a pasted
// specification of numbered sections, as a person pastes one; the seed
// makes another spec of the same shape.
func pastedPrompt(n, seed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Implement the alerts module %d from this spec, starting with the alert names.\n\n", seed)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "## %d. Alert %d.%d\nAn alert of level %d fires when the forecast's rain probability passes %d%% within %d hours; its name is alert_%d_%d.\n\n", i, seed, i, i%3, 40+i%50, 1+i%12, seed, i)
	}
	return b.String()[:n]
}

// turnEvents are a turn's tool events: reads, an edit, test runs; the
// seed makes another turn's.
func turnEvents(n, seed int) []memory.ToolUseParams {
	var evs []memory.ToolUseParams
	for i := seed * n; i < (seed+1)*n; i++ {
		var ev memory.ToolUseParams
		switch i % 4 {
		case 0:
			ev = memory.ToolUseParams{ToolName: "Read", ToolInput: json.RawMessage(fmt.Sprintf(`{"file_path":"/src/rain/src/alerts%d.py"}`, i)),
				ToolResponse: json.RawMessage(fmt.Sprintf(`{"type":"text","file":{"filePath":"/src/rain/src/alerts%d.py","content":"def alert_name(level):\n    return f\"alert_{level}\"\n","numLines":2,"startLine":1,"totalLines":2}}`, i))}
		case 1:
			ev = memory.ToolUseParams{ToolName: "Edit", ToolInput: json.RawMessage(fmt.Sprintf(`{"file_path":"/src/rain/src/alerts%d.py","old_string":"return f\"alert_{level}\"","new_string":"return ALERT_NAMES[level] # %d"}`, i, i)),
				ToolResponse: json.RawMessage(fmt.Sprintf(`{"filePath":"/src/rain/src/alerts%d.py","structuredPatch":[{"oldStart":2,"oldLines":1,"newStart":2,"newLines":1,"lines":["-    return f\"alert_{level}\"","+    return ALERT_NAMES[level] # %d"]}]}`, i, i))}
		case 2:
			ev = memory.ToolUseParams{ToolName: "Bash", ToolInput: json.RawMessage(fmt.Sprintf(`{"command":"python -m pytest tests/test_alerts.py -k case%d","description":"Run the alert tests"}`, i)),
				ToolResponse: json.RawMessage(fmt.Sprintf(`{"stdout":"FAILED tests/test_alerts.py::test_case%d - AssertionError: assert 'alert_2' == 'page'\n1 failed in 0.03s","stderr":"","interrupted":false}`, i))}
		default:
			ev = memory.ToolUseParams{ToolName: "Bash", ToolInput: json.RawMessage(fmt.Sprintf(`{"command":"git diff --stat src/alerts%d.py"}`, i)),
				ToolResponse: json.RawMessage(fmt.Sprintf(`{"stdout":" src/alerts%d.py | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)","stderr":"","interrupted":false}`, i))}
		}
		evs = append(evs, ev)
	}
	return evs
}

// runTurn sends a prompt, the turn's tool events and its end for session
// csid, and waits until the memory has taken them in.
func runTurn(tb testing.TB, m *store.Memory, csid, prompt string, events []memory.ToolUseParams) {
	tb.Helper()
	ctx := context.Background()
	if _, err := m.UserPromptSubmit(ctx, memory.UserPromptParams{ContentSessionID: csid, Cwd: "/src/rain", Prompt: prompt}); err != nil {
		tb.Fatal(err)
	}
	for _, ev := range events {
		ev.ContentSessionID, ev.Cwd = csid, "/src/rain"
		if _, err := m.PostToolUse(ctx, ev); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := m.Stop(ctx, memory.StopParams{ContentSessionID: csid, Cwd: "/src/rain", LastAssistantMessage: "The alert names now come from ALERT_NAMES; the failing case is fixed.", Texts: []memory.TurnText{}}); err != nil {
		tb.Fatal(err)
	}
	waitIdle(tb, m)
}

// TestEmbeddedTextsDoNotGrowWithThePrompt checks that what a turn gives
// the embedder is bounded whatever its prompt's size: a turn whose prompt
// is a pasted spec of 11 KB and the same turn with 43 KB (the same first
// kilobytes) embed the same texts (the prompt's search reads its first
// 2 KB, each record its prompt's first 1 KB), and none of them is longer
// than a turn with a one-line prompt gives plus that excerpt.
func TestEmbeddedTextsDoNotGrowWithThePrompt(t *testing.T) {
	events := turnEvents(12, 0)
	texts := map[int][]string{}
	for _, size := range []int{126, 11 << 10, 43 << 10} {
		emb := &recordingEmbedder{Embedder: vector.NewHashEmbedder()}
		m := MustOpen(t, store.Options{Embedder: emb})
		waitIdle(t, m) // the index loaded: the prompt's search runs
		runTurn(t, m, fmt.Sprintf("cc-%d", size), pastedPrompt(size, 0), events)
		texts[size] = slices.Sorted(slices.Values(emb.Texts())) // the prompt's search runs beside the turn
	}
	if !slices.Equal(texts[11<<10], texts[43<<10]) {
		t.Errorf("the 43 KB prompt's turn embedded other texts than the 11 KB one's:\n%d texts, %d bytes\n%d texts, %d bytes",
			len(texts[11<<10]), totalLen(texts[11<<10]), len(texts[43<<10]), totalLen(texts[43<<10]))
	}
	if len(texts[43<<10]) != len(texts[126]) {
		t.Errorf("%d texts embedded with the 43 KB prompt, %d with the one-line prompt", len(texts[43<<10]), len(texts[126]))
	}
	longest := 0
	for _, s := range texts[126] {
		longest = max(longest, len(s))
	}
	for _, s := range texts[43<<10] {
		if len(s) > longest+4<<10 {
			t.Errorf("a text of %d bytes embedded with the 43 KB prompt; the longest with a one-line prompt is %d", len(s), longest)
		}
	}
}

func totalLen(ss []string) int {
	n := 0
	for _, s := range ss {
		n += len(s)
	}
	return n
}

// BenchmarkTurnByPromptSize measures what the memory's worker spends on a
// turn of 20 tool events (and its end) by the size of the turn's prompt
// (one line, and a pasted spec of 11 and 43 KB), with the sentence encoder
// when MNEMO_MODELS has it, else the hashing embedder: the CPU time of
// the process per tool event, from the prompt until the queue is empty.
func BenchmarkTurnByPromptSize(b *testing.B) {
	var emb vector.Embedder = vector.NewHashEmbedder()
	if dir := os.Getenv("MNEMO_MODELS"); dir != "" {
		if e, err := vector.OpenUSELite(dir); err == nil {
			emb = e
		}
	}
	const events = 20
	seed := 0
	for _, size := range []int{126, 11 << 10, 43 << 10} {
		b.Run(fmt.Sprintf("%s/prompt=%dB", emb.ID(), size), func(b *testing.B) {
			m := MustOpen(b, store.Options{Embedder: emb, NoSync: true})
			waitIdle(b, m)
			var cpu time.Duration
			n := 0
			for b.Loop() {
				// Every turn its own prompt and events: what the encoder
				// remembers serves within a turn, as it does in use.
				seed++
				prompt, evs := pastedPrompt(size, seed), turnEvents(events, seed)
				c0 := cputime.Process()
				runTurn(b, m, fmt.Sprintf("cc-%d", seed), prompt, evs)
				cpu += cputime.Process() - c0
				n += events
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/event")
		})
	}
}
