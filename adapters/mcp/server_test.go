package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemo-dev/mnemo/adapters/mcp"
	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/rpc"
)

// TestTools checks what a client sees before calling anything: the five
// tools, each with an object input schema, an output schema and a
// description that points to the next step of the workflow, and server
// instructions that teach it.
func TestTools(t *testing.T) {
	cs, _ := newSession(t, projectDir(t, "billing-api"))
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range byName {
			if !yield(n) {
				return
			}
		}
	})
	want := []string{mcp.ToolCorrectMemory, mcp.ToolForget, mcp.ToolGetObservations, mcp.ToolPinMemory, mcp.ToolSaveMemory, mcp.ToolSearch, mcp.ToolTimeline}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	for _, tc := range []struct {
		name     string
		required []string
		mentions []string // other tools its description points to
	}{
		{mcp.ToolSearch, nil, []string{"timeline", "get_observations"}},
		{mcp.ToolTimeline, []string{"anchor"}, []string{"search", "get_observations"}},
		{mcp.ToolGetObservations, []string{"ids"}, []string{"search", "timeline"}},
		{mcp.ToolSaveMemory, []string{"text"}, []string{"search"}},
		{mcp.ToolForget, []string{"ids"}, []string{"search", "get_observations"}},
		{mcp.ToolCorrectMemory, []string{"id"}, []string{"search", "get_observations", "forget"}},
		{mcp.ToolPinMemory, []string{"ids"}, []string{"search", "unpin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := byName[tc.name]
			var in struct {
				Type                 string                     `json:"type"`
				Properties           map[string]json.RawMessage `json:"properties"`
				Required             []string                   `json:"required"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
			}
			remarshal(t, tool.InputSchema, &in)
			if in.Type != "object" || len(in.Properties) == 0 {
				t.Errorf("input schema: type %q with %d properties", in.Type, len(in.Properties))
			}
			if in.AdditionalProperties == nil || *in.AdditionalProperties {
				t.Errorf("input schema allows unknown arguments")
			}
			if !slices.Equal(in.Required, tc.required) {
				t.Errorf("required = %v, want %v", in.Required, tc.required)
			}
			for name, p := range in.Properties {
				var d struct {
					Description string `json:"description"`
				}
				json.Unmarshal(p, &d)
				if d.Description == "" {
					t.Errorf("argument %q has no description", name)
				}
			}
			if tool.OutputSchema == nil {
				t.Errorf("no output schema")
			}
			for _, m := range tc.mentions {
				if !strings.Contains(tool.Description, m) {
					t.Errorf("description does not mention %s: %s", m, tool.Description)
				}
			}
		})
	}
	instr := cs.InitializeResult().Instructions
	for _, w := range []string{"search", "timeline", "get_observations", "save_memory", "correct_memory", "pin_memory", "forget", `"billing-api"`} {
		if !strings.Contains(instr, w) {
			t.Errorf("instructions do not mention %s:\n%s", w, instr)
		}
	}
}

// The tool list goes into the context of every session the agent runs:
// it stays under 8 KB of JSON (13.4 KB before the descriptions were
// tightened and the output schemas kept to their top level; claude-mem's
// 14 tools take 7.8 KB, the reference MCP memory server's 9 tools 10.8 KB;
// docs/decisions.md has the token counts).
func TestToolListStaysSmall(t *testing.T) {
	cs, _ := newSession(t, projectDir(t, "billing-api"))
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 8<<10 {
		t.Errorf("the tool list is %d bytes of JSON, over 8 KB", len(b))
	}
	t.Logf("tools/list: %d tools, %d bytes", len(res.Tools), len(b))
}

var rowRE = regexp.MustCompile(`(?m)^(> |  )?#(\d+) · \d{4}-\d\d-\d\d \d\d:\d\d · [a-z_]+ · .+$`)

// rowIDs reads the ids of a compact index.
func rowIDs(t *testing.T, text string) []uint64 {
	t.Helper()
	var ids []uint64
	for _, m := range rowRE.FindAllStringSubmatch(text, -1) {
		id, _ := strconv.ParseUint(m[2], 10, 64)
		ids = append(ids, id)
	}
	return ids
}

func sorted(ids []uint64) []uint64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

// TestWorkflow walks the workflow the tools teach, against a real
// memory: save → search (every filter) → timeline → get → forget.
func TestWorkflow(t *testing.T) {
	cwd := projectDir(t, "billing-api")
	cs, _ := newSession(t, cwd)

	save := func(args map[string]any) mcp.SaveOutput {
		t.Helper()
		txt, res := mustOK(t, cs, mcp.ToolSaveMemory, args)
		var out mcp.SaveOutput
		remarshal(t, res.StructuredContent, &out)
		if !strings.Contains(txt, fmt.Sprintf("Saved as #%d", out.ID)) {
			t.Errorf("save text does not say the id %d: %s", out.ID, txt)
		}
		return out
	}
	round := save(map[string]any{"text": "Invoices round half-even; the PDF totals depend on it.", "title": "Round invoices half-even", "type": "decision", "files": []string{"billing/round.go"}})
	deploy := save(map[string]any{"text": "Deploys go through the staging cluster first.", "project": "ops-repo"})
	fonts := save(map[string]any{"text": "The PDF renderer needs the fonts in assets/fonts.\nWithout them it falls back to Courier.", "files": []string{filepath.Join(cwd, "billing", "pdf.go")}})

	if round.Project != "billing-api" || round.Type != "decision" || round.Title != "Round invoices half-even" {
		t.Errorf("saved %+v, want project billing-api (the cwd's), type decision, the given title", round)
	}
	if deploy.Project != "ops-repo" || deploy.Type != "note" {
		t.Errorf("saved %+v, want project ops-repo, type note", deploy)
	}
	if fonts.Title != "The PDF renderer needs the fonts in assets/fonts." {
		t.Errorf("title %q, want the text's first line", fonts.Title)
	}
	again := save(map[string]any{"text": "Deploys go through the staging cluster first.", "project": "ops-repo"})
	if again.ID != deploy.ID {
		t.Errorf("saving the same text again made #%d, want #%d", again.ID, deploy.ID)
	}

	t.Run("search", func(t *testing.T) {
		all := []uint64{round.ID, deploy.ID, fonts.ID}
		for _, tc := range []struct {
			name string
			args map[string]any
			want []uint64 // the hits, in any order
			top  uint64   // the best hit of a query
		}{
			// A query ranks (keywords and meaning together); filters select.
			{"query", map[string]any{"query": "PDF renderer fonts"}, []uint64{round.ID, fonts.ID}, fonts.ID},
			{"query in a project", map[string]any{"query": "staging deploys", "project": "ops-repo"}, []uint64{deploy.ID}, deploy.ID},
			{"query and a type", map[string]any{"query": "PDF", "types": []string{"decision"}}, []uint64{round.ID}, round.ID},
			{"nulls are absent", map[string]any{"query": "staging cluster deploys", "project": nil, "types": nil}, []uint64{deploy.ID}, deploy.ID},
			{"project", map[string]any{"project": "ops-repo"}, []uint64{deploy.ID}, 0},
			{"types", map[string]any{"types": []string{"decision"}}, []uint64{round.ID}, 0},
			{"files", map[string]any{"files": []string{"pdf.go"}}, []uint64{fonts.ID}, 0},
			{"since an age", map[string]any{"since": "1h"}, all, 0},
			{"since a time", map[string]any{"since": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)}, all, 0},
			{"until a date", map[string]any{"until": "2000-01-01"}, nil, 0},
			{"query, nothing in range", map[string]any{"query": "PDF", "until": "2000-01-01"}, nil, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				txt, res := mustOK(t, cs, mcp.ToolSearch, tc.args)
				var out mcp.SearchOutput
				remarshal(t, res.StructuredContent, &out)
				var hits []uint64
				for _, h := range out.Hits {
					hits = append(hits, h.ID)
				}
				if got := sorted(hits); !slices.Equal(got, sorted(tc.want)) {
					t.Errorf("hits %v, want %v", got, sorted(tc.want))
				}
				if rows := rowIDs(t, txt); !slices.Equal(rows, hits) {
					t.Errorf("rows %v, want the hits in order %v:\n%s", rows, hits, txt)
				}
				if tc.top != 0 && (len(hits) == 0 || hits[0] != tc.top) {
					t.Errorf("best hit of %v, want #%d:\n%s", hits, tc.top, txt)
				}
				if len(tc.want) == 0 && !strings.Contains(txt, "No observation found") {
					t.Errorf("empty result says: %s", txt)
				}
				if len(tc.want) > 0 && !strings.Contains(txt, "Next: timeline(anchor=") {
					t.Errorf("no next step in: %s", txt)
				}
			})
		}
		t.Run("limit", func(t *testing.T) {
			txt, _ := mustOK(t, cs, mcp.ToolSearch, map[string]any{"limit": 1})
			if ids := rowIDs(t, txt); !slices.Equal(ids, []uint64{fonts.ID}) {
				t.Errorf("rows %v, want the newest only [%d]:\n%s", ids, fonts.ID, txt)
			}
		})
		t.Run("projects named when mixed", func(t *testing.T) {
			txt, _ := mustOK(t, cs, mcp.ToolSearch, nil)
			if !strings.Contains(txt, " · ops-repo\n") || !strings.Contains(txt, " · billing-api\n") {
				t.Errorf("rows of several projects do not name them:\n%s", txt)
			}
		})
	})

	t.Run("timeline", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			args   map[string]any
			want   []uint64
			anchor uint64
		}{
			// Around an id: the anchor's project only, oldest first.
			{"id", map[string]any{"anchor": fonts.ID}, []uint64{round.ID, fonts.ID}, fonts.ID},
			{"#id", map[string]any{"anchor": fmt.Sprintf("#%d", round.ID)}, []uint64{round.ID, fonts.ID}, round.ID},
			{"before only", map[string]any{"anchor": fonts.ID, "after": 0, "before": 1}, []uint64{round.ID, fonts.ID}, fonts.ID},
			{"after 0", map[string]any{"anchor": round.ID, "after": 0, "before": 3}, []uint64{round.ID}, round.ID},
			{"anchor alone", map[string]any{"anchor": fonts.ID, "after": 0, "before": 0}, []uint64{fonts.ID}, fonts.ID},
			// Around a time: every project.
			{"time", map[string]any{"anchor": time.Now().Add(time.Minute).Format(time.RFC3339)}, []uint64{round.ID, deploy.ID, fonts.ID}, 0},
			{"other project", map[string]any{"anchor": round.ID, "project": "ops-repo"}, []uint64{round.ID, deploy.ID}, round.ID},
		} {
			t.Run(tc.name, func(t *testing.T) {
				txt, res := mustOK(t, cs, mcp.ToolTimeline, tc.args)
				var out mcp.TimelineOutput
				remarshal(t, res.StructuredContent, &out)
				var got []uint64
				for _, r := range out.Observations {
					got = append(got, r.ID)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("observations %v, want %v (oldest first)", got, tc.want)
				}
				if !slices.Equal(rowIDs(t, txt), tc.want) {
					t.Errorf("rows %v, want %v:\n%s", rowIDs(t, txt), tc.want, txt)
				}
				if out.AnchorID != tc.anchor {
					t.Errorf("anchor %d, want %d", out.AnchorID, tc.anchor)
				}
				if tc.anchor != 0 && !strings.Contains(txt, fmt.Sprintf("> #%d ·", tc.anchor)) {
					t.Errorf("anchor not marked:\n%s", txt)
				}
			})
		}
	})

	t.Run("get_observations", func(t *testing.T) {
		txt, res := mustOK(t, cs, mcp.ToolGetObservations, map[string]any{"ids": []uint64{fonts.ID, round.ID, 424242}})
		var out memory.ObservationsResult
		remarshal(t, res.StructuredContent, &out)
		if len(out.Observations) != 2 || out.Observations[0].ID != fonts.ID || out.Observations[1].ID != round.ID {
			t.Fatalf("observations %+v, want #%d then #%d", out.Observations, fonts.ID, round.ID)
		}
		if !slices.Equal(out.Missing, []uint64{424242}) {
			t.Errorf("missing %v, want [424242]", out.Missing)
		}
		for _, o := range out.Observations {
			if o.Source != memory.SourceSaved {
				t.Errorf("#%d source %q, want %q", o.ID, o.Source, memory.SourceSaved)
			}
		}
		for _, w := range []string{
			fmt.Sprintf("## #%d · note · The PDF renderer needs the fonts in assets/fonts.", fonts.ID),
			"Without them it falls back to Courier.",
			"Files modified: billing/pdf.go", // stored relative to the cwd
			fmt.Sprintf("## #%d · decision · Round invoices half-even", round.ID),
			"project billing-api", "saved by the agent",
			"Not found: #424242",
		} {
			if !strings.Contains(txt, w) {
				t.Errorf("text lacks %q:\n%s", w, txt)
			}
		}
	})

	t.Run("correct_memory", func(t *testing.T) {
		txt, res := mustOK(t, cs, mcp.ToolCorrectMemory, map[string]any{"id": round.ID, "text": "Invoices round half-up, per the auditor; the PDF totals depend on it."})
		var out mcp.CorrectOutput
		remarshal(t, res.StructuredContent, &out)
		if out.ID != round.ID || !out.Changed || out.Edits != 1 || out.Title != "Round invoices half-even" {
			t.Errorf("correct = %+v", out)
		}
		if w := fmt.Sprintf("Corrected #%d (decision, project billing-api): Round invoices half-even", round.ID); !strings.Contains(txt, w) {
			t.Errorf("text lacks %q:\n%s", w, txt)
		}
		if txt, _ := mustOK(t, cs, mcp.ToolSearch, map[string]any{"query": "auditor"}); !slices.Contains(rowIDs(t, txt), round.ID) {
			t.Errorf("search does not find the corrected text:\n%s", txt)
		}
		txt, _ = mustOK(t, cs, mcp.ToolGetObservations, map[string]any{"ids": []uint64{round.ID}})
		for _, w := range []string{"Invoices round half-up, per the auditor", "Corrected 1 time; what it said before, newest first:", "  Invoices round half-even; the PDF totals depend on it."} {
			if !strings.Contains(txt, w) {
				t.Errorf("get text lacks %q:\n%s", w, txt)
			}
		}
		txt, res = mustOK(t, cs, mcp.ToolCorrectMemory, map[string]any{"id": round.ID, "title": "Round invoices half-even"})
		remarshal(t, res.StructuredContent, &out)
		if out.Changed || !strings.Contains(txt, "already says that") {
			t.Errorf("a correction that changes nothing = %+v: %s", out, txt)
		}
	})

	t.Run("pin_memory", func(t *testing.T) {
		txt, res := mustOK(t, cs, mcp.ToolPinMemory, map[string]any{"ids": []uint64{round.ID}})
		var out mcp.PinOutput
		remarshal(t, res.StructuredContent, &out)
		if !out.Pinned || !slices.Equal(out.Changed, []uint64{round.ID}) {
			t.Errorf("pin = %+v", out)
		}
		if w := fmt.Sprintf("Pinned #%d: it opens the context of every new session in project billing-api.", round.ID); !strings.Contains(txt, w) {
			t.Errorf("text lacks %q:\n%s", w, txt)
		}
		if txt, _ := mustOK(t, cs, mcp.ToolGetObservations, map[string]any{"ids": []uint64{round.ID}}); !strings.Contains(txt, "· pinned") {
			t.Errorf("get does not say it is pinned:\n%s", txt)
		}
		txt, res = mustOK(t, cs, mcp.ToolPinMemory, map[string]any{"ids": []uint64{round.ID}, "unpin": true})
		remarshal(t, res.StructuredContent, &out)
		if out.Pinned || !slices.Equal(out.Changed, []uint64{round.ID}) || !strings.Contains(txt, "Unpinned #") {
			t.Errorf("unpin = %+v: %s", out, txt)
		}
	})

	t.Run("forget", func(t *testing.T) {
		txt, res := mustOK(t, cs, mcp.ToolForget, map[string]any{"ids": []uint64{fonts.ID, 424242}})
		var out memory.ForgetResult
		remarshal(t, res.StructuredContent, &out)
		if !slices.Equal(out.Deleted, []uint64{fonts.ID}) || !slices.Equal(out.Missing, []uint64{424242}) {
			t.Errorf("forget = %+v, want deleted [%d], missing [424242]", out, fonts.ID)
		}
		for _, w := range []string{fmt.Sprintf("#%d \"The PDF renderer needs the fonts in assets/fonts.\" (note, billing-api)", fonts.ID), "Did not exist, nothing removed: #424242"} {
			if !strings.Contains(txt, w) {
				t.Errorf("text lacks %q:\n%s", w, txt)
			}
		}
		// Gone from every path to it.
		if txt, _ := mustOK(t, cs, mcp.ToolSearch, map[string]any{"query": "PDF renderer fonts"}); slices.Contains(rowIDs(t, txt), fonts.ID) {
			t.Errorf("search still finds it:\n%s", txt)
		}
		if txt, _ := mustOK(t, cs, mcp.ToolSearch, map[string]any{"files": []string{"pdf.go"}}); len(rowIDs(t, txt)) != 0 {
			t.Errorf("a file search still finds it:\n%s", txt)
		}
		if txt, _ := mustOK(t, cs, mcp.ToolTimeline, map[string]any{"anchor": round.ID}); slices.Contains(rowIDs(t, txt), fonts.ID) {
			t.Errorf("the timeline still shows it:\n%s", txt)
		}
		res = callTool(t, cs, mcp.ToolGetObservations, map[string]any{"ids": []uint64{fonts.ID}})
		if !res.IsError || !strings.Contains(text(res), fmt.Sprintf("no observation #%d exists", fonts.ID)) {
			t.Errorf("get after forget: isError %v, %s", res.IsError, text(res))
		}
		res = callTool(t, cs, mcp.ToolForget, map[string]any{"ids": []uint64{fonts.ID}})
		if !res.IsError || !strings.Contains(text(res), "nothing removed") {
			t.Errorf("forgetting twice: isError %v, %s", res.IsError, text(res))
		}
	})
}

