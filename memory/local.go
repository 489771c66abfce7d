package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// LocalAgent is the default memory agent: a deterministic compressor that
// works offline in microseconds. It reads the event itself (tool, input,
// response) and the turn so far, so an edit that follows a failing test is
// a bugfix in that file, not "Edit was used".
type LocalAgent struct{}

// Name implements Agent.
func (LocalAgent) Name() string { return "local" }

// Run implements Agent. The local agent accepts any memory session id: it
// continues ResumeID or adopts NewID.
func (a LocalAgent) Run(ctx context.Context, in AgentInput) (AgentOutput, error) {
	out := AgentOutput{MemorySessionID: in.ResumeID}
	if out.MemorySessionID == "" {
		out.MemorySessionID = in.NewID
	}
	turn := slices.Clone(in.Turn)
	for _, ev := range in.Events {
		switch ev.Kind {
		case EventTool:
			if o, ok := compressTool(ev, in.Request, turn); ok {
				out.Observations = append(out.Observations, o)
				turn = append(turn, o)
			}
		case EventStop:
			s := summarize(ev, in.Request, turn)
			out.Summary = &s
		}
	}
	return out, nil
}

// toolCall is the union of the tool input and response fields the
// compressor reads (Claude Code's shapes and the editor's).
type toolCall struct {
	FilePath    string `json:"file_path"`
	Path        string `json:"path"`
	Pattern     string `json:"pattern"`
	Command     string `json:"command"`
	Description string `json:"description"`
	Content     string `json:"content"`
	OldString   string `json:"old_string"`
	NewString   string `json:"new_string"`
	URL         string `json:"url"`
	Query       string `json:"query"`
	Prompt      string `json:"prompt"`
	Edits       []struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	} `json:"edits"`
}

type toolResult struct {
	Type        string   `json:"type"` // Write: create | update
	Stdout      string   `json:"stdout"`
	Stderr      string   `json:"stderr"`
	Interrupted bool     `json:"interrupted"`
	Error       string   `json:"error"`
	IsError     bool     `json:"isError"`
	ExitCode    *int     `json:"exitCode"`
	Filenames   []string `json:"filenames"`
	NumFiles    int      `json:"numFiles"`
	File        struct {
		FilePath   string `json:"filePath"`
		NumLines   int    `json:"numLines"`
		TotalLines int    `json:"totalLines"`
	} `json:"file"`
}

var exitCodeRE = regexp.MustCompile(`(?i)exit(?:ed with)? code:? (\d+)`)

