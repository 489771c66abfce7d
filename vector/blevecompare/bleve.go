package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/camelcase"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/regexp"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/mnemo-dev/mnemo/vector"
)

// bleveSetup is one way of indexing memories with bleve: the analyzers of
// the fields, the scoring model and the index implementation.
type bleveSetup struct {
	name string
	// analyzer analyses the title, text and files fields.
	analyzer string
	// compounds adds a second field per property, analysed by
	// codeCompoundsAnalyzer, that keeps whole identifiers and paths.
	compounds bool
	// scoring is bleveindex.BM25Scoring or bleveindex.TFIDFScoring.
	scoring string
	// upsidedown uses bleve.NewMemOnly (the upsidedown index over an
	// in-memory gtreap store) instead of an in-memory scorch index.
	upsidedown bool
	// oneField indexes a memory as one field, the title twice then the
	// text and the files, as Mnemo's index weighs them, instead of one
	// field per property.
	oneField bool
}

// The custom analysis components. Bleve's built-ins cannot emit a compound
// and its parts from one token (the camelCase filter replaces a token by
// its parts), so the code-aware setup indexes each property twice: once
// split into words, once with its compounds kept whole.
const (
	// codeAnalyzer: runs of letters and digits, split at camelCase and
	// letter–digit boundaries, lowercased, English stop words dropped,
	// Porter-stemmed. "src/auth/sessionStore.go" → src auth session store go.
	codeAnalyzer = "code"
	// codeCompoundsAnalyzer: only the tokens that are compounds (joined by
	// _ . / \ - : or in mixed case or mixing letters and digits), whole and
	// lowercased. "roundHalfEven", "retry_with_backoff", "E0425" and
	// "src/auth/sessionStore.go" are kept; plain words give nothing, so that
	// they are not counted twice.
	codeCompoundsAnalyzer = "code_compounds"
	// mnemoAnalyzer is Mnemo's own tokenizer (vector.EachTerm) as a bleve
	// tokenizer: the very terms the vector package indexes.
	mnemoAnalyzer = "mnemo"

	wordsTokenizer     = "code_words"
	compoundsTokenizer = "code_compound_tokens"
	mnemoTokenizerName = "mnemo"
)

// compoundPattern matches the tokens codeCompoundsAnalyzer keeps: runs
// joined by connectors, or single runs holding a case or digit boundary.
const compoundPattern = `[\p{L}\p{N}]+(?:[_./\\:-]+[\p{L}\p{N}]+)+` +
	`|[\p{L}\p{N}]*(?:\p{Ll}\p{Lu}|\p{L}\p{N}|\p{N}\p{L}|\p{Lu}\p{Lu}\p{Ll})[\p{L}\p{N}]*`

func init() {
	err := registry.RegisterTokenizer(mnemoTokenizerName, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return mnemoTokenizer{}, nil
	})
	if err != nil {
		panic(err)
	}
}

// mnemoTokenizer adapts Mnemo's tokenizer to bleve's Tokenizer interface.
type mnemoTokenizer struct{}

// Tokenize implements analysis.Tokenizer.
func (mnemoTokenizer) Tokenize(input []byte) analysis.TokenStream {
	var out analysis.TokenStream
	vector.EachTerm(string(input), func(term []byte, start, end int) {
		out = append(out, &analysis.Token{
			Term:     append([]byte(nil), term...),
			Start:    start,
			End:      end,
			Position: len(out) + 1,
			Type:     analysis.AlphaNumeric,
		})
	})
	return out
}

// properties are the searchable properties of a memory with their query
// boosts: title terms count double, as in Mnemo's index.
var properties = []struct {
	name  string
	boost float64
}{{"title", 2}, {"text", 1}, {"files", 1}}

// compoundsSuffix names the second field of a property in a setup with
// compounds.
const compoundsSuffix = "_compounds"

// oneFieldName is the field of a oneField setup.
const oneFieldName = "body"

