// Package local is Mnemo's default memory agent: a deterministic
// compressor that turns tool events into observations and turns into
// summaries, offline, in microseconds per event.
package local

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mnemo-dev/mnemo/memory"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Agent is the default memory agent: a deterministic compressor that
// works offline in microseconds per event. It reads the event itself (the
// tool, its input and its response) and the turn so far, the way a person
// taking notes would:
//
//   - an edit that follows a failing test or command of the same turn is a
//     bugfix ("Fixed roundCents in billing/rounding.go: math.Round →
//     math.RoundToEven"), and the run that passes afterwards says what it
//     confirms;
//   - a new file is a feature, a rename or a move a refactor, reads and
//     searches a discovery, a security-relevant edit a security note;
//   - a choice stated in the prompt ("use X instead of Y", "we decided",
//     "let's go with") becomes a decision observation of its own, once per
//     turn;
//   - facts carry commands and exit codes, the most telling error line,
//     failing test names and the symbols an edit touched; concepts are
//     topic words from files, symbols and tests.
//
// A Stop event becomes a summary of the turn: what was investigated,
// learned and completed, the next steps (a failing run never followed by a
// pass), and the files read and modified.
type Agent struct{}

// Name implements memory.Agent.
func (Agent) Name() string { return "local" }

// Run implements memory.Agent. The local agent accepts any memory session id: it
// continues ResumeID or adopts NewID.
func (Agent) Run(ctx context.Context, in memory.AgentInput) (memory.AgentOutput, error) {
	if err := ctx.Err(); err != nil {
		return memory.AgentOutput{}, err
	}
	out := memory.AgentOutput{MemorySessionID: in.ResumeID}
	if out.MemorySessionID == "" {
		out.MemorySessionID = in.NewID
	}
	turn := slices.Clip(in.Turn) // appending never writes into the caller's array
	add := func(o memory.Observation) {
		out.Observations = append(out.Observations, o)
		turn = append(turn, o)
	}
	for _, ev := range in.Events {
		if d, ok := decisionNote(in.Request, turn); ok {
			add(d)
		}
		switch ev.Kind {
		case memory.EventTool:
			if o, ok := observe(ev, in.Request, turn); ok {
				add(o)
			}
		case memory.EventStop:
			if s, ok := summarize(ev, in.Request, turn); ok {
				out.Summary = &s
			}
		}
	}
	return out, nil
}

// Limits that keep every observation short and every event fast.
const (
	maxTitle    = 120
	maxSubtitle = 160
	maxFact     = 200
	maxFacts    = 10
	maxConcepts = 8
	maxScan     = 32 << 10 // bytes of tool output or file content scanned
)

// ---------------------------------------------------------------------------
// Decoding the event

// toolInput is the union of the tool input fields the compressor reads
// (Claude Code's shapes and the editor's).
type toolInput struct {
	FilePath     string     `json:"file_path"`
	NotebookPath string     `json:"notebook_path"`
	Path         string     `json:"path"`
	Pattern      string     `json:"pattern"`
	Glob         string     `json:"glob"`
	Command      string     `json:"command"`
	Description  string     `json:"description"`
	Content      string     `json:"content"`
	OldString    string     `json:"old_string"`
	NewString    string     `json:"new_string"`
	ReplaceAll   bool       `json:"replace_all"`
	NewSource    string     `json:"new_source"`
	URL          string     `json:"url"`
	Query        string     `json:"query"`
	Prompt       string     `json:"prompt"`
	SubagentType string     `json:"subagent_type"`
	Edits        []editPair `json:"edits"`
}

type editPair struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// toolOutput is the union of the tool response fields the compressor reads.
type toolOutput struct {
	Type            string          `json:"type"` // Write: create | update
	FilePath        string          `json:"filePath"`
	Content         json.RawMessage `json:"content"` // Write's text, Grep's lines, an agent's blocks
	OriginalFile    *string         `json:"originalFile"`
	StructuredPatch []struct {
		Lines []string `json:"lines"`
	} `json:"structuredPatch"`
	Stdout      string   `json:"stdout"`
	Stderr      string   `json:"stderr"`
	Interrupted bool     `json:"interrupted"`
	Error       string   `json:"error"`
	IsError     bool     `json:"isError"`
	ExitCode    *int     `json:"exitCode"`
	Mode        string   `json:"mode"`
	Filenames   []string `json:"filenames"`
	NumFiles    int      `json:"numFiles"`
	NumLines    int      `json:"numLines"`
	NumMatches  int      `json:"numMatches"`
	Status      string   `json:"status"`
	Code        int      `json:"code"`
	Result      string   `json:"result"`
	File        struct {
		FilePath   string `json:"filePath"`
		Content    string `json:"content"`
		NumLines   int    `json:"numLines"`
		StartLine  int    `json:"startLine"`
		TotalLines int    `json:"totalLines"`
	} `json:"file"`
}

// toolEvent is a decoded tool event.
type toolEvent struct {
	memory.Event
	in      toolInput
	out     toolOutput
	outText string // a response that is plain text
	content string // out.Content as text
}

var (
	rawFilePathRE = regexp.MustCompile(`"(?:file_path|notebook_path)"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	rawCommandRE  = regexp.MustCompile(`"command"\s*:\s*"((?:[^"\\]|\\.)*)"`)
)

func decodeTool(ev memory.Event) *toolEvent {
	t := &toolEvent{Event: ev}
	if raw := jsonString(ev.ToolInput); raw != "" {
		// An oversized input was stored as a clipped string: recover the
		// fields that matter from its text.
		if m := rawFilePathRE.FindStringSubmatch(raw); m != nil {
			t.in.FilePath, _ = strconv.Unquote(`"` + m[1] + `"`)
		}
		if m := rawCommandRE.FindStringSubmatch(raw); m != nil {
			t.in.Command, _ = strconv.Unquote(`"` + m[1] + `"`)
		}
	} else {
		_ = json.Unmarshal(ev.ToolInput, &t.in) // a type mismatch leaves the other fields decoded
	}
	switch firstByte(ev.ToolResponse) {
	case '"':
		t.outText = jsonString(ev.ToolResponse)
	case '[':
		t.outText = blocksText(ev.ToolResponse)
	case '{':
		_ = json.Unmarshal(ev.ToolResponse, &t.out)
		switch firstByte(t.out.Content) {
		case '"':
			t.content = jsonString(t.out.Content)
		case '[':
			t.content = blocksText(t.out.Content)
		}
	}
	return t
}

func firstByte(raw []byte) byte {
	for _, b := range raw {
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			return b
		}
	}
	return 0
}