func compressTool(ev Event, request string, turn []Observation) (Observation, bool) {
	var in toolCall
	var res toolResult
	_ = json.Unmarshal(ev.ToolInput, &in)
	if err := json.Unmarshal(ev.ToolResponse, &res); err != nil {
		// A response that is a plain string (some tools, some clients).
		var s string
		if json.Unmarshal(ev.ToolResponse, &s) == nil {
			res.Stdout = s
		}
	}
	rel := func(p string) string { return relPath(ev.Cwd, p) }
	file := rel(firstNonEmpty(in.FilePath, res.File.FilePath, in.Path))
	o := Observation{Tool: ev.ToolName, Request: request}
	tool := ev.ToolName
	switch {
	case tool == "Read" || tool == "Open" || tool == "NotebookRead":
		if file == "" {
			return o, false
		}
		o.Type = TypeDiscovery
		o.Title = "Read " + file
		o.FilesRead = []string{file}
		if res.File.TotalLines > 0 {
			o.Facts = append(o.Facts, fmt.Sprintf("%s has %d lines", file, res.File.TotalLines))
		}
		if request != "" {
			o.Narrative = fmt.Sprintf("Read %s while working on: %s", file, clip(request, 160))
		}
	case tool == "Grep" || tool == "Glob" || tool == "Search":
		o.Type = TypeDiscovery
		o.Title = fmt.Sprintf("Searched for %q", clip(firstNonEmpty(in.Pattern, in.Query), 60))
		if in.Path != "" {
			o.Title += " in " + rel(in.Path)
		}
		for _, f := range res.Filenames {
			if len(o.FilesRead) == 8 {
				break
			}
			o.FilesRead = append(o.FilesRead, rel(f))
		}
		n := max(res.NumFiles, len(res.Filenames))
		o.Facts = append(o.Facts, fmt.Sprintf("%d matching files", n))
	case tool == "Write" || tool == "Edit" || tool == "MultiEdit" || tool == "NotebookEdit" || tool == "Save":
		if file == "" {
			return o, false
		}
		o.FilesModified = []string{file}
		o.Title, o.Type = editTitle(tool, file, res, turn)
		o.Facts = append(o.Facts, editFacts(in)...)
		o.Concepts = symbolsOf(in.NewString + "\n" + in.Content)
		if failing := lastFailure(turn); failing != nil && o.Type == TypeBugfix {
			o.Narrative = fmt.Sprintf("Changed %s after %s failed", file, failing.Subtitle)
		}
	case tool == "Bash":
		cmd := strings.TrimSpace(in.Command)
		if cmd == "" {
			return o, false
		}
		code, failed := exitStatus(res)
		o.Subtitle = clip(cmd, 120)
		o.Facts = append(o.Facts, "$ "+clip(cmd, 200))
		if failed {
			o.Facts = append(o.Facts, fmt.Sprintf("exit code %d", code))
			if msg := errorLine(res.Stderr + "\n" + res.Error + "\n" + res.Stdout); msg != "" {
				o.Facts = append(o.Facts, "error: "+msg)
			}
		}
		switch {
		case isTestCommand(cmd) && failed:
			o.Type, o.Title = TypeDiscovery, "Tests failed: "+clip(cmd, 80)
		case isTestCommand(cmd):
			o.Type, o.Title = TypeChange, "Tests passed: "+clip(cmd, 80)
			if lastFailure(turn) != nil {
				o.Type = TypeBugfix
			}
		case failed:
			o.Type, o.Title = TypeDiscovery, "Command failed: "+clip(cmd, 80)
		default:
			o.Type, o.Title = TypeChange, "Ran "+clip(firstNonEmpty(in.Description, cmd), 80)
		}
		if in.Description != "" {
			o.Narrative = in.Description
		}
	case tool == "WebFetch" || tool == "WebSearch":
		o.Type = TypeDiscovery
		o.Title = "Looked up " + clip(firstNonEmpty(in.URL, in.Query), 80)
	case tool == "Task" || tool == "Agent":
		o.Type = TypeDiscovery
		o.Title = "Delegated: " + clip(firstNonEmpty(in.Description, in.Prompt), 80)
	default:
		o.Type = TypeChange
		o.Title = "Used " + tool
		if file != "" {
			o.Title += " on " + file
			o.FilesRead = []string{file}
		}
	}
	if decision := decisionIn(request); decision != "" && o.Type != TypeBugfix {
		o.Facts = append(o.Facts, "decision: "+decision)
	}
	o.Concepts = append(o.Concepts, conceptsOf(o.Files()...)...)
	o.Concepts = dedupe(o.Concepts, 8)
	return o, true
}

func editTitle(tool, file string, res toolResult, turn []Observation) (string, string) {
	created := res.Type == "create"
	switch {
	case created:
		return "Created " + file, TypeFeature
	case lastFailure(turn) != nil:
		return "Fixed " + file + " after a failing run", TypeBugfix
	case tool == "Save":
		return "Saved " + file, TypeChange
	default:
		return "Edited " + file, TypeChange
	}
}

func editFacts(in toolCall) []string {
	var facts []string
	add := func(old, new string) {
		if old == "" && new == "" {
			return
		}
		facts = append(facts, fmt.Sprintf("replaced %q with %q", clip(firstLine(old), 60), clip(firstLine(new), 60)))
	}
	add(in.OldString, in.NewString)
	for _, e := range in.Edits {
		if len(facts) == 4 {
			break
		}
		add(e.OldString, e.NewString)
	}
	if in.Content != "" && len(facts) == 0 {
		facts = append(facts, fmt.Sprintf("wrote %d lines", strings.Count(in.Content, "\n")+1))
	}
	return facts
}

// lastFailure returns the turn's most recent failed command, unless a
// passing test run came after it.
func lastFailure(turn []Observation) *Observation {
	for i := len(turn) - 1; i >= 0; i-- {
		t := turn[i].Title
		switch {
		case strings.HasPrefix(t, "Tests failed:") || strings.HasPrefix(t, "Command failed:"):
			return &turn[i]
		case strings.HasPrefix(t, "Tests passed:"):
			return nil
		}
	}
	return nil
}

func exitStatus(res toolResult) (int, bool) {
	if res.ExitCode != nil {
		return *res.ExitCode, *res.ExitCode != 0
	}
	if m := exitCodeRE.FindStringSubmatch(res.Error + "\n" + res.Stderr); m != nil {
		var n int
		fmt.Sscan(m[1], &n)
		return n, n != 0
	}
	if res.Error != "" || res.IsError || res.Interrupted {
		return 1, true
	}
	return 0, false
}

var testCmdRE = regexp.MustCompile(`(^|[\s;&|/])(go test|pytest|npm (run )?test|yarn test|pnpm test|jest|vitest|cargo test|mvn test|gradle test|make test|just test|rspec|phpunit|ctest|tox|test\.sh|run_tests)`)

func isTestCommand(cmd string) bool { return testCmdRE.MatchString(cmd) }

