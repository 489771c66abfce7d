package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/mnemo-dev/mnemo/vector"
)

// The tests check what REPORT.md relies on: what the custom analyzers emit,
// and which scoring model bleve really applies.

func TestAnalyzers(t *testing.T) {
	const text = "Fix roundHalfEven and retry_with_backoff: E0425 in src/auth/sessionStore.go via the HTTPServer"
	tests := []struct {
		analyzer string
		want     []string
	}{
		{codeCompoundsAnalyzer, []string{"roundhalfeven", "retry_with_backoff", "e0425", "src/auth/sessionstore.go", "httpserver"}},
		{codeAnalyzer, []string{"fix", "round", "half", "even", "retri", "backoff", "e", "0425",
			"src", "auth", "session", "store", "go", "via", "http", "server"}},
		{mnemoAnalyzer, []string{"fix", "roundhalfeven", "round", "half", "even", "retry_with_backoff", "retry", "backoff",
			"e0425", "0425", "src/auth/sessionstore.go", "src", "auth", "sessionstore.go", "sessionstore", "session", "stor", "go",
			"via", "httpserver", "http", "server"}},
	}
	for _, tt := range tests {
		t.Run(tt.analyzer, func(t *testing.T) {
			im, err := setupCode.mapping()
			if err != nil {
				t.Fatal(err)
			}
			tokens, err := im.AnalyzeText(tt.analyzer, []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tok := range tokens {
				got = append(got, string(tok.Term))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("terms\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestScoringModel shows that the in-memory scorch index scores with BM25
// when the mapping asks for it, and that bleve.NewMemOnly (upsidedown)
// silently scores with TF-IDF.
func TestScoringModel(t *testing.T) {
	tests := []struct {
		setup bleveSetup
		want  string
	}{
		{setupStandard, "as per bm25 model"},
		{bleveSetup{analyzer: setupStandard.analyzer, scoring: setupStandard.scoring, upsidedown: true}, "as per tf-idf model"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			idx, err := tt.setup.openMemory()
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			docs := []vector.Doc{
				{ID: 1, Project: "p", Title: "Rounding of invoice totals", Text: "roundHalfEven rounds half to even"},
				{ID: 2, Project: "p", Title: "Retry with backoff", Text: "the gateway retries on HTTP 503"},
			}
			if err := tt.setup.indexDocs(idx, docs, 0); err != nil {
				t.Fatal(err)
			}
			req := bleve.NewSearchRequestOptions(tt.setup.query("rounding totals", "p"), 10, 0, true)
			res, err := idx.Search(req)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != 1 || res.Hits[0].ID != "1" {
				t.Fatalf("hits %v, want document 1 only", res.Hits)
			}
			if msgs := explanations(res.Hits[0].Expl); !strings.Contains(msgs, tt.want) {
				t.Errorf("explanation does not say %q:\n%s", tt.want, msgs)
			}
		})
	}
}

func explanations(e *search.Explanation) string {
	if e == nil {
		return ""
	}
	out := e.Message + "\n"
	for _, c := range e.Children {
		out += explanations(c)
	}
	return out
}
