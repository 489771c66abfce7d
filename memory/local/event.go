package local

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/mnemo-dev/mnemo/memory"
)

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
	// RunInBackground is Claude Code's Bash option: the command is
	// started and left running, its outcome not yet known.
	RunInBackground bool `json:"run_in_background"`
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
	Stdout      string `json:"stdout"`
	Stderr      string `json:"stderr"`
	Interrupted bool   `json:"interrupted"`
	Error       string `json:"error"`
	IsError     bool   `json:"isError"`
	ExitCode    *int   `json:"exitCode"`
	// ExitUnknown marks a command's output from a host that does not
	// say how the command ended (Codex CLI, VS Code, Cursor give the
	// text alone): whether it failed is read from the output.
	ExitUnknown bool `json:"exitUnknown"`
	// ReturnCodeInterpretation is Claude Code's reading of a non-zero
	// exit that is no error ("No matches found"), BackgroundTaskID the
	// id of a command it left running in the background.
	ReturnCodeInterpretation string   `json:"returnCodeInterpretation"`
	BackgroundTaskID         string   `json:"backgroundTaskId"`
	Mode                     string   `json:"mode"`
	Filenames                []string `json:"filenames"`
	NumFiles                 int      `json:"numFiles"`
	NumLines                 int      `json:"numLines"`
	NumMatches               int      `json:"numMatches"`
	Status                   string   `json:"status"`
	Code                     int      `json:"code"`
	Result                   string   `json:"result"`
	File                     struct {
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
	// rawOutputRE finds a command's output fields in an oversized response
	// stored as a clipped string, the last one cut short.
	rawOutputRE = regexp.MustCompile(`"(stdout|stderr|error)"\s*:\s*"((?:[^"\\]|\\.)*)`)
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
		if o, ok := rawOutput(t.outText); ok {
			// An oversized response was stored as a clipped string: its
			// output is read from its text, not shown as JSON.
			t.out, t.outText = o, ""
		}
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

// rawOutput reads a command's output (stdout, stderr, error) from text
// that is a JSON object, whole or clipped; ok is false when text is not
// one or holds none of them.
func rawOutput(text string) (out toolOutput, ok bool) {
	if firstByte([]byte(text)) != '{' {
		return out, false
	}
	if json.Unmarshal([]byte(text), &out) != nil {
		out = toolOutput{}
		for _, m := range rawOutputRE.FindAllStringSubmatch(text, -1) {
			v := m[2]
			if i := strings.IndexByte(v, '\n'); i >= 0 {
				v = v[:i] // where the clip marked its cut
			}
			s, err := strconv.Unquote(`"` + v + `"`)
			if err != nil { // an escape the clip cut in two
				s, err = strconv.Unquote(`"` + strings.TrimSuffix(v, `\`) + `"`)
			}
			if err != nil {
				s = v
			}
			switch m[1] {
			case "stdout":
				out.Stdout = s
			case "stderr":
				out.Stderr = s
			case "error":
				out.Error = s
			}
		}
	}
	return out, out.Stdout != "" || out.Stderr != "" || out.Error != ""
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