// bleveDoc is what a memory becomes in bleve.
type bleveDoc struct {
	Project string `json:"project"`
	Title   string `json:"title,omitempty"`
	Text    string `json:"text,omitempty"`
	Files   string `json:"files,omitempty"`
	Body    string `json:"body,omitempty"`
}

func (b bleveSetup) doc(d *vector.Doc) bleveDoc {
	files := strings.Join(d.Files, "\n")
	if b.oneField {
		return bleveDoc{Project: d.Project, Body: d.Title + "\n" + d.Title + "\n" + d.Text + "\n" + files}
	}
	return bleveDoc{Project: d.Project, Title: d.Title, Text: d.Text, Files: files}
}

// mapping returns the index mapping of the setup. Fields are indexed only:
// nothing is stored, no term vectors, no doc values, no _all field, since
// Mnemo keeps the memories in Badger and needs only ranked ids.
func (b bleveSetup) mapping() (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = b.scoring
	im.IndexDynamic, im.StoreDynamic, im.DocValuesDynamic = false, false, false
	for name, cfg := range map[string]map[string]any{
		wordsTokenizer:     {"type": regexp.Name, "regexp": `[\p{L}\p{N}]+`},
		compoundsTokenizer: {"type": regexp.Name, "regexp": compoundPattern},
	} {
		if err := im.AddCustomTokenizer(name, cfg); err != nil {
			return nil, fmt.Errorf("bleve mapping: %w", err)
		}
	}
	for name, cfg := range map[string]map[string]any{
		codeAnalyzer: {"type": custom.Name, "tokenizer": wordsTokenizer,
			"token_filters": []any{camelcase.Name, lowercase.Name, en.StopName, porter.Name}},
		codeCompoundsAnalyzer: {"type": custom.Name, "tokenizer": compoundsTokenizer,
			"token_filters": []any{lowercase.Name}},
		mnemoAnalyzer: {"type": custom.Name, "tokenizer": mnemoTokenizerName},
	} {
		if err := im.AddCustomAnalyzer(name, cfg); err != nil {
			return nil, fmt.Errorf("bleve mapping: %w", err)
		}
	}
	field := func(name, analyzer string) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Name, f.Analyzer = name, analyzer
		f.Store, f.IncludeTermVectors, f.IncludeInAll, f.DocValues = false, false, false, false
		return f
	}
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("project", field("project", keyword.Name))
	if b.oneField {
		doc.AddFieldMappingsAt(oneFieldName, field(oneFieldName, b.analyzer))
	}
	for _, p := range properties {
		if b.oneField {
			break
		}
		fields := []*mapping.FieldMapping{field(p.name, b.analyzer)}
		if b.compounds {
			fields = append(fields, field(p.name+compoundsSuffix, codeCompoundsAnalyzer))
		}
		doc.AddFieldMappingsAt(p.name, fields...)
	}
	im.DefaultMapping = doc
	return im, nil
}

