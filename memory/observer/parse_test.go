package observer_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/internal/cputime"
	"github.com/mnemo-dev/mnemo/memory/observer"
)

// note is the part of an observation the parser fills.
type note struct {
	Type, Title, Subtitle, Narrative string
	Facts, Concepts, Read, Modified  []string
}

func notesOf(obs []memory.Observation) []note {
	var out []note
	for _, o := range obs {
		out = append(out, note{o.Type, o.Title, o.Subtitle, o.Narrative, o.Facts, o.Concepts, o.FilesRead, o.FilesModified})
	}
	return out
}

// TestParse covers the tolerant cases of the system we replace
// (claude-mem's parser tests) and the ones its regexes got wrong.
func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []note
		summary *memory.Summary
		skip    string
	}{
		{
			name: "full observation",
			in: `<observation>
  <type>bugfix</type>
  <title>Fixed half-even rounding in billing/rounding.go</title>
  <subtitle>roundCents used math.Round, which rounds half away from zero.</subtitle>
  <facts><fact>roundCents now calls math.RoundToEven</fact><fact>go test ./billing/ passes</fact></facts>
  <narrative>Invoice totals were a cent high.</narrative>
  <concepts><concept>problem-solution</concept><concept>gotcha</concept></concepts>
  <files_read><file>billing/invoice.go</file></files_read>
  <files_modified><file>billing/rounding.go</file></files_modified>
</observation>`,
			want: []note{{
				Type: "bugfix", Title: "Fixed half-even rounding in billing/rounding.go",
				Subtitle:  "roundCents used math.Round, which rounds half away from zero.",
				Narrative: "Invoice totals were a cent high.",
				Facts:     []string{"roundCents now calls math.RoundToEven", "go test ./billing/ passes"},
				Concepts:  []string{"problem-solution", "gotcha"},
				Read:      []string{"billing/invoice.go"}, Modified: []string{"billing/rounding.go"},
			}},
		},
		{
			name:    "summary with only a request is valid",
			in:      `<summary><request>Fix the bug</request></summary>`,
			summary: &memory.Summary{Request: "Fix the bug"},
		},
		{
			name: "summary of plain text is not one",
			in:   `<summary>plain text</summary>`,
		},
		{
			name: "skip_summary",
			in:   `<skip_summary reason="no work done"/>`,
			skip: "no work done",
		},
		{
			name: "skip_summary without a reason",
			in:   `<skip_summary/>`,
			skip: "no reason given",
		},
		{
			name: "only a subtitle is dropped",
			in:   `<observation><subtitle>just a subtitle</subtitle></observation>`,
		},
		{
			name: "missing type without modified files is a discovery",
			in:   `<observation><title>Read the config loader</title></observation>`,
			want: []note{{Type: "discovery", Title: "Read the config loader"}},
		},
		{
			name: "missing type with modified files is a change",
			in:   `<observation><title>Bumped the timeout</title><files_modified><file>cfg.go</file></files_modified></observation>`,
			want: []note{{Type: "change", Title: "Bumped the timeout", Modified: []string{"cfg.go"}}},
		},
		{
			name: "unknown type becomes the default",
			in:   `<observation><type>code</type><title>Looked at the parser</title></observation>`,
			want: []note{{Type: "discovery", Title: "Looked at the parser"}},
		},
		{
			name: "type aliases and case",
			in: `<observation><type> Bug Fix </type><title>a</title></observation>
<observation><type>security_alert</type><title>b</title></observation>
<observation><type>Refactoring</type><title>c</title></observation>`,
			want: []note{{Type: "bugfix", Title: "a"}, {Type: "security_note", Title: "b"}, {Type: "refactor", Title: "c"}},
		},
		{
			name: "concepts cut at the colon, the type removed",
			in: `<observation><type>gotcha</type><title>WASM</title>
<concepts><concept>gotcha: WASM quirk</concept><concept>Pattern</concept><concept>discovery</concept><concept>pattern</concept></concepts></observation>`,
			want: []note{{Type: "discovery", Title: "WASM", Concepts: []string{"gotcha", "pattern"}}},
		},
		{
			name: "observation then summary: both read, the agent picks by event",
			in:   `<observation><type>change</type><title>t</title></observation><summary><completed>done</completed></summary>`,
			want: []note{{Type: "change", Title: "t"}}, summary: &memory.Summary{Completed: "done"},
		},
		{
			name: "whole-payload fence stripped, inner fence kept",
			in:   "```xml\n<observation><type>discovery</type><title>How parse works</title><narrative>Call it like this:\n```go\nobserver.Parse(s)\n```\nand read the reply.</narrative></observation>\n```",
			want: []note{{Type: "discovery", Title: "How parse works",
				Narrative: "Call it like this:\n```go\nobserver.Parse(s)\n```\nand read the reply."}},
		},
		{
			name: "text around the blocks",
			in:   "Sure! Here are my notes:\n\n<observation><type>feature</type><title>Added retries</title></observation>\nLet me know if you need more.",
			want: []note{{Type: "feature", Title: "Added retries"}},
		},
		{
			name: "unclosed fields and an unclosed block",
			in:   "<observation><type>bugfix<title>Fixed the off-by-one</title><narrative>The loop ran one past the end\n<facts><fact>i <= n became i < n</facts>",
			want: []note{{Type: "bugfix", Title: "Fixed the off-by-one", Narrative: "The loop ran one past the end",
				Facts: []string{"i <= n became i < n"}}},
		},
		{
			name: "an unclosed block ends at the next one",
			in:   "<observation><type>change</type><title>first\n<observation><type>change</type><title>second</title></observation>",
			want: []note{{Type: "change", Title: "first"}, {Type: "change", Title: "second"}},
		},
		{
			name: "whitespace collapsed in one-line fields",
			in:   "<observation>\n\t<type>\n  discovery\n</type>\n<title>\n   Cache   keys\n are   per user\n</title>\n<facts>\n <fact>\n  TTL is 5m  \n</fact>\n</facts></observation>",
			want: []note{{Type: "discovery", Title: "Cache keys are per user", Facts: []string{"TTL is 5m"}}},
		},
		{
			name: "list items without tags",
			in: "<observation><title>Split the module</title><facts>\n- moved a to b\n* kept c\n1. dropped d\n</facts>" +
				"<files_modified>a.go, b.go\nc.go</files_modified></observation>",
			want: []note{{Type: "change", Title: "Split the module", Facts: []string{"moved a to b", "kept c", "dropped d"},
				Modified: []string{"a.go", "b.go", "c.go"}}},
		},
		{
			name: "entities and CDATA",
			in:   `<observation><title>a &lt; b &amp;&amp; c</title><narrative><![CDATA[if x < y && <b> {}]]></narrative></observation>`,
			want: []note{{Type: "discovery", Title: "a < b && c", Narrative: "if x < y && <b> {}"}},
		},
		{
			name: "tags in any case, with attributes, in a plural wrapper",
			in:   `<observations><Observation id="1"><TYPE>decision</TYPE><Title>Use half-even</Title></Observation></observations>`,
			want: []note{{Type: "decision", Title: "Use half-even"}},
		},
		{
			name: "a missing title comes from the narrative",
			in:   "<observation><type>discovery</type><narrative>Webhooks retry on 503 only.\nOther codes fail fast.</narrative></observation>",
			want: []note{{Type: "discovery", Title: "Webhooks retry on 503 only.", Narrative: "Webhooks retry on 503 only.\nOther codes fail fast."}},
		},
		{
			name: "facts alone keep an observation",
			in:   "<observation><facts><fact>exit code 1</fact></facts></observation>",
			want: []note{{Type: "discovery", Title: "exit code 1", Facts: []string{"exit code 1"}}},
		},
		{
			name: "repeated items once",
			in:   "<observation><title>t</title><files_read><file>a.go</file><file>a.go</file></files_read></observation>",
			want: []note{{Type: "discovery", Title: "t", Read: []string{"a.go"}}},
		},
		{name: "empty answer", in: "   \n"},
		{name: "tags that never close their brackets", in: "<observation <summary>x</summary><facts><fact <fact>y</fact>"},
		{
			name: "<skip/> is no note",
			in:   "<skip/>",
		},
		{name: "prose only", in: "The agent read a file. Nothing notable happened."},
		{
			name: "full summary, next-steps spelled with a hyphen",
			in: "<summary>\n<request>Fix rounding</request>\n<investigated>billing/rounding.go</investigated>\n<learned>math.Round rounds half away from zero</learned>\n" +
				"<completed>Switched to math.RoundToEven</completed>\n<next-steps>Check the tax code</next-steps>\n<notes>none</notes>\n</summary>",
			summary: &memory.Summary{Request: "Fix rounding", Investigated: "billing/rounding.go", Learned: "math.Round rounds half away from zero",
				Completed: "Switched to math.RoundToEven", NextSteps: "Check the tax code", Notes: "none"},
		},
		{
			name:    "an invalid summary, then a valid one",
			in:      "<summary>nothing</summary><summary><learned>x</learned></summary>",
			summary: &memory.Summary{Learned: "x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := observer.Parse(tt.in)
			if got := notesOf(r.Observations); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("observations:\n got %s\nwant %s", js(got), js(tt.want))
			}
			if !reflect.DeepEqual(r.Summary, tt.summary) {
				t.Errorf("summary:\n got %s\nwant %s", js(r.Summary), js(tt.summary))
			}
			if r.SkipReason != tt.skip {
				t.Errorf("skip reason %q, want %q", r.SkipReason, tt.skip)
			}
		})
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// FuzzParse: any input parses without a panic, and every observation it
// yields has a type and a title.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"<observation><title>t</title></observation>", "<observation><type>", "<summary><request>",
		"```xml\n<observation>\n```", "<facts><fact>a</fact>", "<observation/><summary/>", "<![CDATA[",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := observer.Parse(s)
		for _, o := range r.Observations {
			if o.Type == "" || o.Title == "" {
				t.Fatalf("observation without type or title from %q: %+v", s, o)
			}
		}
	})
}

// TestParseLinear: a long answer full of unclosed tags parses in linear
// time (a quadratic scan took minutes on the first of these).
func TestParseLinear(t *testing.T) {
	for name, in := range map[string]string{
		"unclosed blocks": strings.Repeat("<observation><title>x<fact>y ", 10000),
		"unclosed items":  "<observation><title>t</title><facts>" + strings.Repeat("<fact>a ", 30000),
		"bare opens":      strings.Repeat("<observation>", 20000) + strings.Repeat("<summary>", 20000),
		"no tags":         strings.Repeat("plain prose ", 100000),
	} {
		t.Run(name, func(t *testing.T) {
			began := cputime.Process()
			r := observer.Parse(in)
			if used := cputime.Process() - began; used > 2*time.Second {
				t.Fatalf("%d bytes took %v of CPU (%d observations)", len(in), used, len(r.Observations))
			}
		})
	}
}