func jsonString(raw []byte) string {
	if firstByte(raw) != '"' {
		return ""
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// blocksText joins the text of content blocks ([{"type":"text","text":…}]).
func blocksText(raw []byte) string {
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Text != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

func (t *toolEvent) rel(p string) string { return memory.RelPath(t.Cwd, p) }

// output is everything a command printed, the failure text first.
func (t *toolEvent) output() string {
	parts := make([]string, 0, 4)
	for _, s := range []string{t.out.Error, t.out.Stderr, t.out.Stdout, t.outText} {
		if strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// ---------------------------------------------------------------------------
// Observations

// draft collects an observation's parts before they are trimmed into shape.
type draft struct {
	memory.Observation
	tags    []string // concept words that come first: language, testing, security…
	symbols []string // identifiers whose words become concepts
}

func (n *draft) fact(format string, args ...any) {
	s := format
	if len(args) > 0 {
		s = fmt.Sprintf(format, args...)
	}
	if s = strings.TrimSpace(s); s != "" {
		n.Facts = append(n.Facts, clip(oneLine(s), maxFact))
	}
}

func observe(ev memory.Event, request string, turn []memory.Observation) (memory.Observation, bool) {
	t := decodeTool(ev)
	n := &draft{Observation: memory.Observation{Tool: ev.ToolName, Request: request}}
	var ok bool
	switch name := ev.ToolName; name {
	case "Read", "Open", "NotebookRead", "read_file", "view":
		ok = observeRead(n, t)
	case "Grep", "Glob", "Search", "LS", "search", "grep_search", "file_search", "list_dir":
		ok = observeSearch(n, t)
	case "Write", "Edit", "MultiEdit", "NotebookEdit", "Save", "write_file", "edit_file", "str_replace":
		ok = observeEdit(n, t, request, turn)
	case "Bash", "run_terminal_cmd", "shell":
		ok = observeCommand(n, t, request, turn)
	case "WebFetch", "WebSearch", "web_search", "fetch":
		ok = observeWeb(n, t)
	case "Task", "Agent":
		ok = observeAgent(n, t)
	default:
		ok = observeOther(n, t)
	}
	if !ok {
		return memory.Observation{}, false
	}
	o := n.Observation
	o.Title = clip(oneLine(o.Title), maxTitle)
	o.Subtitle = clip(oneLine(o.Subtitle), maxSubtitle)
	o.Narrative = clip(o.Narrative, 600)
	o.Facts = dedupe(o.Facts, maxFacts)
	var words []string
	words = append(words, Concepts(o.Files()...)...)
	for _, s := range n.symbols {
		words = append(words, identWords(s)...)
	}
	words = slices.DeleteFunc(words, func(c string) bool { return noiseDirs[c] })
	o.Concepts = dedupe(append(slices.Clone(n.tags), words...), maxConcepts)
	o.Evidence = evidence(t)
	o.ToolUseID = ev.ToolUseID
	return o, true
}

func observeRead(n *draft, t *toolEvent) bool {
	file := t.rel(firstNonEmpty(t.in.FilePath, t.in.NotebookPath, t.out.File.FilePath, t.out.FilePath, t.in.Path))
	if file == "" {
		return false
	}
	n.Type = memory.TypeDiscovery
	n.FilesRead = []string{file}
	n.Title = "Read " + file
	if t.ToolName == "Open" {
		n.Title = "Opened " + file
	}
	n.tags = fileTags(file)
	f := t.out.File
	content := firstNonEmpty(f.Content, t.content, t.outText)
	size := ""
	switch {
	case f.TotalLines > 0 && f.NumLines > 0 && f.NumLines < f.TotalLines && f.StartLine > 0:
		size = fmt.Sprintf("lines %d–%d of %d", f.StartLine, f.StartLine+f.NumLines-1, f.TotalLines)
	case f.TotalLines > 0:
		size = countOf(f.TotalLines, "line")
	}
	if size != "" {
		n.fact("%s: %s", file, size)
	}
	if isCode(file) {
		ds := declsOf(content, 24)
		names := declNames(ds)
		n.symbols = names
		if len(names) > 0 {
			n.Subtitle = "declares " + nameList(names, 6)
			n.fact("declares: %s", nameList(names, 8))
		}
		docs := docFacts(ds, 3)
		for _, d := range docs {
			n.fact("doc: %s", d)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Read %s", file)
		if size != "" {
			fmt.Fprintf(&b, " (%s)", size)
		}
		if len(names) > 0 {
			fmt.Fprintf(&b, ", which declares %s", nameList(names, 4))
		}
		b.WriteString(".")
		if len(docs) > 0 {
			b.WriteString(" " + asSentence(docs[0]))
		}
		if size != "" || len(names) > 0 {
			n.Narrative = b.String()
		}
	} else if line := firstMeaningfulLine(content); line != "" {
		n.Subtitle = line
	}
	if n.Subtitle == "" && size != "" {
		n.Subtitle = size
	}
	return true
}

func observeSearch(n *draft, t *toolEvent) bool {
	n.Type = memory.TypeDiscovery
	pattern := unescapeRegexp(firstNonEmpty(t.in.Pattern, t.in.Query))
	where := ""
	if p := t.rel(t.in.Path); p != "" && p != "." {
		where = " in " + p
	}
	if t.in.Glob != "" {
		where += " (" + t.in.Glob + ")"
	}
	n.symbols = identifiersIn(pattern, 3)
	var files []string
	for _, f := range t.out.Filenames {
		files = append(files, t.rel(f))
	}
	if len(files) == 0 && t.content != "" {
		files = filesInGrepLines(t, t.content, 20)
	}
	count := max(t.out.NumFiles, len(files))
	switch t.ToolName {
	case "Glob", "file_search":
		n.Title = "Listed files matching " + inQuotes(pattern) + where
		if count == 0 {
			n.Title = "No files match " + inQuotes(pattern) + where
		}
		if count > 0 {
			n.fact("%s: %s", countOf(count, "file"), listMore(files, 5, count))
			n.Subtitle = countOf(count, "file")
		}
		return true
	case "LS", "list_dir":
		n.Title = "Listed " + firstNonEmpty(t.rel(t.in.Path), "the folder")
		return true
	}
	if pattern == "" {
		return false
	}
	if count == 0 && t.out.NumLines == 0 && t.out.NumMatches == 0 && t.content == "" && t.outText == "" {
		n.Title = "No matches for " + inQuotes(pattern) + where
		n.fact("no file matches %s%s", inQuotes(pattern), where)
		return true
	}
	n.Title = "Searched for " + inQuotes(pattern) + where
	n.FilesRead = firstN(files, 8)
	switch {
	case count > 0:
		n.fact("%s match %s: %s", countOf(count, "file"), inQuotes(pattern), listMore(files, 5, count))
		n.Subtitle = fmt.Sprintf("%s match: %s", countOf(count, "file"), listMore(files, 3, count))
	case t.out.NumMatches > 0:
		n.fact("%s", countOf(t.out.NumMatches, "match"))
	case t.out.NumLines > 0:
		n.fact("%s", countOf(t.out.NumLines, "matching line"))
	}
	return true
}

// unescapeRegexp drops the backslashes of escaped punctuation, so that
// "func \(c \*Cart\) Last" reads "func (c *Cart) Last".
func unescapeRegexp(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) && !isIdentByte(p[i+1]) && p[i+1] != ' ' {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// filesInGrepLines reads the file names of grep's "path:line:text" output.
func filesInGrepLines(t *toolEvent, text string, n int) []string {
	var out []string
	seen := map[string]bool{}
	for line := range strings.Lines(headTail(text)) {
		i := strings.IndexByte(line, ':')
		if i <= 0 {
			continue
		}
		f := line[:i]
		if strings.ContainsAny(f, " \t") || !strings.Contains(path.Base(f), ".") {
			continue
		}
		f = t.rel(f)
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

func observeWeb(n *draft, t *toolEvent) bool {
	n.Type = memory.TypeDiscovery
	switch {
	case t.in.URL != "":
		n.Title = "Fetched " + t.in.URL
		if t.out.Code != 0 {
			n.fact("HTTP %d", t.out.Code)
		}
		if t.in.Prompt != "" {
			n.fact("looked for: %s", t.in.Prompt)
		}
		n.Subtitle = firstMeaningfulLine(firstNonEmpty(t.out.Result, t.content, t.outText))
	case t.in.Query != "":
		n.Title = "Searched the web for " + inQuotes(t.in.Query)
		n.Subtitle = firstMeaningfulLine(firstNonEmpty(t.content, t.outText))
	default:
		return false
	}
	return true
}

func observeAgent(n *draft, t *toolEvent) bool {
	n.Type = memory.TypeDiscovery
	what := firstNonEmpty(t.in.Description, firstLine(t.in.Prompt))
	if what == "" {
		return false
	}
	n.Title = "Delegated to a subagent: " + what
	if t.in.SubagentType != "" {
		n.fact("subagent: %s", t.in.SubagentType)
	}
	if t.out.Status != "" {
		n.fact("status: %s", strings.ReplaceAll(t.out.Status, "_", " "))
	}
	n.Narrative = clip(t.in.Prompt, 300)
	n.Subtitle = firstMeaningfulLine(firstNonEmpty(t.content, t.outText, t.out.Result))
	return true
}

func observeOther(n *draft, t *toolEvent) bool {
	name := t.ToolName
	if name == "" {
		return false
	}
	n.Type = memory.TypeChange
	label := name
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		server, tool, _ := strings.Cut(rest, "__")
		label = strings.ReplaceAll(firstNonEmpty(tool, server), "_", " ") + " (" + server + ")"
	}
	lower := strings.ToLower(name)
	for _, w := range []string{"get", "list", "read", "search", "fetch", "find", "query", "view", "show", "lookup"} {
		if strings.Contains(lower, w) {
			n.Type = memory.TypeDiscovery
			break
		}
	}
	n.Title = "Called " + label
	if file := t.rel(firstNonEmpty(t.in.FilePath, t.in.Path)); file != "" {
		n.Title += " on " + file
		n.FilesRead = []string{file}
	}
	if t.out.IsError || t.out.Error != "" {
		n.Type = memory.TypeDiscovery
		n.fact("error: %s", errorLine(t.output()))
	}
	n.Subtitle = firstMeaningfulLine(firstNonEmpty(t.content, t.outText, t.out.Result))
	return true
}

// ---------------------------------------------------------------------------
// Edits

// editInfo is what an edit event changed.
type editInfo struct {
	file     string
	pairs    []editPair
	content  string // Write's or NotebookEdit's whole new text
	original string // the file before the edit, when the response has it
	patch    []string
	created  bool // a new file
	rewrite  bool // Write over an existing file
}

func observeEdit(n *draft, t *toolEvent, request string, turn []memory.Observation) bool {
	file := t.rel(firstNonEmpty(t.in.FilePath, t.in.NotebookPath, t.out.FilePath, t.in.Path))
	if file == "" {
		return false
	}
	n.tags = fileTags(file)
	if t.out.IsError || t.out.Error != "" {
		n.Type = memory.TypeDiscovery
		n.FilesRead = []string{file}
		msg := errorLine(t.output())
		n.Title = "Could not edit " + file
		n.Subtitle = msg
		n.fact("error: %s", msg)
		return true
	}
	n.FilesModified = []string{file}
	e := editInfo{file: file, content: firstNonEmpty(t.in.Content, t.in.NewSource)}
	if t.in.OldString != "" || t.in.NewString != "" {
		e.pairs = append(e.pairs, editPair{t.in.OldString, t.in.NewString, t.in.ReplaceAll})
	}
	e.pairs = append(e.pairs, t.in.Edits...)
	if t.out.OriginalFile != nil {
		e.original = *t.out.OriginalFile
	}
	for _, h := range t.out.StructuredPatch {
		e.patch = append(e.patch, h.Lines...)
	}
	switch {
	case t.ToolName == "Save":
		e.created = !seenFile(turn, file)
	case t.out.Type == "create":
		e.created = true
	case t.out.Type == "update" || (t.ToolName == "Write" && len(e.pairs) == 0):
		e.rewrite = true
	}
	code := isCode(file)

	// What the edit touched: declarations it adds, removes or changes, or
	// the declaration it sits in.
	var added, removed, changed []string
	var newDecls []codeDecl
	if code {
		if len(e.pairs) > 0 {
			for _, p := range e.pairs {
				a, r, c := declDiff(declsOf(p.OldString, 12), declsOf(p.NewString, 12))
				added, removed, changed = append(added, a...), append(removed, r...), append(changed, c...)
				newDecls = append(newDecls, declsOf(p.NewString, 12)...)
			}
		} else {
			newDecls = declsOf(e.content, 24)
			if e.rewrite && e.original != "" {
				added, removed, changed = declDiff(declsOf(e.original, 48), newDecls)
			} else {
				added = declNames(newDecls)
			}
		}
	}
	added, removed, changed = dedupe(added, 8), dedupe(removed, 8), dedupe(changed, 8)
	var symbols []string
	symbols = append(symbols, changed...)
	symbols = append(symbols, added...)
	symbols = append(symbols, removed...)
	if code && len(symbols) == 0 && len(e.pairs) > 0 {
		if s := enclosingDecl(e.original, e.pairs[0].OldString, e.patch); s != "" {
			symbols = []string{s}
			changed = symbols
		}
	}
	n.symbols = symbols
	where := file
	if len(changed) > 0 {
		where = nameList(changed, 2) + " in " + file
	}
	delta, replacement := "", false
	if len(e.pairs) > 0 {
		delta, replacement = describeDelta(e.pairs[0].OldString, e.pairs[0].NewString)
	}
	var renameFrom, renameTo string
	if code {
		renameFrom, renameTo = renameOf(e.pairs)
	}
	security := securityTerms(file, e)
	if len(security) > 0 {
		n.tags = append(n.tags, "security")
	}
	if isTestFile(file) {
		n.tags = append(n.tags, "testing")
	}
	failure := lastFailure(turn)

	// Facts every edit carries.
	if len(symbols) > 0 {
		n.fact("symbols: %s", strings.Join(firstN(symbols, 8), ", "))
	}
	if e.original != "" && len(changed) > 0 {
		// What the changed code was documented to do.
		var docs []codeDecl
		for _, d := range declsOf(e.original, 64) {
			if slices.Contains(changed, d.name) {
				docs = append(docs, d)
			}
		}
		for _, d := range docFacts(docs, 2) {
			n.fact("doc: %s", d)
		}
	}
	if len(e.pairs) > 1 {
		n.fact("%s", countOf(len(e.pairs), "edit"))
	}
	if delta != "" {
		n.fact("change: %s", delta)
	}
	if e.created || e.rewrite {
		if lines := lineCount(e.content); lines > 0 {
			n.fact("%s: %s", file, countOf(lines, "line"))
		}
	}
	n.Subtitle = delta

	switch {
	case e.created:
		n.Type = memory.TypeFeature
		switch {
		case t.ToolName == "Save":
			n.Title = "Saved new file " + file
		case isTestFile(file) && len(testCases(e.content)) > 0:
			cases := testCases(e.content)
			n.Title = "Added " + countOf(len(cases), "test") + " in " + file
			for _, c := range firstN(cases, 5) {
				n.fact("test: %s", c)
			}
			n.Subtitle = listMore(cases, 2, len(cases))
		case isTestFile(file) && len(added) > 0:
			n.Title = "Added tests in " + file + ": " + nameList(added, 3)
		case len(added) > 0:
			n.Title = "Created " + file + " with " + nameList(added, 3)
		default:
			n.Title = "Created " + file
		}
		docs := docFacts(newDecls, 2)
		for _, d := range docs {
			n.fact("doc: %s", d)
		}
		switch {
		case len(docs) > 0:
			n.Subtitle = docs[0]
		case !code && n.Subtitle == "":
			n.Subtitle = firstMeaningfulLine(e.content)
		}
		if len(added) > 0 {
			n.Narrative = fmt.Sprintf("New file %s declaring %s.", file, nameList(added, 4))
			if len(docs) > 0 {
				n.Narrative += " " + asSentence(docs[0])
			}
		}
	case failure != nil:
		n.Type = memory.TypeBugfix
		cause := failure.cause()
		switch {
		case replacement && utf8.RuneCountInString(delta) <= 60:
			n.Title = "Fixed " + where + ": " + delta
		case cause != "":
			n.Title = "Fixed " + where + " after " + cause + " failed"
		default:
			n.Title = "Fixed " + where
		}
		if cause != "" {
			n.fact("fixes: %s", cause)
		}
		var b strings.Builder
		b.WriteString(cause)
		if b.Len() == 0 {
			b.WriteString(failure.command())
		}
		b.WriteString(" failed")
		if msg := failure.errorMessage(); msg != "" {
			fmt.Fprintf(&b, " (%s)", msg)
		}
		fmt.Fprintf(&b, "; changed %s", where)
		if delta != "" {
			fmt.Fprintf(&b, ": %s", delta)
		}
		b.WriteString(".")
		n.Narrative = b.String()
	case renameFrom != "":
		n.Type = memory.TypeRefactor
		n.Title = "Renamed " + renameFrom + " to " + renameTo + " in " + file
		n.symbols = append(n.symbols, renameFrom, renameTo)
		n.fact("renamed: %s → %s", renameFrom, renameTo)
		n.tags = append(n.tags, "rename")
	case !e.rewrite && hasPhrase(strings.ToLower(request), refactorPhrases):
		n.Type = memory.TypeRefactor
		n.Title = "Refactored " + where
		if replacement && utf8.RuneCountInString(delta) <= 60 {
			n.Title += ": " + delta
		}
	case !e.rewrite && hasPhrase(strings.ToLower(request), fixPhrases):
		n.Type = memory.TypeBugfix
		n.Title = "Fixed " + where
		if replacement && utf8.RuneCountInString(delta) <= 60 {
			n.Title += ": " + delta
		}
	case len(security) > 0:
		n.Type = memory.TypeSecurity
		n.Title = changeTitle(t.ToolName, file, where, delta, replacement, e, added, removed, changed)
		n.fact("security-relevant: %s", strings.Join(security, ", "))
		n.Narrative = fmt.Sprintf("A security-relevant change (%s) to %s", strings.Join(security, ", "), where)
		if delta != "" {
			n.Narrative += ": " + delta
		}
		n.Narrative = asSentence(n.Narrative)
	case len(added) > 0 && len(removed) == 0 && !e.rewrite:
		n.Type = memory.TypeFeature
		n.Title = "Added " + nameList(added, 3) + " to " + file
		if docs := docFacts(newDecls, 2); len(docs) > 0 {
			n.Subtitle = docs[0]
			for _, d := range docs {
				n.fact("doc: %s", d)
			}
		}
	default:
		n.Type = memory.TypeChange
		n.Title = changeTitle(t.ToolName, file, where, delta, replacement, e, added, removed, changed)
		if e.rewrite && len(added)+len(removed) > 0 {
			n.Subtitle = changeList(added, removed)
		}
	}
	return true
}

// changeTitle titles an edit that is neither a fix nor new work.
func changeTitle(tool, file, where, delta string, replacement bool, e editInfo, added, removed, changed []string) string {
	switch {
	case tool == "Save":
		return "Saved " + file
	case e.rewrite:
		return "Rewrote " + file
	case len(removed) > 0 && len(added) == 0 && len(changed) == 0:
		return "Removed " + nameList(removed, 3) + " from " + file
	case replacement && utf8.RuneCountInString(delta) <= 60:
		return "Changed " + where + ": " + delta
	}
	if len(e.pairs) > 0 && isCode(file) {
		if _, came := identDiff(e.pairs[0].OldString, e.pairs[0].NewString); len(came) > 0 {
			call := came[0]
			if i := strings.Index(e.pairs[0].NewString, call); i >= 0 && strings.HasPrefix(e.pairs[0].NewString[i+len(call):], "(") {
				call += "(…)"
			}
			return "Changed " + where + ": added " + call
		}
	}
	if len(changed) > 0 {
		return "Changed " + where
	}
	return "Edited " + file
}

// testCases reads the test names of a test file: Go's TestX and Python's
// test_x (as declarations), jest/vitest/mocha's it("…") and test("…").
func testCases(code string) []string {
	var out []string
	for _, d := range declsOf(code, 64) {
		if strings.HasPrefix(d.name, "Test") || strings.HasPrefix(d.name, "test_") {
			out = append(out, d.name)
		}
	}
	for line := range strings.Lines(headTail(code)) {
		t := strings.TrimSpace(line)
		for _, p := range []string{"it(", "test(", "it.only(", "test.only(", "it.each", "specify("} {
			if rest, ok := strings.CutPrefix(t, p); ok && len(rest) > 1 && strings.ContainsRune("\"'`", rune(rest[0])) {
				if end := strings.IndexByte(rest[1:], rest[0]); end > 0 {
					out = append(out, rest[1:1+end])
				}
			}
		}
	}
	return dedupe(out, 64)
}

// seenFile reports whether an observation of the turn names file.
func seenFile(turn []memory.Observation, file string) bool {
	for i := range turn {
		if slices.Contains(turn[i].FilesRead, file) || slices.Contains(turn[i].FilesModified, file) {
			return true
		}
	}
	return false
}

// describeDelta says what an edit replaced, as "old → new" on the changed
// tokens (or the whole short lines when the tokens alone would not read),
// or what it added or removed. replacement is false for pure insertions
// and deletions and for multi-line changes.
func describeDelta(old, new string) (delta string, replacement bool) {
	old, new = strings.TrimSpace(old), strings.TrimSpace(new)
	if old == new {
		return "", false
	}
	if old == "" {
		return "added " + inQuotes(firstMeaningfulLine(new)) + moreLines(new), false
	}
	if new == "" {
		return "removed " + inQuotes(firstMeaningfulLine(old)) + moreLines(old), false
	}
	// Narrow to the lines that differ, then to the tokens that differ.
	ol, nl := strings.Split(old, "\n"), strings.Split(new, "\n")
	for len(ol) > 0 && len(nl) > 0 && strings.TrimSpace(ol[0]) == strings.TrimSpace(nl[0]) {
		ol, nl = ol[1:], nl[1:]
	}
	for len(ol) > 0 && len(nl) > 0 && strings.TrimSpace(ol[len(ol)-1]) == strings.TrimSpace(nl[len(nl)-1]) {
		ol, nl = ol[:len(ol)-1], nl[:len(nl)-1]
	}
	switch {
	case len(ol) == 0 && len(nl) > 0:
		s := strings.Join(nl, "\n")
		return "added " + inQuotes(firstMeaningfulLine(s)) + moreLines(s), false
	case len(nl) == 0 && len(ol) > 0:
		s := strings.Join(ol, "\n")
		return "removed " + inQuotes(firstMeaningfulLine(s)) + moreLines(s), false
	case len(ol) == 1 && len(nl) == 1:
		lo, ln := squash(ol[0]), squash(nl[0])
		a, b := tokenDiff(lo, ln)
		switch {
		case a == "" && b != "" && len(b) <= 50:
			return "added " + inQuotes(b), false
		case b == "" && a != "" && len(a) <= 50:
			return "removed " + inQuotes(a), false
		case a != "" && b != "" && (len(lo) > 40 || len(ln) > 40 || wordStart(a) && wordStart(b)) && len(a) <= 50 && len(b) <= 50:
			return a + " → " + b, true
		case len(lo) <= 40 && len(ln) <= 40:
			return lo + " → " + ln, true
		}
	}
	delta = fmt.Sprintf("%s → %d", countOf(len(ol), "line"), len(nl))
	if line := addedLine(ol, nl); line != "" {
		delta += ", adding " + inQuotes(line)
	}
	return delta, false
}

// wordStart reports whether a fragment starts like a word, a number or a
// literal rather than with an operator.
func wordStart(s string) bool {
	return s != "" && (isIdentByte(s[0]) || s[0] == '"' || s[0] == '\'' || s[0] == '`')
}

// addedLine picks the most telling new line of a multi-line change: the
// first one that does not just rework an old line (same first word).
func addedLine(ol, nl []string) string {
	firstWord := func(l string) string { return leadingIdent(strings.TrimSpace(l)) }
	old := make(map[string]bool, len(ol))
	for _, l := range ol {
		old[strings.TrimSpace(l)] = true
		old["word:"+firstWord(l)] = true
	}
	for _, l := range nl {
		t := strings.TrimSpace(l)
		if len(t) < 4 || old[t] || old["word:"+firstWord(l)] || firstWord(l) == "" && !strings.ContainsAny(t, "(=") {
			continue
		}
		return squash(t)
	}
	return ""
}

func moreLines(s string) string {
	if n := lineCount(s); n > 1 {
		return fmt.Sprintf(" (+%d more lines)", n-1)
	}
	return ""
}

// tokenDiff cuts the common prefix and suffix of a and b, widened to whole
// identifiers (dotted names included), and returns what differs.
func tokenDiff(a, b string) (string, string) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	// Widen to token boundaries: a cut inside an identifier takes the whole
	// identifier, with its qualifiers ("math.Round"), on both sides.
	inA := func(i int) bool { return i >= p && i < len(a)-s && isIdentByte(a[i]) }
	inB := func(i int) bool { return i >= p && i < len(b)-s && isIdentByte(b[i]) }
	if p > 0 && isIdentByte(a[p-1]) && (inA(p) || inB(p)) {
		for p > 0 && isIdentByte(a[p-1]) {
			p--
		}
	}
	for p > 1 && a[p-1] == '.' && isIdentByte(a[p-2]) && (inA(p) || inB(p)) {
		p--
		for p > 0 && isIdentByte(a[p-1]) {
			p--
		}
	}
	if s > 0 && isIdentByte(a[len(a)-s]) && (inA(len(a)-s-1) || inB(len(b)-s-1)) {
		for s > 0 && isIdentByte(a[len(a)-s]) {
			s--
		}
	}
	return strings.TrimSpace(a[p : len(a)-s]), strings.TrimSpace(b[p : len(b)-s])
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// renameOf reports an edit that only renames one identifier: every pair
// replaces the same name with the same other name, and nothing else.
func renameOf(pairs []editPair) (from, to string) {
	for _, p := range pairs {
		gone, came := identDiff(p.OldString, p.NewString)
		if len(gone) != 1 || len(came) != 1 {
			return "", ""
		}
		a, b := gone[0], came[0]
		if i := strings.Index(p.OldString, a); i > 0 && strings.ContainsRune("\"'`", rune(p.OldString[i-1])) {
			return "", "" // a string's value, not a name
		}
		if replaceIdent(p.OldString, a, b) != p.NewString {
			return "", ""
		}
		if from != "" && (from != a || to != b) {
			return "", ""
		}
		from, to = a, b
	}
	return from, to
}

// identDiff returns the identifiers only in a and only in b.
func identDiff(a, b string) (gone, came []string) {
	ia, ib := identsOf(a), identsOf(b)
	for _, x := range ia {
		if !slices.Contains(ib, x) {
			gone = append(gone, x)
		}
	}
	for _, x := range ib {
		if !slices.Contains(ia, x) {
			came = append(came, x)
		}
	}
	return gone, came
}

// identsOf lists the distinct identifiers of a piece of code (up to 64).
func identsOf(s string) []string {
	var out []string
	for i := 0; i < len(s) && len(out) < 64; {
		if !isIdentByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isIdentByte(s[j]) {
			j++
		}
		if w := s[i:j]; !('0' <= w[0] && w[0] <= '9') && !slices.Contains(out, w) {
			out = append(out, w)
		}
		i = j
	}
	return out
}

func isIdent(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

// replaceIdent replaces whole-word occurrences of a in s with b.
func replaceIdent(s, a, b string) string {
	var out strings.Builder
	for {
		i := strings.Index(s, a)
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		end := i + len(a)
		whole := (i == 0 || !isIdentByte(s[i-1])) && (end == len(s) || !isIdentByte(s[end]))
		out.WriteString(s[:i])
		if whole {
			out.WriteString(b)
		} else {
			out.WriteString(a)
		}
		s = s[end:]
	}
}

// securityTerms names what makes an edit security-relevant: words of its
// path, or identifiers of its code.
func securityTerms(file string, e editInfo) []string {
	var out []string
	for _, w := range identWords(strings.ReplaceAll(file, "/", " ")) {
		if securityPathWords[w] {
			out = append(out, w)
		}
	}
	var code strings.Builder
	for _, p := range e.pairs {
		code.WriteString(p.OldString)
		code.WriteByte('\n')
		code.WriteString(p.NewString)
		code.WriteByte('\n')
	}
	code.WriteString(headTail(e.content))
	lower := strings.ToLower(code.String())
	for _, w := range securityCodeWords {
		if strings.Contains(lower, w[0]) {
			out = append(out, w[1])
		}
	}
	return dedupe(out, 4)
}

var securityPathWords = wordSet("auth", "authn", "authz", "authentication", "authorization", "login", "logout", "password", "passwords", "passwd", "token", "tokens", "jwt", "oauth", "oidc", "saml", "sso", "crypto", "secret", "secrets", "permission", "permissions", "acl", "rbac", "csrf", "cors", "tls", "ssl", "cert", "certs", "credential", "credentials", "sanitize", "xss", "vault")

// securityCodeWords are looked for in an edit's code, lower-cased, also
// inside identifiers (hashPassword).
// Each is what to look for and the word to report.
var securityCodeWords = [][2]string{
	{"password", "password"}, {"passwd", "password"}, {"secret", "secret"}, {"bcrypt", "bcrypt"}, {"scrypt", "scrypt"},
	{"argon2", "argon2"}, {"hmac", "hmac"}, {"jwt", "jwt"}, {"csrf", "csrf"}, {"xss", "xss"}, {"oauth", "oauth"},
	{"apikey", "api key"}, {"api_key", "api key"}, {"private_key", "private key"}, {"privatekey", "private key"},
	{"encrypt", "encryption"}, {"decrypt", "encryption"}, {"cipher", "encryption"}, {"permission", "permissions"},
	{"authoriz", "authorization"}, {"authenticat", "authentication"}, {"sanitiz", "sanitizing"}, {"chmod", "permissions"},
	{"setuid", "permissions"}, {"credential", "credentials"},
}

// ---------------------------------------------------------------------------
// Commands

type cmdKind int

const (
	kindSetup   cmdKind = iota // cd, export, source: never the point
	kindOther                  // anything else
	kindLook                   // ls, cat, git log: reading
	kindRun                    // running the program
	kindWrite                  // a file written from the shell
	kindRemove                 // rm, git rm
	kindCommit                 // git commit
	kindInstall                // adding dependencies
	kindBuild                  // build, vet, lint, type check
	kindTest                   // a test run
	kindMove                   // mv, git mv
)

// shellCommand is one segment of a shell command line, words unquoted.
type shellCommand struct {
	words  []string // without env assignments and wrappers (sudo, time…)
	kind   cmdKind
	args   []string // the words after the command (and subcommand)
	target string   // a file stdout is redirected to
}

func (c shellCommand) String() string {
	var b strings.Builder
	for i, w := range c.words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if strings.ContainsAny(w, " \t\n") || w == "" {
			w = inQuotes(oneLine(w))
		}
		b.WriteString(w)
	}
	return clip(b.String(), 80)
}

// primaryCommand is the segment of a command line that says what it does:
// a move, a test run, a build… before echo and cd.
func primaryCommand(line string) shellCommand {
	segs := parseShell(line)
	best := shellCommand{kind: -1}
	for _, c := range segs {
		if c.kind > best.kind {
			best = c
		}
	}
	return best
}

// parseShell splits a command line into its commands at ; && || | & and
// newlines outside quotes, unquotes words, drops redirections (keeping a
// stdout target) and heredoc bodies.
func parseShell(line string) []shellCommand {
	var (
		segs    []shellCommand
		words   []string
		cur     = make([]byte, 0, 64)
		inWord  bool
		quote   byte
		heredoc string
	)
	flushWord := func() {
		if inWord {
			words = append(words, string(cur))
			cur = cur[:0]
			inWord = false
		}
	}
	flushSeg := func() {
		flushWord()
		if len(words) > 0 {
			segs = append(segs, newCommand(words))
			words = nil
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		if quote != 0 {
			switch {
			case c == quote:
				quote = 0
			case c == '\\' && quote == '"' && i+1 < len(line):
				i++
				cur = append(cur, line[i])
			default:
				cur = append(cur, c)
			}
			continue
		}
		switch {
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(line):
			i++
			if line[i] != '\n' {
				cur = append(cur, line[i])
				inWord = true
			}
		case c == ' ' || c == '\t':
			flushWord()
		case c == '<' && strings.HasPrefix(line[i:], "<<") && !strings.HasPrefix(line[i:], "<<<"):
			// A heredoc: its body is data, not commands.
			j := i + 2
			if j < len(line) && line[j] == '-' {
				j++
			}
			for j < len(line) && line[j] == ' ' {
				j++
			}
			k := j
			for k < len(line) && line[k] != '\n' && line[k] != ' ' && line[k] != ';' {
				k++
			}
			heredoc = strings.Trim(line[j:k], `'"`)
			i = k - 1
			flushWord()
		case c == '\n' || c == ';':
			flushSeg()
			if c == '\n' && heredoc != "" {
				// Skip the body, up to the line that is the delimiter.
				rest, pos := line[i+1:], 0
				for {
					j := strings.IndexByte(rest[pos:], '\n')
					l := rest[pos:]
					if j >= 0 {
						l = rest[pos : pos+j]
					}
					if strings.TrimSpace(l) == heredoc {
						i += pos + len(l) // the loop steps onto the newline after it
						break
					}
					if j < 0 {
						i = len(line)
						break
					}
					pos += j + 1
				}
				heredoc = ""
			}
		case c == '|':
			flushSeg()
			if i+1 < len(line) && line[i+1] == '|' {
				i++
			}
		case c == '&':
			switch {
			case i+1 < len(line) && line[i+1] == '&':
				flushSeg()
				i++
			case inWord && len(cur) > 0 && cur[len(cur)-1] == '>', i+1 < len(line) && line[i+1] == '>':
				cur = append(cur, c)
				inWord = true
			default:
				flushSeg()
			}
		default:
			cur = append(cur, c)
			inWord = true
		}
	}
	flushSeg()
	return segs
}

var redirectRE = regexp.MustCompile(`^(\d*|&)(>>?|<)(&\d+)?(.*)$`)

func newCommand(raw []string) shellCommand {
	var c shellCommand
	for i := 0; i < len(raw); i++ {
		w := raw[i]
		if w == "" || !strings.ContainsRune("0123456789&<>", rune(w[0])) {
			c.words = append(c.words, w)
			continue
		}
		if m := redirectRE.FindStringSubmatch(w); m != nil {
			target := m[4]
			if target == "" && m[3] == "" && i+1 < len(raw) {
				i++
				target = raw[i]
			}
			if m[2] != "<" && (m[1] == "" || m[1] == "1" || m[1] == "&") && target != "" && target != "/dev/null" && m[3] == "" {
				c.target = target
			}
			continue
		}
		c.words = append(c.words, w)
	}
	// Env assignments and wrappers.
	for len(c.words) > 1 {
		w := c.words[0]
		if i := strings.IndexByte(w, '='); i > 0 && isIdent(w[:i]) {
			c.words = c.words[1:]
			continue
		}
		if commandWrappers[w] {
			c.words = c.words[1:]
			continue
		}
		break
	}
	c.kind, c.args = classifyCommand(c.words, c.target)
	return c
}

var commandWrappers = wordSet("sudo", "time", "env", "nohup", "exec", "command", "npx", "bunx", "uv", "poetry", "pipenv", "bundle")

var lookCommands = wordSet("ls", "cat", "head", "tail", "less", "more", "bat", "grep", "rg", "ag", "ack", "find", "fd", "tree", "wc", "pwd", "which", "file", "stat", "du", "df", "diff", "sed", "awk", "jq", "ps", "lsof", "curl", "wget")

func classifyCommand(w []string, target string) (cmdKind, []string) {
	if len(w) == 0 {
		return kindSetup, nil
	}
	name := path.Base(w[0])
	sub := ""
	if len(w) > 1 {
		sub = w[1]
	}
	rest := func(n int) []string {
		if len(w) > n {
			return w[n:]
		}
		return nil
	}
	switch name {
	case "cd", "export", "source", ".", "set", "unset", "alias", "true", "sleep", "clear":
		return kindSetup, nil
	case "go":
		switch sub {
		case "test":
			return kindTest, rest(2)
		case "build", "vet", "generate":
			return kindBuild, rest(2)
		case "run":
			return kindRun, rest(2)
		case "get":
			return kindInstall, rest(2)
		case "install":
			if len(w) > 2 {
				return kindInstall, rest(2)
			}
			return kindBuild, nil
		}
	case "cargo":
		switch sub {
		case "test", "nextest":
			return kindTest, rest(2)
		case "build", "check", "clippy", "fmt":
			return kindBuild, rest(2)
		case "run":
			return kindRun, rest(2)
		case "add":
			return kindInstall, rest(2)
		}
	case "npm", "pnpm", "yarn", "bun":
		script := sub
		if sub == "run" || sub == "run-script" {
			script = ""
			if len(w) > 2 {
				script = w[2]
			}
		}
		switch {
		case sub == "test" || sub == "t" || strings.Contains(script, "test") || script == "e2e":
			return kindTest, rest(2)
		case sub == "install" || sub == "i" || sub == "add" || sub == "ci":
			return kindInstall, rest(2)
		case strings.Contains(script, "build") || strings.Contains(script, "lint") || strings.Contains(script, "typecheck") || strings.Contains(script, "check") || strings.Contains(script, "tsc"):
			return kindBuild, rest(2)
		case sub == "start" || sub == "run" || sub == "exec" || sub == "dev":
			return kindRun, rest(2)
		}
	case "pytest", "py.test", "jest", "vitest", "mocha", "ava", "tap", "rspec", "phpunit", "ctest", "tox", "nox", "playwright", "cypress", "karma", "bats":
		return kindTest, rest(1)
	case "tsc", "eslint", "ruff", "mypy", "pyright", "golangci-lint", "staticcheck", "flake8", "pylint", "prettier", "gofmt", "black", "rubocop", "shellcheck", "biome", "clippy-driver", "javac", "gcc", "g++", "clang", "cmake", "ninja":
		return kindBuild, rest(1)
	case "make", "just", "task":
		switch {
		case strings.Contains(sub, "test"):
			return kindTest, rest(2)
		case sub == "run" || sub == "dev" || sub == "serve" || sub == "start":
			return kindRun, rest(2)
		}
		return kindBuild, rest(1)
	case "mvn", "gradle", "gradlew", "./gradlew", "dotnet", "swift", "mix", "sbt", "lein", "deno", "bazel":
		switch {
		case strings.Contains(sub, "test"):
			return kindTest, rest(2)
		case sub == "run":
			return kindRun, rest(2)
		case sub == "add":
			return kindInstall, rest(2)
		}
		return kindBuild, rest(1)
	case "python", "python3", "node", "ruby", "php", "perl", "java", "ts-node", "tsx":
		if sub == "-m" && len(w) > 2 {
			switch w[2] {
			case "pytest", "unittest", "nose2", "tox":
				return kindTest, rest(3)
			case "pip":
				if len(w) > 3 && w[3] == "install" {
					return kindInstall, rest(4)
				}
			case "mypy", "ruff", "black", "flake8", "pylint", "compileall":
				return kindBuild, rest(3)
			}
		}
		return kindRun, rest(1)
	case "pip", "pip3", "gem", "composer", "apt-get", "apt", "brew":
		if sub == "install" || sub == "add" || sub == "require" {
			return kindInstall, rest(2)
		}
	case "git":
		switch sub {
		case "mv":
			return kindMove, rest(2)
		case "rm":
			return kindRemove, rest(2)
		case "commit":
			return kindCommit, rest(2)
		case "log", "diff", "show", "blame", "status", "grep", "ls-files":
			return kindLook, rest(2)
		}
	case "mv":
		return kindMove, rest(1)
	case "rm", "rmdir", "unlink":
		return kindRemove, rest(1)
	case "tee", "touch", "cp", "mkdir", "chmod", "ln":
		return kindOther, rest(1)
	}
	if (name == "cat" || name == "echo" || name == "printf") && target != "" {
		return kindWrite, rest(1)
	}
	if name == "sed" && slices.ContainsFunc(w, func(s string) bool { return strings.HasPrefix(s, "-i") }) {
		return kindWrite, rest(1)
	}
	if lookCommands[name] {
		return kindLook, rest(1)
	}
	if strings.HasPrefix(w[0], "./") || strings.HasPrefix(w[0], "bin/") {
		if strings.Contains(name, "test") {
			return kindTest, rest(1)
		}
		return kindRun, rest(1)
	}
	return kindOther, rest(1)
}

// operands returns the non-flag arguments.
func operands(args []string) []string {
	var out []string
	for _, a := range args {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		out = append(out, a)
	}
	return out
}

func observeCommand(n *draft, t *toolEvent, request string, turn []memory.Observation) bool {
	line := strings.TrimSpace(t.in.Command)
	if line == "" {
		return false
	}
	c := primaryCommand(line)
	core := c.String()
	if core == "" || c.kind <= kindLook {
		// Nothing specific: the command line as typed says most.
		core = clip(firstLine(line), 80)
	}
	out := t.output()
	code, failed := exitStatus(t.out)
	interrupted := t.out.Interrupted || strings.Contains(t.out.Error, "interrupted by user")
	n.fact("$ %s", firstLine(line)+ellipsisIf(strings.Contains(line, "\n")))
	if interrupted {
		n.fact("interrupted by the user")
	} else {
		n.fact("exit code %d", code)
	}
	n.tags = commandTags(c)
	if c.kind == kindTest || c.kind == kindBuild {
		for _, op := range operands(c.args) {
			switch {
			case strings.HasPrefix(op, "Test") || strings.HasPrefix(op, "test_"):
				n.symbols = append(n.symbols, op)
			case strings.ContainsAny(op, "/."):
				n.tags = append(n.tags, Concepts(strings.TrimRight(t.rel(op), "./"))...)
			}
		}
	}

	if interrupted {
		n.Type = memory.TypeChange
		n.Title = "Interrupted: " + core
		n.Narrative = asSentence(t.in.Description)
		return true
	}
	if failed {
		failedCommand(n, t, c, core, code, out)
		return true
	}
	switch c.kind {
	case kindTest, kindBuild:
		passedCheck(n, c, core, out, turn)
	case kindMove:
		if !movedFiles(n, t, c) {
			ranCommand(n, t, core, out)
		}
	case kindRemove:
		files := relAll(t, operands(c.args))
		if len(files) == 0 {
			ranCommand(n, t, core, out)
			break
		}
		n.Type = memory.TypeChange
		n.Title = "Deleted " + listMore(files, 3, len(files))
		n.FilesModified = firstN(files, 8)
	case kindCommit:
		n.Type = memory.TypeChange
		msg := commitMessage(c.args)
		n.Title = "Committed: " + firstNonEmpty(msg, "changes")
		for l := range strings.Lines(headTail(t.out.Stdout + "\n" + t.outText)) {
			l = strings.TrimSpace(l)
			if m := commitHeadRE.FindStringSubmatch(l); m != nil {
				n.fact("commit %s on %s", m[2], m[1])
			} else if strings.Contains(l, "changed") && (strings.Contains(l, "insertion") || strings.Contains(l, "deletion") || strings.Contains(l, "file")) {
				n.fact("%s", l)
			}
		}
	case kindInstall:
		n.Type = memory.TypeChange
		pkgs := operands(c.args)
		switch {
		case len(pkgs) == 0:
			n.Title = "Installed dependencies: " + core
		case len(pkgs) == 1:
			n.Title = "Added dependency " + pkgs[0]
		default:
			n.Title = "Added dependencies " + listMore(pkgs, 3, len(pkgs))
		}
		for _, p := range firstN(pkgs, 5) {
			n.fact("dependency: %s", p)
			n.symbols = append(n.symbols, path.Base(strings.SplitN(p, "@", 2)[0]))
		}
	case kindWrite:
		file := ""
		if c.target != "" {
			file = t.rel(c.target)
		} else if ops := operands(c.args); len(ops) > 0 {
			file = t.rel(ops[len(ops)-1])
		}
		if file == "" {
			ranCommand(n, t, core, out)
			break
		}
		n.Type = memory.TypeChange
		n.Title = "Wrote " + file + " from the shell"
		n.FilesModified = []string{file}
		n.tags = append(n.tags, fileTags(file)...)
	case kindLook:
		lookedAt(n, t, c, core, out)
	default:
		ranCommand(n, t, core, out)
	}
	return true
}

var commitHeadRE = regexp.MustCompile(`^\[([^\s\]]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\]`)

func ellipsisIf(b bool) string {
	if b {
		return " …"
	}
	return ""
}

func commandTags(c shellCommand) []string {
	switch c.kind {
	case kindTest:
		return []string{"testing"}
	case kindBuild:
		return []string{"build"}
	case kindInstall:
		return []string{"dependencies"}
	case kindCommit, kindMove, kindRemove:
		if len(c.words) > 0 && c.words[0] == "git" {
			return []string{"git"}
		}
	}
	return nil
}

func relAll(t *toolEvent, ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, t.rel(p))
	}
	return out
}

// failedCommand describes a run that exited non-zero: a test failure names
// its tests and the assertion, a build failure its first error.
func failedCommand(n *draft, t *toolEvent, c shellCommand, core string, code int, out string) {
	n.Type = memory.TypeDiscovery
	msg := errorLine(out)
	short := stripPosition(msg)
	var names []string
	if c.kind == kindTest {
		names = failingTests(out)
	}
	for _, name := range firstN(names, 3) {
		n.fact("failing test: %s", name)
		n.symbols = append(n.symbols, name)
	}
	if msg != "" {
		n.fact("error: %s", msg)
	}
	n.Subtitle = firstNonEmpty(msg, fmt.Sprintf("exit code %d", code))
	switch {
	case len(names) > 0:
		verb := " fails"
		if len(names) > 1 {
			verb = " fail"
		}
		n.Title = listMore(names, 2, len(names)) + verb
		if short != "" {
			n.Title += ": " + short
		}
	case c.kind == kindTest || c.kind == kindBuild || c.kind == kindRun || errorScore(msg) >= 80:
		n.Title = core + " fails"
		if short != "" {
			n.Title += ": " + short
		}
	default:
		n.Title = "Command failed: " + core
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s failed with exit code %d", core, code)
	if len(names) > 0 {
		fmt.Fprintf(&b, " in %s", listMore(names, 3, len(names)))
	}
	if msg != "" {
		fmt.Fprintf(&b, ": %s", msg)
	}
	n.Narrative = asSentence(b.String())
}

// passedCheck describes a passing test run or build, and what it confirms
// when an earlier run of the turn failed.
func passedCheck(n *draft, c shellCommand, core string, out string, turn []memory.Observation) {
	n.Type = memory.TypeChange
	verb := " passes"
	if c.kind == kindBuild {
		verb = " succeeds"
	}
	result := resultLine(out)
	if result != "" {
		n.fact("result: %s", result)
	}
	n.Subtitle = firstNonEmpty(result, "exit code 0")
	n.Title = core + verb
	fail, i := lastFailureAt(turn)
	if fail == nil {
		return
	}
	var fixed, touched []string
	for _, o := range turn[i+1:] {
		touched = append(touched, o.FilesModified...)
		if o.Type == memory.TypeBugfix {
			fixed = append(fixed, o.FilesModified...)
		}
	}
	if len(fixed) == 0 {
		fixed = touched
	}
	fixed = dedupe(fixed, 8)
	cause := fail.cause()
	if len(fixed) == 0 {
		n.Narrative = fmt.Sprintf("%s passes; earlier in this turn %s failed.", core, firstNonEmpty(cause, fail.command()))
		return
	}
	n.Type = memory.TypeBugfix
	n.Title = core + verb + " after fixing " + listMore(fixed, 2, len(fixed))
	if cause != "" {
		n.fact("fixes: %s", cause)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s again after the change to %s", core, verb, listMore(fixed, 3, len(fixed)))
	if cause != "" {
		fmt.Fprintf(&b, "; %s had failed", cause)
		if msg := fail.errorMessage(); msg != "" {
			fmt.Fprintf(&b, " (%s)", msg)
		}
	}
	n.Narrative = asSentence(b.String())
}

// movedFiles describes git mv and mv: a rename within a folder, a move
// across folders.
func movedFiles(n *draft, t *toolEvent, c shellCommand) bool {
	ops := operands(c.args)
	if len(ops) < 2 {
		return false
	}
	srcs, dst := relAll(t, ops[:len(ops)-1]), t.rel(ops[len(ops)-1])
	n.Type = memory.TypeRefactor
	n.tags = append(n.tags, "rename")
	how := "with " + strings.Join(firstN(c.words, 2), " ")
	if len(c.words) > 0 && c.words[0] != "git" {
		how = "with mv"
	}
	if len(srcs) == 1 {
		src := srcs[0]
		into := strings.HasSuffix(ops[len(ops)-1], "/") || (path.Ext(dst) == "" && path.Ext(src) != "")
		if into {
			dst = path.Join(dst, path.Base(src))
		}
		if path.Dir(src) == path.Dir(dst) {
			n.Title = "Renamed " + src + " to " + path.Base(dst)
		} else {
			n.Title = "Moved " + src + " to " + dst
		}
		n.FilesModified = []string{src, dst}
		n.fact("%s → %s", src, dst)
		n.Narrative = fmt.Sprintf("%s %s.", strings.Fields(n.Title)[0]+" "+src+" to "+dst, how)
		return true
	}
	n.Title = "Moved " + listMore(srcs, 3, len(srcs)) + " to " + dst
	for _, s := range firstN(srcs, 7) {
		n.FilesModified = append(n.FilesModified, s)
		n.fact("%s → %s", s, path.Join(dst, path.Base(s)))
	}
	n.FilesModified = append(n.FilesModified, dst)
	return true
}

// lookedAt describes a read-only command: cat of a file is a read, grep a
// search, git log a look at the history.
func lookedAt(n *draft, t *toolEvent, c shellCommand, core string, out string) {
	n.Type = memory.TypeDiscovery
	name := path.Base(c.words[0])
	ops := operands(c.args)
	switch name {
	case "cat", "head", "tail", "less", "more", "bat", "wc":
		files := relAll(t, ops)
		if len(files) > 0 {
			n.Title = "Read " + listMore(files, 2, len(files))
			n.FilesRead = firstN(files, 8)
			for _, f := range files {
				n.tags = append(n.tags, fileTags(f)...)
			}
			n.Subtitle = firstMeaningfulLine(out)
			return
		}
	case "grep", "rg", "ag", "ack":
		if len(ops) > 0 {
			n.Title = "Searched for " + inQuotes(ops[0])
			if len(ops) > 1 {
				n.Title += " in " + listMore(relAll(t, ops[1:]), 2, len(ops)-1)
			}
			n.symbols = identifiersIn(ops[0], 3)
			files := filesInGrepLines(t, out, 8)
			n.FilesRead = files
			if len(files) > 0 {
				n.fact("matches in: %s", strings.Join(files, ", "))
			} else if strings.TrimSpace(out) == "" {
				n.Title = "No matches for " + inQuotes(ops[0])
			}
			return
		}
	case "ls", "tree", "find", "fd", "du":
		where := "."
		if len(ops) > 0 {
			where = t.rel(ops[0])
		}
		n.Title = "Listed " + where
		if name == "find" || name == "fd" {
			n.Title = "Looked for files in " + where
		}
		n.Subtitle = firstMeaningfulLine(out)
		return
	case "git":
		sub := ""
		if len(c.words) > 1 {
			sub = c.words[1]
		}
		files := relAll(t, pathLike(ops))
		n.Title = "Checked git " + sub
		if len(files) > 0 {
			n.Title += " of " + listMore(files, 2, len(files))
			n.FilesRead = firstN(files, 8)
		}
		n.Subtitle = firstMeaningfulLine(out)
		return
	}
	ranCommand(n, t, core, out)
	n.Type = memory.TypeDiscovery
}

// pathLike keeps the operands that look like files.
func pathLike(ops []string) []string {
	var out []string
	for _, o := range ops {
		if strings.Contains(o, "/") || strings.Contains(path.Base(o), ".") && !strings.Contains(o, "..") {
			out = append(out, o)
		}
	}
	return out
}

// ranCommand describes any other successful command, its title from the
// description Claude gave it ("Print hello" → "Printed hello").
func ranCommand(n *draft, t *toolEvent, core string, out string) {
	if n.Type == "" {
		n.Type = memory.TypeChange
	}
	n.Title = "Ran " + core
	if d := pastTense(t.in.Description); d != "" {
		n.Title = d
	} else if t.in.Description != "" {
		n.Narrative = asSentence(t.in.Description)
	}
	n.Subtitle = firstMeaningfulLine(out)
}

// pastTense turns an imperative description into a past-tense title, or
// returns "" when its first word is not a verb it knows.
func pastTense(desc string) string {
	desc = strings.TrimSpace(desc)
	verb, rest, _ := strings.Cut(desc, " ")
	past, ok := pastTenses[strings.ToLower(verb)]
	if !ok {
		return ""
	}
	return strings.TrimRight(strings.TrimSpace(past+" "+rest), ".")
}

var pastTenses = map[string]string{
	"add": "Added", "apply": "Applied", "benchmark": "Benchmarked", "build": "Built", "check": "Checked",
	"clean": "Cleaned", "clone": "Cloned", "commit": "Committed", "compare": "Compared", "compile": "Compiled",
	"confirm": "Confirmed", "copy": "Copied", "count": "Counted", "create": "Created", "debug": "Debugged",
	"delete": "Deleted", "deploy": "Deployed", "display": "Displayed", "download": "Downloaded", "echo": "Echoed",
	"ensure": "Ensured", "execute": "Executed", "extract": "Extracted", "fetch": "Fetched", "find": "Found",
	"fix": "Fixed", "format": "Formatted", "generate": "Generated", "get": "Got", "init": "Initialized",
	"initialize": "Initialized", "inspect": "Inspected", "install": "Installed", "kill": "Killed", "lint": "Linted",
	"list": "Listed", "load": "Loaded", "look": "Looked", "make": "Made", "measure": "Measured", "move": "Moved",
	"open": "Opened", "print": "Printed", "profile": "Profiled", "pull": "Pulled", "push": "Pushed",
	"query": "Queried", "read": "Read", "remove": "Removed", "rename": "Renamed", "reproduce": "Reproduced",
	"restart": "Restarted", "retry": "Retried", "run": "Ran", "save": "Saved", "search": "Searched", "set": "Set",
	"show": "Showed", "sort": "Sorted", "stage": "Staged", "start": "Started", "stop": "Stopped", "test": "Tested",
	"tidy": "Tidied", "trace": "Traced", "try": "Tried", "update": "Updated", "upgrade": "Upgraded",
	"verify": "Verified", "view": "Viewed", "wait": "Waited", "write": "Wrote",
}

// commitMessage reads -m/--message, including Claude Code's heredoc form
// (-m "$(cat <<'EOF' … EOF)"): the subject line.
func commitMessage(args []string) string {
	for i, a := range args {
		var msg string
		switch {
		case (a == "-m" || a == "--message") && i+1 < len(args):
			msg = args[i+1]
		case strings.HasPrefix(a, "--message="):
			msg = strings.TrimPrefix(a, "--message=")
		case strings.HasPrefix(a, "-m") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			msg = a[2:]
		case strings.HasPrefix(a, "-") && strings.HasSuffix(a, "m") && !strings.HasPrefix(a, "--") && i+1 < len(args): // -am
			msg = args[i+1]
		default:
			continue
		}
		lines := strings.Split(msg, "\n")
		if strings.Contains(lines[0], "<<") {
			lines = lines[1:]
		}
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" && l != "EOF" && l != ")" {
				return clip(l, 90)
			}
		}
	}
	return ""
}

func exitStatus(res toolOutput) (int, bool) {
	if res.ExitCode != nil {
		return *res.ExitCode, *res.ExitCode != 0
	}
	if rest, ok := strings.CutPrefix(strings.TrimSpace(res.Error), "Exit code "); ok {
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(rest)
		}
		if n, err := strconv.Atoi(rest[:end]); err == nil {
			return n, n != 0
		}
	}
	if res.Error != "" || res.IsError {
		return 1, true
	}
	return 0, false
}

// ---------------------------------------------------------------------------
// Reading command output

// lines returns the non-empty lines of the head and tail of out, trimmed
// of trailing space and colour codes.
func outputLines(out string) []string {
	out = headTail(out)
	if strings.IndexByte(out, 0x1b) >= 0 {
		out = ansiRE.ReplaceAllString(out, "")
	}
	lines := make([]string, 0, 32)
	for l := range strings.Lines(out) {
		l = strings.TrimRight(l, " \t\r\n")
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// headTail keeps the first and last maxScan/2 bytes of a long text.
func headTail(s string) string {
	if len(s) <= maxScan {
		return s
	}
	h, t := s[:maxScan/2], s[len(s)-maxScan/2:]
	for len(h) > 0 && !utf8.RuneStart(h[len(h)-1]) {
		h = h[:len(h)-1]
	}
	for len(t) > 0 && !utf8.RuneStart(t[0]) {
		t = t[1:]
	}
	return h + "\n" + t
}

var (
	goAssertRE  = regexp.MustCompile(`^\s+[\w.\-/]+\.go:\d+: \S`)
	positionRE  = regexp.MustCompile(`^\.{0,2}/?[\w.\-/\\]+\.\w+(?::\d+(?::\d+)?:|\(\d+,\d+\):)`)
	exceptionRE = regexp.MustCompile(`^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Failure)\b(?::|$)`)
	stripPosRE  = regexp.MustCompile(`^\.{0,2}/?[\w.\-/\\]+\.\w+(?::\d+(?::\d+)?|\(\d+,\d+\)):\s*`)
)

// errorScore rates how telling a line of failure output is: an assertion
// with its file:line, a panic, a compiler error, an exception… down to any
// line (1). Noise (exit status lines) scores 0.
func errorScore(line string) int {
	l := strings.TrimSpace(line)
	if l == "" {
		return 0
	}
	low := strings.ToLower(l)
	switch {
	case strings.HasPrefix(low, "exit code") || strings.HasPrefix(low, "exit status") || l == "FAIL" || l == "FAILED" || strings.HasPrefix(low, "error: process completed"):
		return 0
	case strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "FAIL ") && !strings.Contains(l, " - "):
		return 5
	case strings.HasPrefix(l, "--- FAIL") || strings.HasPrefix(l, "Traceback") || strings.HasPrefix(l, "=== RUN") || strings.HasPrefix(l, "●"):
		return 8
	case goAssertRE.MatchString(line):
		return 100
	case strings.HasPrefix(l, "panic: ") || strings.Contains(l, "panicked at"):
		return 95
	case strings.HasPrefix(l, "FAILED ") && strings.Contains(l, " - "):
		return 92
	case strings.HasPrefix(l, "E ") && len(l) > 2 && strings.TrimSpace(l[1:]) != "":
		return 90
	case positionRE.MatchString(l) && !strings.Contains(low, "warning"):
		return 85
	case exceptionRE.MatchString(l):
		return 80
	case strings.HasPrefix(low, "error") || strings.HasPrefix(low, "fatal") || strings.HasPrefix(low, "assertionerror"):
		return 70
	case strings.Contains(low, "error") || strings.Contains(low, "not found") || strings.Contains(low, "cannot ") || strings.Contains(low, "denied") || strings.Contains(low, "no such file") || strings.Contains(low, "undefined") || strings.Contains(low, "failed") || strings.Contains(low, "expected"):
		return 50
	}
	return 1
}

// errorLine picks the most telling line of a failed command's output (see
// errorScore), in a form fit for a fact.
func errorLine(out string) string {
	lines := outputLines(out)
	best, bestScore := -1, 0
	for i, l := range lines {
		if s := errorScore(l); s > bestScore {
			best, bestScore = i, s
		}
	}
	if bestScore < 90 {
		// Jest and friends: "Expected: 81" / "Received: 90".
		var exp, got string
		for _, l := range lines {
			t := strings.TrimSpace(l)
			if v, ok := strings.CutPrefix(t, "Expected:"); ok && exp == "" {
				exp = strings.TrimSpace(v)
			} else if v, ok := strings.CutPrefix(t, "Received:"); ok && got == "" {
				got = strings.TrimSpace(v)
			}
		}
		if exp != "" && got != "" {
			return clip("expected "+exp+", received "+got, 160)
		}
	}
	if best < 0 {
		return ""
	}
	l := strings.TrimSpace(lines[best])
	switch {
	case strings.HasPrefix(l, "FAILED ") && strings.Contains(l, " - "):
		_, l, _ = strings.Cut(l, " - ")
	case strings.HasPrefix(l, "E "):
		l = strings.TrimSpace(l[1:])
	case strings.Contains(l, "panicked at") && strings.HasSuffix(l, ":") && best+1 < len(lines):
		l += " " + strings.TrimSpace(lines[best+1])
	}
	return clip(squash(l), 160)
}

// stripPosition drops a leading "file.go:12:3: " from an error line.
func stripPosition(msg string) string {
	if loc := stripPosRE.FindStringIndex(msg); loc != nil && loc[1] < len(msg) {
		return msg[loc[1]:]
	}
	return msg
}

// failingTests reads the names of failed tests from go test, pytest,
// jest/vitest and cargo output.
func failingTests(out string) []string {
	var names []string
	for _, l := range outputLines(out) {
		t := strings.TrimSpace(l)
		var name string
		switch {
		case strings.HasPrefix(t, "--- FAIL: "):
			name, _, _ = strings.Cut(strings.TrimPrefix(t, "--- FAIL: "), " ")
		case strings.HasPrefix(t, "FAILED ") && strings.Contains(t, "::"):
			id, _, _ := strings.Cut(strings.TrimPrefix(t, "FAILED "), " ")
			name = id[strings.LastIndex(id, "::")+2:]
		case strings.HasPrefix(t, "● ") && !strings.Contains(t, "Test suite failed"):
			parts := strings.Split(strings.TrimPrefix(t, "● "), "›")
			name = strings.TrimSpace(parts[len(parts)-1])
		case strings.HasPrefix(t, "✕ ") || strings.HasPrefix(t, "× ") || strings.HasPrefix(t, "✗ "):
			_, name, _ = strings.Cut(t, " ")
			if i := strings.LastIndex(name, " ("); i > 0 && strings.HasSuffix(name, "ms)") {
				name = name[:i]
			}
			parts := strings.Split(name, ">")
			name = strings.TrimSpace(parts[len(parts)-1])
		case strings.HasPrefix(t, "test ") && strings.HasSuffix(t, "... FAILED"):
			name = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(t, "test "), "... FAILED"))
		}
		if name != "" {
			names = append(names, clip(name, 80))
		}
	}
	names = dedupe(names, 20)
	// A Go subtest's parent fails with it: keep the specific name.
	out2 := names[:0]
	for _, n := range names {
		if !slices.ContainsFunc(names, func(m string) bool { return strings.HasPrefix(m, n+"/") }) {
			out2 = append(out2, n)
		}
	}
	return out2
}

var (
	pytestSummaryRE = regexp.MustCompile(`^=+ (.*\b(?:passed|failed|error)\b.*) =+$`)
	pytestQuietRE   = regexp.MustCompile(`^\d+ passed\b.* in [\d.]+s`)
)

// resultLine finds the summary line of a passing run: go test's "ok",
// pytest's "N passed", jest's "Tests:", cargo's "test result".
func resultLine(out string) string {
	var okLines []string
	best := ""
	for _, l := range outputLines(out) {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "ok ") || strings.HasPrefix(t, "ok\t"):
			okLines = append(okLines, squash(t))
		case pytestSummaryRE.MatchString(t):
			best = pytestSummaryRE.FindStringSubmatch(t)[1]
		case pytestQuietRE.MatchString(t):
			best = t
		case strings.HasPrefix(t, "Tests:") || strings.HasPrefix(t, "Tests ") && strings.Contains(t, "passed") || strings.HasPrefix(t, "test result:") || strings.HasPrefix(t, "Ran ") && strings.Contains(t, " test"):
			best = t
		}
	}
	switch {
	case best != "":
		return clip(squash(best), 120)
	case len(okLines) == 1:
		return clip(okLines[0], 120)
	case len(okLines) > 1:
		return fmt.Sprintf("%d packages ok", len(okLines))
	}
	return ""
}

// ---------------------------------------------------------------------------
// The turn so far

// A runNote is an observation of a command with its exit code in its facts.
type runNote struct{ *memory.Observation }

func (r runNote) fact(prefix string) string {
	for _, f := range r.Facts {
		if v, ok := strings.CutPrefix(f, prefix); ok {
			return v
		}
	}
	return ""
}

func (r runNote) command() string {
	return primaryCommand(strings.TrimSuffix(r.fact("$ "), " …")).String()
}

// cause names what failed: the failing tests, or the command.
func (r runNote) cause() string {
	var names []string
	for _, f := range r.Facts {
		if v, ok := strings.CutPrefix(f, "failing test: "); ok {
			names = append(names, v)
		}
	}
	if len(names) > 0 {
		return listMore(names, 2, len(names))
	}
	return r.command()
}

func (r runNote) errorMessage() string { return r.fact("error: ") }

// state reports whether the observation is a failed run that counts (a
// test, a build, the program, or any command with a real error) or a
// passing test or build; 0 otherwise.
func (r runNote) state() int {
	cmd := r.fact("$ ")
	code := r.fact("exit code ")
	if cmd == "" || code == "" {
		return 0
	}
	kind := primaryCommand(strings.TrimSuffix(cmd, " …")).kind
	if code != "0" {
		if kind == kindTest || kind == kindBuild || kind == kindRun || errorScore(r.errorMessage()) >= 80 {
			return runFailed
		}
		return 0
	}
	if kind == kindTest || kind == kindBuild {
		return runPassed
	}
	return 0
}

const (
	runFailed = 1
	runPassed = 2
)

// lastFailure returns the turn's most recent failed run, unless a passing
// test or build came after it.
func lastFailure(turn []memory.Observation) *runNote {
	r, _ := lastFailureAt(turn)
	return r
}

func lastFailureAt(turn []memory.Observation) (*runNote, int) {
	for i := len(turn) - 1; i >= 0; i-- {
		r := runNote{&turn[i]}
		switch r.state() {
		case runFailed:
			return &r, i
		case runPassed:
			return nil, -1
		}
	}
	return nil, -1
}

// ---------------------------------------------------------------------------
// Decisions

var decisionRE = regexp.MustCompile(`(?i)\b(?:` +
	`(?:we|i)(?:'ve| have)? (?:decided|agreed|chose|chosen|settled on)` +
	`|let'?s (?:go with|use|switch|stick with|keep|adopt|move to|standardi[sz]e on|prefer)` +
	`|(?:we'll|we will|we should|we're going to|going forward,? we) (?:use|go with|switch|stick with|adopt|prefer|standardi[sz]e)` +
	`|(?:use|prefer|choose|pick|adopt|switch to)\b[^.!?\n]*?\b(?:instead of|rather than)` +
	`|prefer\b[^.!?\n]*?\bover` +
	`|from now on` +
	`|(?:always|never|don't|do not) use` +
	`|switch(?:ed)? from\b[^.!?\n]*?\bto` +
	`)\b`)

var decisionLeadRE = regexp.MustCompile(`(?i)^(?:so,? |ok,? |also,? |please,? |and )*(?:we(?:'ve| have)? (?:decided|agreed) (?:to |that |on )?|i(?:'ve| have)? decided (?:to |that )?|we (?:chose|settled on) |let'?s |we'll |we will |we should |we're going to |going forward,? we |from now on,? (?:we |let's )?)`)

// decisionWords are what every sentence decisionRE matches contains: a
// cheap test that spares most prompts the expression.
var decisionWords = []string{"decid", "agreed", "chose", "settled on", "let's", "lets ", "we'll", "we will", "we should", "we're going", "going forward", "instead of", "rather than", "prefer", "from now on", "always use", "never use", "don't use", "do not use", "switch"}

// decisionsIn returns the sentences of a prompt that state a choice.
func decisionsIn(request string) []string {
	lower := strings.ToLower(request)
	if !slices.ContainsFunc(decisionWords, func(w string) bool { return strings.Contains(lower, w) }) || !decisionRE.MatchString(request) {
		return nil
	}
	var out []string
	for _, s := range sentences(request) {
		if decisionRE.MatchString(s) {
			out = append(out, clip(s, 240))
			if len(out) == 3 {
				break
			}
		}
	}
	return out
}

// decisionNote makes the decision observation of a turn whose prompt
// states a choice, unless the turn already has it.
func decisionNote(request string, turn []memory.Observation) (memory.Observation, bool) {
	if request == "" {
		return memory.Observation{}, false
	}
	for i := range turn {
		if turn[i].Type == memory.TypeDecision && turn[i].Tool == "" {
			return memory.Observation{}, false
		}
	}
	ds := decisionsIn(request)
	if len(ds) == 0 {
		return memory.Observation{}, false
	}
	choice := strings.TrimRight(decisionLeadRE.ReplaceAllString(ds[0], ""), ".!")
	choice = lowerFirst(choice)
	o := memory.Observation{Type: memory.TypeDecision, Request: request}
	o.Title = clip("Decision: "+choice, maxTitle)
	o.Subtitle = clip(ds[0], maxSubtitle)
	for _, d := range ds {
		o.Facts = append(o.Facts, "decided: "+d)
	}
	o.Narrative = "The prompt states a choice: " + strings.Join(ds, " ")
	o.Concepts = topicWords(strings.Join(ds, " "), 6)
	return o, true
}

func lowerFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 || !unicode.IsUpper(r) {
		return s
	}
	// Keep acronyms and identifiers: "API …", "JSONRPC …".
	if next, _ := utf8.DecodeRuneInString(s[size:]); unicode.IsUpper(next) {
		return s
	}
	return string(unicode.ToLower(r)) + s[size:]
}

// fixPhrases and refactorPhrases read what a prompt asks for, for edits
// that no failing run explains.
var (
	fixPhrases      = []string{"fix", "fixes", "fixed", "fixing", "bug", "bugs", "broken", "crash", "crashes", "crashing", "regression", "is wrong", "are wrong", "doesn't work", "does not work", "off by"}
	refactorPhrases = []string{"refactor", "refactoring", "rename", "extract", "clean up", "cleanup", "split up", "split out", "deduplicate", "simplify", "move the", "move it"}
)

// ---------------------------------------------------------------------------
// Summaries

func summarize(ev memory.Event, request string, turn []memory.Observation) (memory.Summary, bool) {
	req := firstNonEmpty(request, ev.LastUserMessage)
	msg := strings.TrimSpace(ev.LastAssistantMessage)
	if len(turn) == 0 && req == "" && msg == "" {
		return memory.Summary{}, false
	}
	s := memory.Summary{Request: clip(req, 500)}
	said := splitMessage(msg)
	var investigated, failures, docs, completed, next, notes []string
	read, modified := map[string]bool{}, map[string]bool{}
	var touched []string // symbols the turn's edits touched
	for i := range turn {
		o := &turn[i]
		for _, f := range o.FilesRead {
			read[f] = true
		}
		for _, f := range o.FilesModified {
			modified[f] = true
		}
		if v := (runNote{o}).fact("symbols: "); v != "" && len(o.FilesModified) > 0 {
			touched = append(touched, strings.Split(v, ", ")...)
		}
	}
	for i := range turn {
		o := &turn[i]
		r := runNote{o}
		switch {
		case o.Type == memory.TypeDecision:
			notes = append(notes, o.Title)
		case slices.Contains(o.Facts, "interrupted by the user"):
			notes = append(notes, o.Title)
		case o.Type == memory.TypeDiscovery:
			investigated = append(investigated, o.Title)
			if r.state() == runFailed {
				if e := r.errorMessage(); e != "" {
					failures = append(failures, firstNonEmpty(r.cause(), r.command())+" failed: "+e)
				}
			}
		default:
			completed = append(completed, o.Title)
		}
		// What the code touched is documented to do: the docs of changed
		// symbols, from the edits and from the reads before them.
		for _, f := range o.Facts {
			d, ok := strings.CutPrefix(f, "doc: ")
			if ok && o.Type != memory.TypeFeature && slices.ContainsFunc(touched, func(sym string) bool { return docAbout(d, sym) }) {
				docs = append(docs, d)
			}
		}
	}
	s.FilesRead = sortedKeys(read)
	s.FilesModified = sortedKeys(modified)
	learned := append(append(said.learned, docs...), failures...)
	completed = append(said.completed, completed...)

	if f := lastFailure(turn); f != nil {
		step := "Make " + f.command() + " pass"
		if e := f.errorMessage(); e != "" {
			step += ": " + firstNonEmpty(f.cause(), "it") + " still fails (" + e + ")"
		}
		next = append(next, step)
	} else if cmd, changed := untestedChanges(turn); cmd != "" {
		next = append(next, "Re-run "+cmd+": "+listMore(changed, 3, len(changed))+" changed after the last run")
	}
	next = append(next, said.next...)
	if len(s.FilesModified) == 0 && len(turn) > 0 {
		notes = append(notes, "No files were modified in this turn.")
	}

	s.Investigated = joinItems(investigated, 8)
	s.Learned = joinItems(learned, 5)
	s.Completed = joinItems(completed, 8)
	s.NextSteps = joinItems(next, 4)
	s.Notes = joinItems(notes, 4)
	return s, true
}

// docAbout reports whether a doc fact is about sym ("Cart.Last" matches
// "Last returns …" and "Cart.Last: …").
func docAbout(doc, sym string) bool {
	short := sym[strings.LastIndexByte(sym, '.')+1:]
	for _, name := range []string{sym, short} {
		if rest, ok := strings.CutPrefix(doc, name); ok && (rest == "" || rest[0] == ' ' || rest[0] == ':') {
			return true
		}
	}
	return false
}

// untestedChanges finds files modified after the turn's last passing test
// or build run: the command to run again and the files.
func untestedChanges(turn []memory.Observation) (string, []string) {
	last := -1
	for i := range turn {
		if (runNote{&turn[i]}).state() == runPassed {
			last = i
		}
	}
	if last < 0 {
		return "", nil
	}
	var changed []string
	for _, o := range turn[last+1:] {
		for _, f := range o.FilesModified {
			if isCode(f) {
				changed = append(changed, f)
			}
		}
	}
	if len(changed) == 0 {
		return "", nil
	}
	return runNote{&turn[last]}.command(), dedupe(changed, 8)
}

// said is what an assistant message reports, sentence by sentence.
type said struct{ learned, completed, next []string }

// nextPhrases mark a sentence about what is left to do.
var nextPhrases = []string{"next", "next step", "next steps", "todo", "to-do", "follow-up", "follow up", "still need", "still fails", "still failing", "still broken", "still missing", "still to", "remaining", "not yet", "left to", "you may", "you might", "you could", "you should", "you must", "you will", "you need", "consider", "should also", "i'll", "we'll", "will need"}

// donePhrases mark a sentence about the state the work left things in.
var donePhrases = []string{"test passes", "tests pass", "tests now pass", "tests all pass", "check passes", "checks pass", "build passes", "build succeeds", "builds succeed"}

var nowRE = regexp.MustCompile(`\bnow (?:\w+s|is|are)\b`)

// hasPhrase reports whether lower (a lower-case sentence) contains one of
// phrases as whole words.
func hasPhrase(lower string, phrases []string) bool {
	for _, p := range phrases {
		for i := 0; ; {
			j := strings.Index(lower[i:], p)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(p)
			if (start == 0 || !isIdentByte(lower[start-1])) && (end == len(lower) || !isIdentByte(lower[end])) {
				return true
			}
			i = end
		}
	}
	return false
}

var doneVerbs = wordSet("added", "fixed", "changed", "updated", "created", "removed", "renamed", "switched", "implemented", "refactored", "moved", "replaced", "wrote", "made", "ran", "done", "deleted", "extracted", "introduced", "converted", "migrated", "rewrote", "adjusted", "corrected", "completed", "finished", "installed", "upgraded", "reverted", "merged", "committed", "verified", "confirmed")

// splitMessage sorts the sentences of an assistant message: what it did
// (first-person or past-tense openings: completed), what remains (next
// steps, questions), and the rest (what was learned).
func splitMessage(msg string) said {
	var s said
	if msg == "" {
		return s
	}
	for i, sent := range sentences(stripMarkdown(headTail(msg))) {
		if i == 16 {
			break
		}
		sent = clip(sent, 240)
		lower := strings.ToLower(sent)
		first, rest, _ := strings.Cut(sent, " ")
		lowFirst := strings.ToLower(strings.TrimRight(first, ":,"))
		switch {
		case strings.HasSuffix(sent, "?") || hasPhrase(lower, nextPhrases):
			s.next = append(s.next, sent)
		case lowFirst == "i" || lowFirst == "we" || lowFirst == "i've" || lowFirst == "we've":
			verb, tail, _ := strings.Cut(rest, " ")
			if verb == "have" || verb == "also" {
				verb, tail, _ = strings.Cut(tail, " ")
			}
			if verb == "" {
				s.learned = append(s.learned, sent)
				break
			}
			s.completed = append(s.completed, upperFirst(strings.TrimSpace(verb+" "+tail)))
		case doneVerbs[lowFirst] || hasPhrase(lower, donePhrases) || strings.Contains(lower, "now ") && nowRE.MatchString(lower):
			s.completed = append(s.completed, sent)
		default:
			s.learned = append(s.learned, sent)
		}
	}
	return s
}

func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}