// TestBadArguments calls every tool with arguments it must refuse: each
// call is a tool error (not a protocol error) whose text names the tool
// and the problem, and the session keeps serving.
func TestBadArguments(t *testing.T) {
	cs, _ := newSession(t, projectDir(t, "billing-api"))
	mustOK(t, cs, mcp.ToolSaveMemory, map[string]any{"text": "Something to find."})
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{mcp.ToolGetObservations, map[string]any{}, `missing required argument "ids" (an array of integers (1 to 50 items))`},
		{mcp.ToolGetObservations, map[string]any{"ids": "12"}, `argument "ids": got a string "12", want an array of integers`},
		{mcp.ToolGetObservations, map[string]any{"ids": []any{1, "x"}}, `argument "ids" item 2: got a string "x", want an integer`},
		{mcp.ToolGetObservations, map[string]any{"ids": []any{1.5}}, `argument "ids" item 1: got a number 1.5, want an integer`},
		{mcp.ToolGetObservations, map[string]any{"ids": []any{}}, `argument "ids": got 0 items, want at least 1`},
		{mcp.ToolGetObservations, map[string]any{"ids": []any{-3}}, `argument "ids" item 1: -3 is too small`},
		{mcp.ToolGetObservations, map[string]any{"ids": make([]int, 51)}, `want at most 50; split the call`},
		{mcp.ToolGetObservations, map[string]any{"ids": []any{424242}}, `no observation #424242 exists`},
		{mcp.ToolGetObservations, []any{1, 2}, `the arguments must be a JSON object, got an array [1,2]`},
		{mcp.ToolSearch, map[string]any{"limit": "ten"}, `argument "limit": got a string "ten", want an integer from 1 to 100`},
		{mcp.ToolSearch, map[string]any{"limit": 0}, `argument "limit": 0 is too small`},
		{mcp.ToolSearch, map[string]any{"limit": 5000}, `argument "limit": 5000 is too large`},
		{mcp.ToolSearch, map[string]any{"typ": "bugfix"}, `unknown argument "typ"; this tool takes author, files, host, limit, project, query, since, types, until`},
		{mcp.ToolSearch, map[string]any{"types": "bugfix"}, `argument "types": got a string "bugfix", want an array of non-empty strings`},
		{mcp.ToolSearch, map[string]any{"since": "the other day"}, `argument "since": "the other day" is not a time: use today, yesterday, an age`},
		{mcp.ToolSearch, map[string]any{"since": "2026-05-02", "until": "2026-05-01"}, `"until" (2026-05-01 23:59) is before "since" (2026-05-02 00:00)`},
		{mcp.ToolTimeline, map[string]any{}, `missing required argument "anchor" (an integer of at least 1 or a non-empty string)`},
		{mcp.ToolTimeline, map[string]any{"anchor": true}, `argument "anchor": got a boolean true`},
		{mcp.ToolTimeline, map[string]any{"anchor": "soon"}, `"soon" is neither an observation id (12 or "#12") nor a time`},
		{mcp.ToolTimeline, map[string]any{"anchor": 424242}, `timeline: no observation #424242 exists`},
		{mcp.ToolTimeline, map[string]any{"anchor": "#424242"}, `timeline: no observation #424242 exists`},
		{mcp.ToolTimeline, map[string]any{"anchor": 1, "before": -1}, `argument "before": -1 is too small, want an integer from 0 to 50`},
		{mcp.ToolSaveMemory, map[string]any{}, `missing required argument "text" (a non-empty string)`},
		{mcp.ToolSaveMemory, map[string]any{"text": ""}, `argument "text": must not be empty`},
		{mcp.ToolSaveMemory, map[string]any{"text": "   "}, `invalid arguments: text is required`},
		{mcp.ToolSaveMemory, map[string]any{"text": "<private>only this</private>"}, `text is empty once private parts are removed`},
		{mcp.ToolSaveMemory, map[string]any{"text": 42}, `argument "text": got an integer 42, want a non-empty string`},
		{mcp.ToolSaveMemory, map[string]any{"text": "x", "files": "a.go"}, `argument "files": got a string "a.go", want an array of non-empty strings`},
		{mcp.ToolForget, map[string]any{"ids": "all"}, `argument "ids": got a string "all"`},
		{mcp.ToolForget, map[string]any{"ids": []any{424242}}, `forget: nothing removed: no observation #424242 exists`},
		{mcp.ToolCorrectMemory, map[string]any{"title": "x"}, `missing required argument "id"`},
		{mcp.ToolCorrectMemory, map[string]any{"id": 1}, `give title, text or both; an empty correction changes nothing`},
		{mcp.ToolCorrectMemory, map[string]any{"id": 1, "title": " ", "text": ""}, `an empty correction changes nothing`},
		{mcp.ToolCorrectMemory, map[string]any{"id": 424242, "title": "x"}, `correct_memory: no observation #424242 exists (forgotten, or never recorded); nothing changed`},
		{mcp.ToolCorrectMemory, map[string]any{"id": 1, "text": "<private>only this</private>"}, `text is empty once private parts are removed`},
		{mcp.ToolPinMemory, map[string]any{"ids": []any{1, 424242}}, `pin_memory: no observation #424242 exists (forgotten, or never recorded); nothing was pinned`},
		{mcp.ToolPinMemory, map[string]any{"ids": []any{}}, `argument "ids": got 0 items, want at least 1`},
		{mcp.ToolPinMemory, map[string]any{"ids": []any{1}, "unpin": "yes"}, `argument "unpin": got a string "yes", want a boolean`},
	} {
		b, _ := json.Marshal(tc.args)
		t.Run(tc.tool+" "+string(b[:min(len(b), 40)]), func(t *testing.T) {
			res := callTool(t, cs, tc.tool, tc.args)
			txt := text(res)
			if !res.IsError {
				t.Fatalf("not a tool error: %s", txt)
			}
			if !strings.HasPrefix(txt, tc.tool+": ") || !strings.Contains(txt, tc.want) {
				t.Errorf("error text\n  %s\nwant it to start with %q and contain\n  %s", txt, tc.tool+": ", tc.want)
			}
			if res.StructuredContent != nil {
				t.Errorf("an error carries structured content: %v", res.StructuredContent)
			}
		})
	}
	// An unknown tool is the one protocol error; the session goes on.
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "remember", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), `unknown tool "remember"`) {
		t.Errorf("unknown tool: %v", err)
	}
	if txt, _ := mustOK(t, cs, mcp.ToolSearch, map[string]any{"query": "something to find"}); len(rowIDs(t, txt)) != 1 {
		t.Errorf("the session stopped serving:\n%s", txt)
	}
}

