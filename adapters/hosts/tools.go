package hosts

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
)

// toolNames maps every host's tool names onto Claude Code's, the one
// vocabulary the memory agent, search and the eval know: a shell command is
// Bash wherever it ran, a replacement in a file Edit, and so on. A name not
// here (an MCP tool, a host's own tool) is kept as it is.
//
// It is made on first use: the hook links it, and only other hosts' tool
// events read it.
var toolNames = sync.OnceValue(func() map[string]string {
	return map[string]string{
		// A command in a shell.
		"run_shell_command": "Bash", "runTerminalCommand": "Bash", "run_in_terminal": "Bash",
		"run_terminal_cmd": "Bash", "bash": "Bash", "shell": "Bash", "Shell": "Bash", "local_shell": "Bash",
		"exec_command": "Bash", "container.exec": "Bash", "shell_command": "Bash", "powershell": "Bash",
		// A replacement in a file.
		"replace": "Edit", "edit": "Edit", "str_replace": "Edit", "StrReplace": "Edit", "search_replace": "Edit",
		"replace_string_in_file": "Edit", "edit_file": "Edit", "editFiles": "Edit", "insert_edit_into_file": "Edit",
		"apply_patch": "Edit", "patch": "Edit",
		"multiedit":                    "MultiEdit",
		"multi_replace_string_in_file": "MultiEdit",
		// A whole file written.
		"write_file": "Write", "write": "Write", "create": "Write", "createFile": "Write", "create_file": "Write",
		// A file read.
		"read_file": "Read", "read": "Read", "view": "Read", "readFile": "Read", "read_many_files": "Read",
		// Searches.
		"search_file_content": "Grep", "grep_search": "Grep", "grep": "Grep", "codebase_search": "Grep",
		"glob": "Glob", "file_search": "Glob",
		"list_directory": "LS", "list_dir": "LS", "list": "LS", "ls": "LS",
		// The web.
		"web_fetch": "WebFetch", "webfetch": "WebFetch", "fetch_webpage": "WebFetch",
		"google_web_search": "WebSearch", "web_search": "WebSearch", "websearch": "WebSearch",
		// Subagents, and the bookkeeping tools that are not recorded
		// (privacy.DefaultSkipTools).
		"task": "Task", "runSubagent": "Task",
		"todowrite": "TodoWrite", "todoread": "TodoWrite", "write_todos": "TodoWrite", "manage_todo_list": "TodoWrite",
		"update_plan": "TodoWrite", "ask_user": "AskUserQuestion", "question": "AskUserQuestion",
	}
})

// claudeTools reports whether name is one of Claude Code's tools whose
// input canonicalInput renames.
// A host may use these names with its own fields: Cursor's Read {path},
// Write {path, contents}.
func claudeTools(name string) bool {
	switch name {
	case "Read", "Edit", "MultiEdit", "Write", "Bash", "Grep", "Glob", "LS", "WebFetch", "WebSearch":
		return true
	}
	return false
}

// normalizeTool rewrites a tool event of another host in Claude Code's
// vocabulary: its name (toolNames), the fields of its input (file_path,
// old_string, new_string, content, command, pattern, url), keeping every
// other field, and its response in the shape the memory agent reads
// (stdout and exitCode for a command, the text for the rest). A tool
// named as Claude Code's has its input renamed too, and any other tool
// (an MCP tool) keeps its name and input but has its response reshaped.
// Claude Code's own events pass untouched.
func normalizeTool(host string, p *Payload) {
	if host == ClaudeCode || p.ToolName == "" {
		return
	}
	name, known := toolNames()[p.ToolName]
	if !known {
		name = p.ToolName
	}
	p.ToolInput = unquoteJSON(p.ToolInput)
	var (
		in      map[string]any
		created bool
	)
	if (known || claudeTools(name)) && json.Unmarshal(p.ToolInput, &in) == nil && in != nil {
		if name == "Edit" && (p.ToolName == "apply_patch" || p.ToolName == "patch") {
			name, created = patchEdit(in)
		}
		canonicalInput(name, in)
		p.ToolInput = RawJSON(in)
	}
	p.ToolName = name
	p.ToolResponse = canonicalResponse(name, p.ToolResponse)
	if created {
		// A patch's added file: created, as Claude Code's Write says.
		p.ToolResponse = RawJSON(map[string]any{"type": "create", "filePath": in["file_path"]})
	}
}