// sentences splits text at sentence ends (. ! ? before a space or the
// end) and at line breaks, each bullet its own sentence.
func sentences(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		line = strings.TrimLeft(line, "-*•> ")
		if line == "" {
			continue
		}
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') {
				// Not after a single letter or a known abbreviation ("e.g.").
				word := line[max(0, strings.LastIndexByte(line[:i], ' ')+1):i]
				if c == '.' && (len(word) <= 1 || word == "e.g" || word == "i.e" || word == "etc" || word == "vs") && i+1 < len(line) {
					continue
				}
				if s := strings.TrimSpace(line[start : i+1]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(line[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func stripMarkdown(s string) string {
	if !strings.ContainsAny(s, "*_`#") {
		return s
	}
	r := strings.NewReplacer("**", "", "__", "", "`", "")
	var b strings.Builder
	for line := range strings.Lines(s) {
		t := strings.TrimLeft(line, " ")
		if strings.HasPrefix(t, "```") {
			continue
		}
		t = strings.TrimLeft(t, "#")
		b.WriteString(r.Replace(t))
	}
	return b.String()
}

// joinItems joins up to n distinct items as sentences, saying how many
// more there were.
func joinItems(items []string, n int) string {
	all := dedupe(items, len(items)+1)
	var b strings.Builder
	for i, it := range firstN(all, n) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(asSentence(it))
	}
	if len(all) > n {
		fmt.Fprintf(&b, " (%d more.)", len(all)-n)
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// Declarations

// A codeDecl is a function, type, class… declared in a piece of code, with the
// first sentence of its doc comment.
type codeDecl struct {
	name, kind, doc string
	indent          int
	line            int
}

var declKeywords = wordSet("func", "function", "def", "class", "interface", "type", "struct", "enum", "trait", "fn", "impl", "module", "const", "let", "var", "fun", "record", "protocol", "object", "namespace", "macro_rules!")

var declModifiers = wordSet("export", "default", "pub", "pub(crate)", "pub(super)", "async", "static", "public", "private", "protected", "abstract", "final", "override", "open", "internal", "sealed", "data", "inline", "extern", "unsafe", "declare", "readonly", "virtual", "synchronized", "partial", "suspend")

// parseDecl reads a declaration from one line of code, any common
// language: Go, TypeScript/JavaScript, Python, Rust, Java/Kotlin/C#, Ruby.
func parseDecl(line string) (name, kind string, indent int, ok bool) {
	s := strings.TrimLeft(line, " \t")
	indent = len(line) - len(s)
	modifiers := 0
	for {
		w, rest, _ := strings.Cut(s, " ")
		if declModifiers[w] {
			s = strings.TrimLeft(rest, " \t")
			modifiers++
			continue
		}
		break
	}
	w, rest, found := strings.Cut(s, " ")
	if !found {
		return "", "", 0, false
	}
	rest = strings.TrimLeft(rest, " \t")
	switch {
	case declKeywords[w] || w == "function*":
		kind = w
	case modifiers > 0:
		// Java, C#, Kotlin members: "public int total(".
		name = leadingIdent(rest)
		if name != "" && strings.HasPrefix(strings.TrimLeft(rest[len(name):], " "), "(") && isIdent(strings.Trim(w, "<>[]?")) {
			return name, "method", indent, true
		}
		return "", "", 0, false
	default:
		return "", "", 0, false
	}
	if (kind == "const" || kind == "let" || kind == "var") && indent > 0 {
		return "", "", 0, false // locals
	}
	recv := ""
	if kind == "func" && strings.HasPrefix(rest, "(") {
		// A Go method: func (c *Cart) Total() → Cart.Total.
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return "", "", 0, false
		}
		fields := strings.Fields(strings.Trim(rest[1:end], " "))
		if len(fields) > 0 {
			recv = strings.TrimLeft(fields[len(fields)-1], "*")
			if i := strings.IndexByte(recv, '['); i >= 0 {
				recv = recv[:i]
			}
		}
		rest = strings.TrimLeft(rest[end+1:], " ")
	}
	rest = strings.TrimPrefix(rest, "*")
	name = leadingIdent(rest)
	if name == "" || keywordsNotNames[name] {
		return "", "", 0, false
	}
	if kind == "impl" {
		// impl Trait for Type: the type.
		if _, after, ok := strings.Cut(rest, " for "); ok {
			if n := leadingIdent(strings.TrimLeft(after, " ")); n != "" {
				name = n
			}
		}
	}
	if recv != "" && isIdent(recv) {
		name = recv + "." + name
	}
	return name, kind, indent, true
}

var keywordsNotNames = wordSet("if", "for", "while", "return", "func", "function", "new", "as", "in", "of", "is", "not", "and", "or", "the", "a", "an", "to")

func leadingIdent(s string) string {
	i := 0
	for i < len(s) && isIdentByte(s[i]) {
		i++
	}
	if i == 0 || '0' <= s[0] && s[0] <= '9' {
		return ""
	}
	return s[:i]
}

// declsOf lists up to max declarations of a piece of code with their doc
// comments (the comment block above, or a Python docstring below).
func declsOf(code string, max int) []codeDecl {
	if code == "" {
		return nil
	}
	if len(code) > maxScan {
		code = code[:maxScan]
	}
	var (
		out []codeDecl
		doc []string
		no  int
	)
	lines := strings.Split(code, "\n")
	for i, line := range lines {
		no++
		t := strings.TrimSpace(line)
		if c, ok := commentText(t); ok {
			if c != "" && !strings.HasPrefix(c, "go:") && !strings.HasPrefix(c, "nolint") && !strings.HasPrefix(c, "eslint") && !strings.HasPrefix(c, "!") {
				doc = append(doc, c)
			}
			continue
		}
		if t == "" || strings.HasPrefix(t, "@") || strings.HasPrefix(t, "#[") {
			if t == "" {
				doc = doc[:0]
			}
			continue // decorators and attributes belong to the next line
		}
		name, kind, indent, ok := parseDecl(line)
		if ok {
			d := codeDecl{name: name, kind: kind, indent: indent, line: no}
			text := strings.Join(doc, " ")
			if text == "" && (kind == "def" || kind == "class") && i+1 < len(lines) {
				next := strings.TrimSpace(lines[i+1])
				for _, q := range []string{`"""`, `'''`} {
					if strings.HasPrefix(next, q) {
						text = strings.Trim(strings.TrimPrefix(next, q), `"' `)
					}
				}
			}
			d.doc = firstSentence(text)
			out = append(out, d)
			if len(out) == max {
				break
			}
		}
		doc = doc[:0]
	}
	return out
}

// commentText returns the text of a comment line, without its markers.
func commentText(t string) (string, bool) {
	for _, p := range []string{"///", "//", "/**", "/*", "*/", "* ", "#", "--", ";;"} {
		if strings.HasPrefix(t, p) {
			if p == "#" && (strings.HasPrefix(t, "#[") || strings.HasPrefix(t, "#!") || strings.HasPrefix(t, "#include") || strings.HasPrefix(t, "#define")) {
				return "", false
			}
			c := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(t, p), "*/"))
			return strings.TrimLeft(c, "*! "), true
		}
	}
	if t == "*" {
		return "", true
	}
	return "", false
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if ss := sentences(s); len(ss) > 0 {
		s = ss[0]
	}
	return clip(s, 140)
}

func declNames(ds []codeDecl) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.name)
	}
	return dedupe(out, len(out)+1)
}

