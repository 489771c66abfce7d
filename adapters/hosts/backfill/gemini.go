package backfill

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/hosts"
)

// Gemini CLI keeps each session under its project's folder,
// ~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl (0.61; older
// CLIs wrote one JSON document, session-*.json). The JSON lines file is a
// log of the conversation, replayed as the CLI replays it when it resumes
// a session:
//
//   - the first line is the metadata: sessionId, projectHash (SHA-256 of
//     the project's folder), startTime, kind ("main"; subagents' files
//     are in a folder below chats/ and are not sessions);
//   - a line with an id and a type is a message (user, gemini, info,
//     error, warning); a later line with the same id replaces it where it
//     stood (a gemini message is written again once its tool calls ran);
//   - {"$set": {…}} updates the metadata, and its "messages" replaces
//     them all; {"$rewindTo": id} drops that message and every later one.
//
// The project's folder is not in the file: it is the folder whose hash is
// projectHash, found in ~/.gemini/projects.json (folder → project name)
// or among the workspace folders the session's first message lists.

// geminiDir is $GEMINI_CLI_HOME/.gemini, else ~/.gemini.
func geminiDir() (string, error) {
	home := os.Getenv("GEMINI_CLI_HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("transcripts: %w", err)
		}
	}
	return filepath.Join(home, ".gemini"), nil
}

// geminiTmpRoot is the folder of the projects' folders: ~/.gemini/tmp.
func geminiTmpRoot() (string, error) {
	d, err := geminiDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "tmp"), nil
}