// openMemory returns an empty index in memory: scorch with no path (its
// segments stay in memory and are never merged), or upsidedown.
func (b bleveSetup) openMemory() (bleve.Index, error) {
	im, err := b.mapping()
	if err != nil {
		return nil, err
	}
	var idx bleve.Index
	if b.upsidedown {
		idx, err = bleve.NewMemOnly(im)
	} else {
		idx, err = bleve.NewUsing("", im, scorch.Name, scorch.Name, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("bleve open: %w", err)
	}
	return idx, nil
}

// create returns an empty scorch index in dir, which must not exist.
func (b bleveSetup) create(dir string) (bleve.Index, error) {
	im, err := b.mapping()
	if err != nil {
		return nil, err
	}
	idx, err := bleve.New(dir, im)
	if err != nil {
		return nil, fmt.Errorf("bleve create: %w", err)
	}
	return idx, nil
}

// indexDocs adds docs to idx in batches of batchSize (all in one when 0).
func (b bleveSetup) indexDocs(idx bleve.Index, docs []vector.Doc, batchSize int) error {
	if batchSize <= 0 {
		batchSize = len(docs)
	}
	for len(docs) > 0 {
		n := min(batchSize, len(docs))
		batch := idx.NewBatch()
		for i := range docs[:n] {
			if err := batch.Index(strconv.FormatUint(docs[i].ID, 10), b.doc(&docs[i])); err != nil {
				return fmt.Errorf("bleve index: %w", err)
			}
		}
		if err := idx.Batch(batch); err != nil {
			return fmt.Errorf("bleve index: %w", err)
		}
		docs = docs[n:]
	}
	return nil
}

// query is the bleve query for a search: a disjunction of one match query
// (OR of the analysed terms) per field, title fields boosted, filtered to
// the project when one is given. The filter does not score.
func (b bleveSetup) query(text, project string) query.Query {
	var fields []query.Query
	if b.oneField {
		m := bleve.NewMatchQuery(text)
		m.SetField(oneFieldName)
		fields = append(fields, m)
	}
	for _, p := range properties {
		if b.oneField {
			break
		}
		names := []string{p.name}
		if b.compounds {
			names = append(names, p.name+compoundsSuffix)
		}
		for _, name := range names {
			m := bleve.NewMatchQuery(text)
			m.SetField(name)
			m.SetBoost(p.boost)
			fields = append(fields, m)
		}
	}
	var q query.Query = bleve.NewDisjunctionQuery(fields...)
	if project != "" {
		f := bleve.NewTermQuery(project)
		f.SetField("project")
		bq := bleve.NewBooleanQuery()
		bq.AddMust(q)
		bq.AddFilter(f)
		q = bq
	}
	return q
}

// search returns the ids of the best limit documents for text.
func (b bleveSetup) search(idx bleve.Index, text, project string, limit int) ([]uint64, error) {
	req := bleve.NewSearchRequestOptions(b.query(text, project), limit, 0, false)
	res, err := idx.Search(req)
	if err != nil {
		return nil, fmt.Errorf("bleve search: %w", err)
	}
	ids := make([]uint64, 0, len(res.Hits))
	for _, h := range res.Hits {
		id, err := strconv.ParseUint(h.ID, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bleve search: hit id %q: %w", h.ID, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// The setups compared. The quality table has them all; speed and size are
// measured for speedSetups.
var (
	setupStandard = bleveSetup{name: "bleve standard", analyzer: standard.Name, scoring: bleveindex.BM25Scoring}
	setupEnglish  = bleveSetup{name: "bleve en", analyzer: en.AnalyzerName, scoring: bleveindex.BM25Scoring}
	setupCode     = bleveSetup{name: "bleve code", analyzer: codeAnalyzer, compounds: true, scoring: bleveindex.BM25Scoring}
	setupMnemo    = bleveSetup{name: "bleve mnemo-tok", analyzer: mnemoAnalyzer, scoring: bleveindex.BM25Scoring}
	// setupMnemoOneField gives bleve the very terms and weights of Mnemo's
	// index, so that only the engines differ.
	setupMnemoOneField = bleveSetup{name: "bleve mnemo-tok one field", analyzer: mnemoAnalyzer, scoring: bleveindex.BM25Scoring, oneField: true}

	qualitySetups = []bleveSetup{
		setupStandard,
		{name: "bleve standard tf-idf", analyzer: standard.Name, scoring: bleveindex.TFIDFScoring},
		{name: "bleve standard NewMemOnly", analyzer: standard.Name, scoring: bleveindex.BM25Scoring, upsidedown: true},
		setupEnglish,
		setupCode,
		{name: "bleve code tf-idf", analyzer: codeAnalyzer, compounds: true, scoring: bleveindex.TFIDFScoring},
		setupMnemo,
		setupMnemoOneField,
	}
	speedSetups = []bleveSetup{setupStandard, setupCode}
)