// TestRowBudget checks the compact index's size: a row of search is about
// 60 tokens at most (taken as 4 bytes a token), with the snippet that says
// why it matched.
func TestRowBudget(t *testing.T) {
	cs, _ := newSession(t, projectDir(t, "billing-api"))
	for i := range 30 {
		mustOK(t, cs, mcp.ToolSaveMemory, map[string]any{
			"title": fmt.Sprintf("Invoice PDF export %d: totals rounded half-even before the currency conversion step", i),
			"text":  fmt.Sprintf("Case %d. The invoice exporter rounds every line total half-even, then converts the currency; doing it the other way round drifts by a cent on large invoices. See billing/export.go and billing/round.go.", i),
			"files": []string{"billing/export.go", "billing/round.go"},
		})
	}
	txt, _ := mustOK(t, cs, mcp.ToolSearch, map[string]any{"query": "currency conversion cent", "limit": 30})
	var sizes []int
	for _, line := range strings.Split(txt, "\n") {
		if rowRE.MatchString(line) {
			sizes = append(sizes, len(line))
		}
	}
	if len(sizes) != 30 {
		t.Fatalf("%d rows, want 30:\n%s", len(sizes), txt)
	}
	sort.Ints(sizes)
	median, most := sizes[len(sizes)/2], sizes[len(sizes)-1]
	t.Logf("row bytes: median %d, max %d (~%d tokens); e.g. %s", median, most, most/4, strings.SplitN(txt, "\n", 3)[1])
	if most > 240 {
		t.Errorf("a row takes %d bytes, over the ~60-token budget (240 bytes)", most)
	}
}