// canonicalInput renames the fields of a tool's input to Claude Code's.
func canonicalInput(name string, in map[string]any) {
	rename := func(to string, from ...string) {
		if s, ok := in[to].(string); ok && s != "" {
			return
		}
		for _, f := range from {
			if v, ok := in[f]; ok && v != nil {
				in[to] = v
				return
			}
		}
	}
	switch name {
	case "Read", "Edit", "MultiEdit", "Write":
		rename("file_path", "filePath", "absolute_path", "path", "target_file", "file", "filepath")
		if _, ok := in["file_path"]; !ok {
			// VS Code's editFiles lists its files.
			if files, ok := in["files"].([]any); ok && len(files) > 0 {
				in["file_path"] = files[0]
			}
		}
		rename("old_string", "oldString", "old_str")
		rename("new_string", "newString", "new_str")
		rename("content", "file_text", "contents", "code", "text")
	case "Bash":
		switch c := in["command"].(type) {
		case []any:
			in["command"] = ArgvCommand(c)
		case nil:
			rename("command", "cmd", "commandLine", "command_line")
			if c, ok := in["command"].([]any); ok {
				in["command"] = ArgvCommand(c)
			}
		}
	case "Grep", "Glob":
		rename("pattern", "query", "regex", "glob_pattern")
		rename("path", "dir_path", "directory", "dir")
	case "LS":
		rename("path", "dir_path", "directory", "dir")
	case "WebFetch":
		rename("url", "urls", "prompt")
	case "WebSearch":
		rename("query", "q")
	}
}

// ArgvCommand turns a command given as argv into its text: the script of
// `bash -lc SCRIPT` (how Codex runs commands), else the words joined.
func ArgvCommand(argv []any) string {
	words := make([]string, 0, len(argv))
	for _, a := range argv {
		s, _ := a.(string)
		words = append(words, s)
	}
	if n := len(words); n >= 3 && (words[n-2] == "-lc" || words[n-2] == "-c") {
		return words[n-1]
	}
	return strings.Join(words, " ")
}

// patchEdit reads an apply_patch input (the patch envelope of Codex and
// OpenCode, "*** Begin Patch" … "*** End Patch", in input, patch,
// patchText or command) into an edit of the first file it changes: the
// lines it removes (with their context) as old_string, those it leaves as
// new_string; an added file is a Write of its lines. It returns the
// Claude Code tool the patch became, and whether the patch adds its file.
func patchEdit(in map[string]any) (tool string, created bool) {
	var text string
	for _, k := range []string{"input", "patch", "patchText", "command"} {
		switch v := in[k].(type) {
		case string:
			text = v
		case []any:
			for _, a := range v {
				if s, ok := a.(string); ok && strings.Contains(s, "*** Begin Patch") {
					text = s
				}
			}
		}
		if strings.Contains(text, "*** Begin Patch") {
			// The patch becomes the edit's fields; a command field left
			// behind would read as a shell command.
			delete(in, k)
			break
		}
	}
	if text == "" {
		return "Edit", false
	}
	var (
		file, kind string
		old, cur   []string
		files      []any
	)
	for line := range strings.SplitSeq(text, "\n") {
		switch {
		case strings.HasPrefix(line, "*** Update File: "), strings.HasPrefix(line, "*** Add File: "), strings.HasPrefix(line, "*** Delete File: "):
			f := strings.TrimSpace(line[strings.Index(line, ":")+1:])
			files = append(files, f)
			if file == "" {
				file, kind = f, strings.Fields(line)[1]
			}
			continue
		case strings.HasPrefix(line, "*** "), strings.HasPrefix(line, "@@"):
			continue
		}
		if len(files) != 1 {
			continue // only the first file's lines
		}
		switch {
		case strings.HasPrefix(line, "+"):
			cur = append(cur, line[1:])
		case strings.HasPrefix(line, "-"):
			old = append(old, line[1:])
		case strings.HasPrefix(line, " "):
			old = append(old, line[1:])
			cur = append(cur, line[1:])
		}
	}
	in["file_path"] = file
	if len(files) > 1 {
		in["files"] = files
	}
	if kind == "Add" {
		in["content"] = strings.Join(cur, "\n")
		return "Write", true
	}
	in["old_string"] = strings.Join(old, "\n")
	in["new_string"] = strings.Join(cur, "\n")
	return "Edit", false
}