// declDiff compares the declarations before and after an edit: names only
// after (added), only before (removed) and in both (changed).
func declDiff(before, after []codeDecl) (added, removed, changed []string) {
	b, a := declNames(before), declNames(after)
	for _, n := range a {
		if slices.Contains(b, n) {
			changed = append(changed, n)
		} else {
			added = append(added, n)
		}
	}
	for _, n := range b {
		if !slices.Contains(a, n) {
			removed = append(removed, n)
		}
	}
	return added, removed, changed
}

// enclosingDecl finds the function or type an edit sits in: the nearest
// declaration above old in the original file that is indented less than
// the edited line, or, without the file, in the patch's context lines.
func enclosingDecl(original, old string, patch []string) string {
	var above []string
	editIndent := -1
	if i := strings.Index(original, old); original != "" && old != "" && i >= 0 {
		start := strings.LastIndexByte(original[:i], '\n') + 1
		line := original[start:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		editIndent = len(line) - len(strings.TrimLeft(line, " \t"))
		before := original[:start]
		if len(before) > maxScan {
			before = before[len(before)-maxScan:]
		}
		above = strings.Split(before, "\n")
	} else if len(patch) > 0 {
		for _, l := range patch {
			if strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+") {
				body := l[1:]
				editIndent = len(body) - len(strings.TrimLeft(body, " \t"))
				break
			}
			if len(l) > 0 {
				above = append(above, l[1:])
			}
		}
	}
	if editIndent <= 0 {
		return ""
	}
	for i := len(above) - 1; i >= 0 && i >= len(above)-400; i-- {
		name, kind, indent, ok := parseDecl(above[i])
		if ok && indent < editIndent && kind != "const" && kind != "let" && kind != "var" {
			return name
		}
	}
	return ""
}