// geminiMessage is one message of a Gemini CLI conversation.
type geminiMessage struct {
	ID        string          `json:"id"`
	Timestamp time.Time       `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		ID            string          `json:"id"`
		Name          string          `json:"name"`
		Args          json.RawMessage `json:"args"`
		Result        json.RawMessage `json:"result"`
		Status        string          `json:"status"`
		Timestamp     time.Time       `json:"timestamp"`
		ResultDisplay json.RawMessage `json:"resultDisplay"`
	} `json:"toolCalls"`
}

// geminiChat is a conversation as the CLI would load it.
type geminiChat struct {
	SessionID   string   `json:"sessionId"`
	ProjectHash string   `json:"projectHash"`
	Kind        string   `json:"kind"`
	Directories []string `json:"directories"`
	Messages    []geminiMessage
}

// geminiRecord is one line of the log, of any kind.
type geminiRecord struct {
	geminiMessage
	SessionID   string          `json:"sessionId"`
	ProjectHash string          `json:"projectHash"`
	Kind        string          `json:"kind"`
	Directories []string        `json:"directories"`
	Set         json.RawMessage `json:"$set"`
	RewindTo    *string         `json:"$rewindTo"`
	Messages    json.RawMessage `json:"messages"` // a legacy document's
}

// loadGeminiChat reads a conversation file, JSON lines or a legacy JSON
// document. Lines that do not parse are skipped, as the CLI skips them.
func loadGeminiChat(path string) (*geminiChat, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	chat := &geminiChat{}
	var order []string
	byID := map[string]geminiMessage{}
	setMessages := func(raw json.RawMessage) {
		var ms []geminiMessage
		if json.Unmarshal(raw, &ms) != nil {
			return
		}
		order, byID = order[:0], map[string]geminiMessage{}
		for _, m := range ms {
			if m.ID != "" && m.Type != "" {
				if _, ok := byID[m.ID]; !ok {
					order = append(order, m.ID)
				}
				byID[m.ID] = m
			}
		}
	}
	meta := func(r geminiRecord) {
		if r.SessionID != "" {
			chat.SessionID = r.SessionID
		}
		if r.ProjectHash != "" {
			chat.ProjectHash = r.ProjectHash
		}
		if r.Kind != "" {
			chat.Kind = r.Kind
		}
		if len(r.Directories) > 0 {
			chat.Directories = r.Directories
		}
	}
	if strings.HasSuffix(path, ".json") {
		var r geminiRecord
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("read transcript: %w", err)
		}
		meta(r)
		setMessages(r.Messages)
	} else {
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			line = bytes.TrimSpace(line)
			var r geminiRecord
			if len(line) == 0 || json.Unmarshal(line, &r) != nil {
				continue
			}
			switch {
			case r.RewindTo != nil:
				for i, id := range order {
					if id == *r.RewindTo {
						for _, gone := range order[i:] {
							delete(byID, gone)
						}
						order = order[:i]
						break
					}
				}
			case len(r.Set) > 0:
				var set geminiRecord
				if json.Unmarshal(r.Set, &set) == nil {
					meta(set)
					if len(set.Messages) > 0 {
						setMessages(set.Messages)
					}
				}
			case r.ID != "" && r.Type != "":
				if _, ok := byID[r.ID]; !ok {
					order = append(order, r.ID)
				}
				byID[r.ID] = r.geminiMessage
			default:
				meta(r)
				if len(r.Messages) > 0 {
					setMessages(r.Messages)
				}
			}
		}
	}
	for _, id := range order {
		chat.Messages = append(chat.Messages, byID[id])
	}
	return chat, nil
}

// readGeminiMeta reads only the metadata line of a JSON lines file.
func readGeminiMeta(path string) (geminiRecord, error) {
	var r geminiRecord
	if strings.HasSuffix(path, ".json") {
		chat, err := loadGeminiChat(path)
		if err != nil {
			return r, err
		}
		r.SessionID, r.ProjectHash, r.Kind, r.Directories = chat.SessionID, chat.ProjectHash, chat.Kind, chat.Directories
		if len(chat.Messages) > 0 {
			r.Content = chat.Messages[0].Content
		}
		return r, nil
	}
	err := headLines(path, 1, func(line []byte) bool {
		_ = json.Unmarshal(line, &r)
		return true
	})
	return r, err
}

// geminiProjects reads ~/.gemini/projects.json: project folder → name.
func geminiProjects(dir string) map[string]string {
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "projects.json")); err == nil {
		_ = json.Unmarshal(b, &reg)
	}
	return reg.Projects
}

// workspaceDirs finds the folders a session's first message lists under
// "Workspace Directories" (the CLI's <session_context>).
var workspaceDirs = regexp.MustCompile(`(?m)^\s*- (/[^\n]*|[A-Za-z]:\\[^\n]*)$`)

// geminiCwd finds the project folder whose SHA-256 is the session's
// projectHash, among the registry's folders, the metadata's directories
// and the folders the first message lists; "" when none is.
func geminiCwd(meta geminiRecord, first json.RawMessage, projects map[string]string) string {
	var candidates []string
	for dir := range projects {
		candidates = append(candidates, dir)
	}
	candidates = append(candidates, meta.Directories...)
	for _, m := range workspaceDirs.FindAllStringSubmatch(geminiText(first), 20) {
		candidates = append(candidates, strings.TrimSuffix(strings.TrimSpace(m[1]), "/"))
	}
	for _, dir := range candidates {
		sum := sha256.Sum256([]byte(dir))
		if hex.EncodeToString(sum[:]) == meta.ProjectHash {
			return dir
		}
	}
	return ""
}

// findGeminiChats lists the sessions under root (<root>/<project>/chats/
// session-*.jsonl or .json; a subagent's file is in a folder below chats/
// and is not a session), oldest first, with their session id and project
// folder.
func findGeminiChats(root string) ([]Transcript, error) {
	projects := geminiProjects(filepath.Dir(root))
	var out []Transcript
	err := walkFiles(root, "session-", []string{".jsonl", ".json"}, func(path string, fi os.FileInfo) error {
		rel, _ := filepath.Rel(root, path)
		if parts := strings.Split(filepath.ToSlash(rel), "/"); len(parts) != 3 || parts[1] != "chats" {
			return nil
		}
		meta, err := readGeminiMeta(path)
		if err != nil {
			return nil // unreadable now: not a session to list
		}
		f := Transcript{Path: path, ModTime: fi.ModTime(), Size: fi.Size()}
		if meta.SessionID != "" && (meta.Kind == "" || meta.Kind == "main") {
			f.SessionID = hosts.Gemini + ":" + meta.SessionID
			first := meta.Content
			if len(first) == 0 {
				first = geminiFirstMessage(path)
			}
			f.Cwd = geminiCwd(meta, first, projects)
		}
		out = append(out, f)
		return nil
	})
	sortTranscripts(out)
	return out, err
}

// geminiFirstMessage is the content of the first message of a JSON lines
// file, read from at most its first 50 lines.
func geminiFirstMessage(path string) json.RawMessage {
	var first json.RawMessage
	_ = headLines(path, 50, func(line []byte) bool {
		var rec struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			Set     struct {
				Messages []struct {
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			} `json:"$set"`
		}
		if json.Unmarshal(line, &rec) != nil {
			return false
		}
		if len(rec.Set.Messages) > 0 {
			first = rec.Set.Messages[0].Content
			return true
		}
		if rec.Type != "" {
			first = rec.Content
			return true
		}
		return false
	})
	return first
}

// geminiText is a message content's text: a string, or its parts' text
// joined (function calls and responses have none).
func geminiText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// hookContext matches the <hook_context> the CLI puts before a prompt
// when a SessionStart hook answered with context.
var hookContext = regexp.MustCompile(`^(?s)\s*<hook_context>.*?</hook_context>\s*`)

// backfillGemini rebuilds the hook calls of one Gemini CLI session, as
// the CLI's hooks gave them: SessionStart before the first prompt,
// BeforeAgent for each prompt, AfterTool for each tool call that ran
// ({llmContent, returnDisplay} as its response), AfterAgent at each
// turn's end (the turn's prompt, and its texts joined by " \n" as
// prompt_response) and SessionEnd ("exit") after the last message. A
// message the CLI wrote itself (<session_context>), a slash command and
// a help request ("/…", "?…") are not prompts; nor are the user messages
// that carry tool results.
func backfillGemini(f Transcript, o Options, emit func(Call) error) (Counts, error) {
	var counts Counts
	chat, err := loadGeminiChat(f.Path)
	if err != nil {
		return counts, err
	}
	if chat.SessionID == "" || (chat.Kind != "" && chat.Kind != "main") {
		return counts, nil
	}
	g := &geminiBackfill{hostReplay: hostReplay{host: hosts.Gemini, sid: chat.SessionID, path: f.Path, cwd: f.Cwd, o: o, emit: emit, counts: &counts}}
	for _, m := range chat.Messages {
		if err := g.message(m); err != nil {
			return counts, err
		}
	}
	if !g.started {
		return counts, nil
	}
	if err := g.endTurn(); err != nil {
		return counts, err
	}
	if err := g.send(&hosts.Wire{HookEventName: "SessionEnd", Reason: "exit"}, g.last); err != nil {
		return counts, err
	}
	counts.Sessions = 1
	return counts, nil
}

type geminiBackfill struct {
	hostReplay
	inTurn         bool
	turnID, prompt string
	texts          []string // the turn's answers so far
	answered       bool     // the turn has a gemini message
	last           string   // the id of the last message, for SessionEnd's key
}

func (g *geminiBackfill) message(m geminiMessage) error {
	if !m.Timestamp.IsZero() {
		g.at = m.Timestamp
	}
	g.last = m.ID
	switch m.Type {
	case "user":
		text := geminiText(m.Content)
		if strings.TrimSpace(text) == "" {
			return nil // tool results
		}
		bare := strings.TrimSpace(hookContext.ReplaceAllString(text, ""))
		if strings.HasPrefix(strings.TrimSpace(text), "<session_context>") || bare == "" || strings.HasPrefix(bare, "/") || strings.HasPrefix(bare, "?") {
			return nil
		}
		if err := g.endTurn(); err != nil {
			return err
		}
		if err := g.start("SessionStart", "startup"); err != nil {
			return err
		}
		g.inTurn, g.turnID, g.prompt, g.texts, g.answered = true, m.ID, text, nil, false
		return g.send(&hosts.Wire{HookEventName: "BeforeAgent", Prompt: text}, m.ID)
	case "gemini":
		if !g.inTurn {
			return nil
		}
		g.answered = true
		if t := strings.TrimSpace(geminiText(m.Content)); t != "" {
			g.texts = append(g.texts, geminiText(m.Content))
		}
		for _, tc := range m.ToolCalls {
			if tc.Status != "success" && tc.Status != "error" {
				continue // cancelled, or never ran: no AfterTool
			}
			if !tc.Timestamp.IsZero() {
				g.at = tc.Timestamp
			}
			err := g.send(&hosts.Wire{
				HookEventName: "AfterTool",
				ToolName:      tc.Name,
				ToolInput:     tc.Args,
				ToolResponse:  geminiToolResponse(tc.Result, tc.ResultDisplay),
			}, tc.ID)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// endTurn sends the open turn's AfterAgent, once the model answered.
func (g *geminiBackfill) endTurn() error {
	if !g.inTurn {
		return nil
	}
	g.inTurn = false
	if !g.answered {
		return nil
	}
	return g.send(&hosts.Wire{HookEventName: "AfterAgent", Prompt: g.prompt, PromptResponse: strings.Join(g.texts, " \n")}, g.turnID)
}

// geminiToolResponse is AfterTool's tool_response of a recorded call: the
// text given to the model (its functionResponse's output, or error) as
// llmContent, and what the CLI displayed as returnDisplay.
func geminiToolResponse(result, display json.RawMessage) json.RawMessage {
	var parts []struct {
		FunctionResponse struct {
			Response struct {
				Output *string `json:"output"`
				Error  *string `json:"error"`
			} `json:"response"`
		} `json:"functionResponse"`
	}
	var llm []string
	if json.Unmarshal(result, &parts) == nil {
		for _, p := range parts {
			switch r := p.FunctionResponse.Response; {
			case r.Output != nil:
				llm = append(llm, *r.Output)
			case r.Error != nil:
				llm = append(llm, *r.Error)
			}
		}
	}
	if len(display) == 0 || string(display) == "null" {
		display = json.RawMessage(`""`)
	}
	return hosts.RawJSON(map[string]any{"llmContent": strings.Join(llm, "\n"), "returnDisplay": display})
}