// TestDaemonUnreachable checks the error of a tool that cannot reach the
// daemon: it says so, says what to do, and the next call tries again.
func TestDaemonUnreachable(t *testing.T) {
	var dials int
	dc := mcp.NewDaemonClient(func(ctx context.Context) (*rpc.Client, error) {
		dials++
		return nil, errors.New("dial unix /run/mnemo.sock: connect: no such file or directory")
	}, nil)
	srv := mcp.NewServer(dc, mcp.Options{Cwd: projectDir(t, "billing-api"), DaemonHelp: "Run `mnemo daemon status`."})
	cs := connect(t, srv)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{mcp.ToolSearch, map[string]any{"query": "x"}},
		{mcp.ToolTimeline, map[string]any{"anchor": 1}},
		{mcp.ToolGetObservations, map[string]any{"ids": []int{1}}},
		{mcp.ToolSaveMemory, map[string]any{"text": "x"}},
		{mcp.ToolForget, map[string]any{"ids": []int{1}}},
		{mcp.ToolCorrectMemory, map[string]any{"id": 1, "title": "x"}},
		{mcp.ToolPinMemory, map[string]any{"ids": []int{1}}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			before := dials
			res := callTool(t, cs, tc.tool, tc.args)
			txt := text(res)
			if !res.IsError {
				t.Fatalf("not an error: %s", txt)
			}
			for _, w := range []string{tc.tool + ": the Mnemo daemon is unreachable: dial unix", "retrying once may work", "Run `mnemo daemon status`."} {
				if !strings.Contains(txt, w) {
					t.Errorf("text lacks %q: %s", w, txt)
				}
			}
			if dials == before {
				t.Errorf("the call did not try to connect")
			}
		})
	}
}