// docFacts renders the doc comments of declarations: "roundCents rounds
// half away from zero." or, when the doc does not start with the name,
// "retry: retries with backoff.".
func docFacts(ds []codeDecl, n int) []string {
	var out []string
	for _, d := range ds {
		if d.doc == "" {
			continue
		}
		short := d.name[strings.LastIndexByte(d.name, '.')+1:]
		doc := d.doc
		if !strings.HasPrefix(doc, short) && !strings.HasPrefix(doc, d.name) {
			doc = d.name + ": " + doc
		}
		out = append(out, doc)
		if len(out) == n {
			break
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// Words, files and small helpers

var codeExts = wordSet(".go", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".py", ".rs", ".java", ".kt", ".kts", ".rb", ".php", ".cs", ".swift", ".scala", ".c", ".h", ".cc", ".cpp", ".hpp", ".m", ".ex", ".exs", ".erl", ".hs", ".lua", ".sh", ".bash", ".zsh", ".vue", ".svelte", ".dart", ".clj", ".ml", ".jl", ".r", ".groovy", ".fs", ".zig", ".nim", ".pl")

var languages = map[string]string{
	".go": "go", ".ts": "typescript", ".tsx": "typescript", ".js": "javascript", ".jsx": "javascript",
	".mjs": "javascript", ".cjs": "javascript", ".py": "python", ".rs": "rust", ".java": "java", ".kt": "kotlin",
	".rb": "ruby", ".php": "php", ".cs": "csharp", ".swift": "swift", ".c": "c", ".h": "c", ".cc": "cpp",
	".cpp": "cpp", ".hpp": "cpp", ".sh": "shell", ".md": "docs", ".sql": "sql", ".vue": "vue", ".svelte": "svelte",
}

func isCode(file string) bool { return codeExts[strings.ToLower(path.Ext(file))] }

func isTestFile(file string) bool {
	base := strings.ToLower(path.Base(file))
	return strings.HasSuffix(base, "_test.go") || strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py") || strings.HasSuffix(base, "_test.py") ||
		strings.HasSuffix(base, "_spec.rb") || strings.HasSuffix(base, "test.java") || strings.HasSuffix(base, "tests.cs") ||
		strings.Contains(file, "__tests__/")
}

func fileTags(file string) []string {
	var tags []string
	if l := languages[strings.ToLower(path.Ext(file))]; l != "" {
		tags = append(tags, l)
	}
	if isTestFile(file) {
		tags = append(tags, "testing")
	}
	return tags
}

// Concepts derives topic words from file paths: directory and file stem
// names, minus noise.
func Concepts(files ...string) []string {
	var out []string
	for _, f := range files {
		for _, part := range strings.Split(filepath.ToSlash(f), "/") {
			if i := strings.IndexByte(part, '.'); i > 0 {
				part = part[:i]
			}
			part = strings.ToLower(strings.TrimFunc(part, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
			if len(part) < 3 || noiseDirs[part] {
				continue
			}
			out = append(out, part)
		}
	}
	return out
}

var noiseDirs = wordSet("src", "lib", "internal", "pkg", "cmd", "app", "home", "tmp", "work", "users", "root", "index", "main", "test", "tests", "dist", "build", "node_modules", "vendor")

// identWords splits identifiers into lower-case topic words:
// "TestInvoiceTotalHalfEven" → invoice, total, half, even.
func identWords(s string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) >= 3 {
			w := strings.ToLower(string(word))
			if !stopWords[w] {
				out = append(out, w)
			}
		}
		word = word[:0]
	}
	runes := []rune(s)
	for i, r := range runes {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if len(word) > 0 && unicode.IsUpper(r) {
				prev := word[len(word)-1]
				nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					flush()
				}
			}
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

var stopWords = wordSet("the", "and", "for", "with", "from", "into", "this", "that", "when", "then", "than", "have", "has",
	"should", "would", "could", "will", "make", "also", "just", "some", "more", "only", "their", "there", "these",
	"those", "what", "which", "while", "where", "about", "after", "before", "over", "under", "using", "used", "use",
	"all", "new", "get", "set", "not", "are", "was", "were", "been", "being", "its", "our", "your", "you", "can",
	"test", "tests", "func", "function", "return", "const", "var", "let", "def", "class", "type", "int", "int64",
	"float64", "string", "bool", "true", "false", "null", "nil", "none", "self", "err", "ctx", "instead", "rather",
	"decided", "decide", "let's", "we'll", "go", "want", "need", "please", "now", "any", "each", "every", "keep")

// topicWords picks the content words of a sentence.
func topicWords(text string, n int) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) {
		w = strings.Trim(w, "-")
		if len(w) >= 4 && !stopWords[w] {
			out = append(out, w)
		}
	}
	return dedupe(out, n)
}

// identifiersIn returns the identifiers of a search pattern.
func identifiersIn(pattern string, n int) []string {
	var out []string
	for _, f := range strings.FieldsFunc(pattern, func(r rune) bool { return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') }) {
		if len(f) >= 3 && !stopWords[strings.ToLower(f)] {
			out = append(out, f)
		}
	}
	return dedupe(out, n)
}

func wordSet(items ...string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, it := range items {
		m[it] = true
	}
	return m
}

func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	switch {
	case strings.HasSuffix(what, "ch"), strings.HasSuffix(what, "s"):
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// nameList renders up to n names: "a", "a and b", "a, b and 3 more".
func nameList(names []string, n int) string { return listMore(names, n, len(names)) }

// listMore renders up to n of items, saying how many of total are left.
func listMore(items []string, n, total int) string {
	shown := firstN(items, n)
	more := total - len(shown)
	switch {
	case len(shown) == 0:
		return ""
	case more > 0:
		return strings.Join(shown, ", ") + fmt.Sprintf(" and %d more", more)
	case len(shown) == 1:
		return shown[0]
	}
	return strings.Join(shown[:len(shown)-1], ", ") + " and " + shown[len(shown)-1]
}

func changeList(added, removed []string) string {
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "adds "+nameList(added, 4))
	}
	if len(removed) > 0 {
		parts = append(parts, "removes "+nameList(removed, 4))
	}
	return strings.Join(parts, "; ")
}

func firstN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func inQuotes(s string) string { return `"` + clip(oneLine(s), 60) + `"` }

// squash collapses runs of white space into one space.
func squash(s string) string {
	if !strings.ContainsAny(s, "\t\n\r") && !strings.Contains(s, "  ") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return squash(s)
}

func asSentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

func lineCount(s string) int {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// firstMeaningfulLine is the first line of text with letters or digits in
// it, clipped.
func firstMeaningfulLine(s string) string {
	for line := range strings.Lines(headTail(s)) {
		line = strings.TrimSpace(line)
		if strings.IndexFunc(line, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			return clip(squash(line), 120)
		}
	}
	return ""
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func dedupe(items []string, n int) []string {
	var out []string
	var seen map[string]bool
	if len(items) > 16 {
		seen = make(map[string]bool, len(items))
	}
	for _, it := range items {
		if it == "" || seen[it] || seen == nil && slices.Contains(out, it) {
			continue
		}
		if seen != nil {
			seen[it] = true
		}
		out = append(out, it)
		if len(out) == n {
			break
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
