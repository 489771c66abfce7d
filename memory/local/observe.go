package local

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

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
		n.Facts = append(n.Facts, memory.Clip(oneLine(s), maxFact))
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
	case shellTools[0], shellTools[1], shellTools[2]:
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
	if len(o.FilesRead) == 0 && len(o.FilesModified) == 0 && isShellTool(ev.ToolName) {
		o.FilesRead = outputFiles(t, turn)
	}
	o.Title = memory.Clip(oneLine(o.Title), maxTitle)
	o.Subtitle = memory.Clip(oneLine(o.Subtitle), maxSubtitle)
	o.Narrative = memory.Clip(o.Narrative, 600)
	o.Facts = memory.Dedupe(o.Facts, maxFacts)
	var words []string
	words = append(words, Concepts(o.Files()...)...)
	for _, s := range n.symbols {
		words = append(words, identWords(s)...)
	}
	words = slices.DeleteFunc(words, func(c string) bool { return noiseDirs[c] })
	o.Concepts = memory.Dedupe(append(slices.Clone(n.tags), words...), maxConcepts)
	var failure *memory.Observation
	if o.Type == memory.TypeBugfix && len(o.FilesModified) > 0 {
		if f := lastFailure(turn); f != nil {
			failure = f.Observation
		}
	}
	o.Evidence = evidence(t, failure)
	if o.Evidence == "" {
		// Never empty for an event: an observation without evidence is one
		// made before observations kept it (doctor counts those).
		o.Evidence = memory.FirstNonEmpty(strings.Join(o.Files(), " "), ev.ToolName)
	}
	o.ToolUseID = ev.ToolUseID
	return o, true
}

// shellTools are the tools that run a command.
var shellTools = [...]string{"Bash", "run_terminal_cmd", "shell"}

func isShellTool(name string) bool { return slices.Contains(shellTools[:], name) }

func observeRead(n *draft, t *toolEvent) bool {
	file := t.rel(memory.FirstNonEmpty(t.in.FilePath, t.in.NotebookPath, t.out.File.FilePath, t.out.FilePath, t.in.Path))
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
	content := memory.FirstNonEmpty(f.Content, t.content, t.outText)
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
	pattern := unescapeRegexp(memory.FirstNonEmpty(t.in.Pattern, t.in.Query))
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
		n.Title = "Listed " + memory.FirstNonEmpty(t.rel(t.in.Path), "the folder")
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
		n.Subtitle = firstMeaningfulLine(memory.FirstNonEmpty(t.out.Result, t.content, t.outText))
	case t.in.Query != "":
		n.Title = "Searched the web for " + inQuotes(t.in.Query)
		n.Subtitle = firstMeaningfulLine(memory.FirstNonEmpty(t.content, t.outText))
	default:
		return false
	}
	return true
}

func observeAgent(n *draft, t *toolEvent) bool {
	n.Type = memory.TypeDiscovery
	what := memory.FirstNonEmpty(t.in.Description, memory.FirstLine(t.in.Prompt))
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
	n.Narrative = memory.Clip(t.in.Prompt, 300)
	n.Subtitle = firstMeaningfulLine(memory.FirstNonEmpty(t.content, t.outText, t.out.Result))
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
		label = strings.ReplaceAll(memory.FirstNonEmpty(tool, server), "_", " ") + " (" + server + ")"
	}
	lower := strings.ToLower(name)
	for _, w := range []string{"get", "list", "read", "search", "fetch", "find", "query", "view", "show", "lookup"} {
		if strings.Contains(lower, w) {
			n.Type = memory.TypeDiscovery
			break
		}
	}
	n.Title = "Called " + label
	if file := t.rel(memory.FirstNonEmpty(t.in.FilePath, t.in.Path)); file != "" {
		n.Title += " on " + file
		n.FilesRead = []string{file}
	}
	if t.out.IsError || t.out.Error != "" {
		n.Type = memory.TypeDiscovery
		n.fact("error: %s", errorLine(t.output()))
	}
	n.Subtitle = firstMeaningfulLine(memory.FirstNonEmpty(t.content, t.outText, t.out.Result))
	return true
}