var errLineRE = regexp.MustCompile(`(?i)(error|panic|fail|exception|traceback|undefined|cannot|denied|not found)`)

// errorLine picks the most telling line of a failed command's output: an
// assertion or error with a file:line position first, then any line that
// looks like an error, then the first line.
func errorLine(out string) string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); line != "" && !exitCodeRE.MatchString(line) {
			lines = append(lines, line)
		}
	}
	for _, re := range []*regexp.Regexp{posLineRE, errLineRE} {
		for _, line := range lines {
			if re.MatchString(line) {
				return clip(line, 160)
			}
		}
	}
	if len(lines) > 0 {
		return clip(lines[0], 160)
	}
	return ""
}

var posLineRE = regexp.MustCompile(`[\w./-]+\.\w+:\d+(:\d+)?:? `)

var decisionRE = regexp.MustCompile(`(?i)\b(instead of|decided to|decide to|let's use|we'll use|we will use|go with|switch(?:ed)? to|prefer)\b`)

// decisionIn returns the sentence of a prompt that states a choice, if any.
func decisionIn(request string) string {
	for _, s := range strings.FieldsFunc(request, func(r rune) bool { return r == '.' || r == '\n' || r == '!' }) {
		s = strings.TrimSpace(s)
		if decisionRE.MatchString(s) {
			return clip(s, 160)
		}
	}
	return ""
}

var identRE = regexp.MustCompile(`\b(?:func|def|class|type|interface|const|function|let|var)\s+([A-Za-z_][A-Za-z0-9_]{2,})`)

// symbolsOf names the symbols a piece of new code declares.
func symbolsOf(code string) []string {
	var out []string
	for _, m := range identRE.FindAllStringSubmatch(code, 6) {
		out = append(out, m[1])
	}
	return out
}

// conceptsOf derives topic words from file paths: directory and file stem
// names, minus noise.
func conceptsOf(files ...string) []string {
	var out []string
	for _, f := range files {
		for _, part := range strings.Split(filepath.ToSlash(f), "/") {
			part = strings.TrimSuffix(part, filepath.Ext(part))
			part = strings.ToLower(strings.TrimFunc(part, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
			if len(part) < 3 || noiseDirs[part] {
				continue
			}
			out = append(out, part)
		}
	}
	return out
}

var noiseDirs = map[string]bool{"src": true, "lib": true, "internal": true, "pkg": true, "cmd": true, "app": true, "home": true, "tmp": true, "work": true, "users": true, "root": true, "index": true, "main": true, "test": true, "tests": true}

func summarize(ev Event, request string, turn []Observation) Summary {
	s := Summary{Request: clip(request, 500)}
	var investigated, completed, learned []string
	read, modified := map[string]bool{}, map[string]bool{}
	for _, o := range turn {
		for _, f := range o.FilesRead {
			read[f] = true
		}
		for _, f := range o.FilesModified {
			modified[f] = true
		}
		switch o.Type {
		case TypeDiscovery:
			investigated = append(investigated, o.Title)
			for _, f := range o.Facts {
				if strings.HasPrefix(f, "error: ") {
					learned = append(learned, strings.TrimPrefix(f, "error: "))
				}
			}
		default:
			completed = append(completed, o.Title)
		}
	}
	s.FilesRead = sortedKeys(read)
	s.FilesModified = sortedKeys(modified)
	s.Investigated = joinClip(investigated, 6)
	s.Completed = joinClip(completed, 6)
	s.Learned = joinClip(learned, 4)
	if msg := strings.TrimSpace(ev.LastAssistantMessage); msg != "" {
		s.Notes = clip(msg, 600)
		if s.Completed == "" {
			s.Completed = clip(firstLine(msg), 200)
		}
	}
	if s.Request == "" {
		s.Request = clip(strings.TrimSpace(ev.LastUserMessage), 500)
	}
	if f := lastFailure(turn); f != nil {
		s.NextSteps = "Still failing: " + f.Subtitle
	}
	if len(s.FilesModified) > 0 {
		files := "Files touched: " + strings.Join(s.FilesModified, ", ")
		if s.Notes == "" {
			s.Notes = files
		} else {
			s.Notes = files + "\n" + s.Notes
		}
	}
	return s
}

func relPath(cwd, p string) string {
	if p == "" {
		return ""
	}
	if cwd != "" && filepath.IsAbs(p) {
		if r, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
	}
	return filepath.ToSlash(p)
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
		return s[:i]
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
	return string(r[:n-1]) + "…"
}

func joinClip(items []string, n int) string {
	items = dedupe(items, n)
	return strings.Join(items, "; ")
}

func dedupe(items []string, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, it := range items {
		if it == "" || seen[it] {
			continue
		}
		seen[it] = true
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