// canonicalResponse reshapes a tool response of another host: Gemini
// CLI's {llmContent, returnDisplay, error}, Copilot CLI's {resultType,
// textResultForLlm} (or snake_case), OpenCode's {title, output,
// metadata}. A command's becomes {stdout, exitCode, isError}; any other
// tool's its text. A response of another shape stays as it is.
func canonicalResponse(name string, raw json.RawMessage) json.RawMessage {
	raw = unquoteJSON(raw)
	var r struct {
		LLMContent      json.RawMessage `json:"llmContent"`
		Error           json.RawMessage `json:"error"`
		ResultType      string          `json:"resultType"`
		ResultTypeSnake string          `json:"result_type"`
		TextResult      *string         `json:"textResultForLlm"`
		TextResultSnake *string         `json:"text_result_for_llm"`
		Output          *string         `json:"output"`
		Metadata        struct {
			Exit *int `json:"exit"`
		} `json:"metadata"`
		ExitCode *int `json:"exit_code"`
	}
	if name == "Bash" && len(raw) > 0 && raw[0] == '"' {
		// A command's output alone (Codex CLI, VS Code, Cursor): the
		// memory agent reads from it whether the command failed.
		var text string
		if json.Unmarshal(raw, &text) == nil {
			return RawJSON(map[string]any{"stdout": text, "exitUnknown": true})
		}
	}
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &r) != nil {
		return raw
	}
	var (
		text    string
		isError bool
		exit    = r.Metadata.Exit
	)
	switch {
	case len(r.LLMContent) > 0:
		// Gemini CLI's: the text the model was given, in an
		// <untrusted_context> element, a command's status on lines of
		// its own ("Exit Code: 1"); a failed command has no error field.
		text = strings.TrimSpace(BlockText(r.LLMContent))
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(text, "<untrusted_context>"), "</untrusted_context>"))
		if e := errorText(r.Error); e != "" {
			text, isError = strings.TrimSpace(text+"\n"+e), true
		}
		if name == "Bash" && exit == nil {
			exit = exitCodeLine(text)
		}
	case r.TextResult != nil || r.TextResultSnake != nil:
		if r.TextResult != nil {
			text = *r.TextResult
		} else {
			text = *r.TextResultSnake
		}
		rt := firstOf(r.ResultType, r.ResultTypeSnake)
		isError = rt != "" && rt != "success"
	case r.Output != nil:
		text = *r.Output
		if exit == nil {
			exit = r.ExitCode
		}
	default:
		return raw
	}
	if name != "Bash" {
		if isError {
			return RawJSON(map[string]any{"error": text, "isError": true})
		}
		return RawJSON(text)
	}
	out := map[string]any{"stdout": text}
	if exit != nil {
		out["exitCode"] = *exit
		isError = isError || *exit != 0
	}
	if isError {
		out["isError"] = true
	}
	return RawJSON(out)
}

// exitCodeLine reads the exit code Gemini CLI's run_shell_command writes
// in its result ("Exit Code: 1", after the command's output, so the last
// such line), nil when there is none ("(none)": the command was killed by
// a signal).
func exitCodeLine(text string) *int {
	var code *int
	for line := range strings.SplitSeq(text, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "Exit Code: "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				code = nil
				continue
			}
			code = &n
		}
	}
	return code
}

// BlockText is a content value as text: a string, or the text of its
// parts ([{text: …}] or {text: …}).
func BlockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Text != "" {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	var one struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &one) == nil && one.Text != "" {
		return one.Text
	}
	return string(raw)
}