// TestEachDaemonCallIsBounded checks Options.CallTimeout: it bounds each
// daemon call on its own (forget makes two: the titles, then the delete),
// and a daemon that does not answer in time gets a tool error saying so.
func TestEachDaemonCallIsBounded(t *testing.T) {
	const timeout = 2 * time.Second
	c := &slowCaller{wait: 300 * time.Millisecond}
	srv := mcp.NewServer(c, mcp.Options{Cwd: projectDir(t, "billing-api"), CallTimeout: timeout})
	cs := connect(t, srv)
	callTool(t, cs, mcp.ToolForget, map[string]any{"ids": []int{1}})
	if len(c.left) != 2 {
		t.Fatalf("forget made %d daemon calls; want 2", len(c.left))
	}
	for i, left := range c.left {
		if left < timeout-150*time.Millisecond || left > timeout {
			t.Errorf("call %d had %s left of its deadline; want about %s, its own", i+1, left, timeout)
		}
	}

	c = &slowCaller{wait: time.Hour}
	srv = mcp.NewServer(c, mcp.Options{Cwd: projectDir(t, "billing-api"), CallTimeout: 50 * time.Millisecond})
	res := callTool(t, connect(t, srv), mcp.ToolSearch, map[string]any{"query": "x"})
	if want := "search: the Mnemo daemon did not answer within 50ms"; !res.IsError || !strings.Contains(text(res), want) {
		t.Errorf("search = %q (error %t); want an error containing %q", text(res), res.IsError, want)
	}
}

// slowCaller records how long each call had left before its deadline,
// then answers after wait (or when the call's context ends) with an error.
type slowCaller struct {
	wait time.Duration
	left []time.Duration
}

func (c *slowCaller) Call(ctx context.Context, method string, _, _ any) error {
	if dl, ok := ctx.Deadline(); ok {
		c.left = append(c.left, time.Until(dl))
	}
	select {
	case <-time.After(c.wait):
		return errors.New("connection reset")
	case <-ctx.Done():
		return fmt.Errorf("call %s: %w", method, ctx.Err())
	}
}
