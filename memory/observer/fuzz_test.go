package observer_test

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/observer"
)

// The seed corpus is in testdata/fuzz/FuzzParseReply (answers shaped like a
// model's, and broken ones); run it with
//
//	go test -run '^$' -fuzz '^FuzzParseReply$' -fuzztime 30s ./memory/observer

// parseTypes are the types Parse may give an observation.
var parseTypes = []string{
	memory.TypeBugfix, memory.TypeFeature, memory.TypeRefactor, memory.TypeChange,
	memory.TypeDiscovery, memory.TypeDecision, memory.TypeSecurity, memory.TypeNote,
}

// FuzzParseReply parses arbitrary model answers. Parse must return (in time
// linear in the input: a few ms for what a fuzzer makes), never panic,
// and keep its promises: every observation has a title and a known type,
// at most 8 lower-case concepts without the type or a colon, no empty or
// repeated list items; a summary has one of its main fields; the text of
// valid UTF-8 input stays valid UTF-8.
func FuzzParseReply(f *testing.F) {
	f.Fuzz(func(t *testing.T, answer string) {
		start := time.Now()
		r := observer.Parse(answer)
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("Parse of %d bytes took %s", len(answer), took)
		}
		valid := utf8.ValidString(answer)
		for i, o := range r.Observations {
			if strings.TrimSpace(o.Title) == "" {
				t.Errorf("observation %d has no title: %+v", i, o)
			}
			if !slices.Contains(parseTypes, o.Type) {
				t.Errorf("observation %d has type %q", i, o.Type)
			}
			if len(o.Concepts) > 8 {
				t.Errorf("observation %d has %d concepts", i, len(o.Concepts))
			}
			for _, c := range o.Concepts {
				if c == o.Type || strings.Contains(c, ":") || c != strings.ToLower(c) {
					t.Errorf("observation %d has concept %q (type %q)", i, c, o.Type)
				}
			}
			for name, items := range map[string][]string{"facts": o.Facts, "concepts": o.Concepts, "filesRead": o.FilesRead, "filesModified": o.FilesModified} {
				seen := map[string]bool{}
				for _, it := range items {
					if strings.TrimSpace(it) == "" || seen[it] {
						t.Errorf("observation %d: %s has an empty or repeated item %q: %q", i, name, it, items)
					}
					seen[it] = true
				}
			}
			if valid {
				for _, s := range append([]string{o.Title, o.Subtitle, o.Narrative}, slices.Concat(o.Facts, o.Concepts, o.FilesRead, o.FilesModified)...) {
					if !utf8.ValidString(s) {
						t.Errorf("observation %d: %q is not UTF-8", i, s)
					}
				}
			}
		}
		if s := r.Summary; s != nil {
			if s.Request == "" && s.Investigated == "" && s.Learned == "" && s.Completed == "" && s.NextSteps == "" {
				t.Errorf("summary without content: %+v", s)
			}
			if r.SkipReason != "" {
				t.Errorf("a summary and a skip reason %q", r.SkipReason)
			}
		}
	})
}
