package main_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/privacy"
	"github.com/mnemo-dev/mnemo/memory/store"
)

// The privacy audit: a marker inside <private> tags and a fake secret go
// in through every entry point (the hook, the editor's LSP session and the
// files it saves, the MCP server, the command line's import); then the daemon is stopped and not
// one byte under $MNEMO_HOME (the store's value frames inflated: it
// compresses its values), no log and no injected context may hold either. A
// positive control proves the search could find them: a plain marker sent
// the same way at each entry point is found.

// auditWords are this run's markers, made at run time: nothing in the
// repository looks like a secret. Each entry point gets its own private
// marker and secret (the run's, with the entry's name), so that a leak
// names its way in.
type auditWords struct {
	private string // only ever inside <private> tags
	secret  string // a key Redact knows, in the open
	turn    string // only in the tool event and Stop of an entirely private turn
	t       *testing.T
}

func newAuditWords(t *testing.T) auditWords {
	t.Helper()
	rnd := func(n int) string {
		b := make([]byte, n)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(b)
	}
	w := auditWords{
		private: "privmark" + rnd(6),
		// An Anthropic-style key: "sk-ant-" and a body of mixed case and
		// digits.
		secret: "sk-" + "ant-" + "api03-" + strings.ToUpper(rnd(8)) + rnd(12) + "Qx7",
		turn:   "turnmark" + rnd(6),
		t:      t,
	}
	return w
}

// privateOf and secretOf are the private marker and the secret of one
// entry point.
func (w auditWords) privateOf(entry string) string { return w.private + "-" + entry }

func (w auditWords) secretOf(entry string) string {
	s := w.secret + strings.ReplaceAll(entry, "-", "")
	if red, n := privacy.Redact("key: " + s); n == 0 || strings.Contains(red, s) {
		w.t.Fatalf("the fake secret %q is not one Redact knows; the audit would prove nothing", s)
	}
	return s
}

// visible is the positive control of one entry point: a plain marker that
// must be found under $MNEMO_HOME.
func visible(entry string) string { return "vismark-" + entry }

// tainted is a text with the private marker in tags, the secret in the
// open, and the entry point's visible marker.
func (w auditWords) tainted(entry string) string {
	return fmt.Sprintf("%s: error in the retry path <private>%s is the admin pin</private> with key %s", visible(entry), w.privateOf(entry), w.secretOf(entry))
}

func TestPrivacyAudit(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	t.Cleanup(func() { stopDaemon(t, env) })
	w := newAuditWords(t)
	var injected []string // every context Mnemo handed a client
	entries := []string{}

	t.Run("hook", func(t *testing.T) {
		base := map[string]any{"session_id": "audit-hook", "cwd": env.project}
		with := func(kv ...any) map[string]any {
			m := map[string]any{}
			for k, v := range base {
				m[k] = v
			}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		}
		hooks := []struct {
			event   string
			payload map[string]any
		}{
			{"SessionStart", with("source", "startup")},
			{"UserPromptSubmit", with("prompt", w.tainted("hook-prompt"))},
			{"PostToolUse", with("tool_name", "Bash", "tool_use_id", "toolu_audit_1",
				"tool_input", map[string]any{"command": "./retry.sh # " + w.tainted("hook-input"), "description": "Run the retry script"},
				"tool_response", map[string]any{"stdout": "", "stderr": "Error: " + w.tainted("hook-response"), "exitCode": 1, "interrupted": false})},
			{"Stop", with("last_assistant_message", "Done. "+w.tainted("hook-stop"))},
			// An entirely private turn stores nothing: not the prompt, not
			// its tool events, not its summary.
			{"UserPromptSubmit", with("prompt", "<private>"+w.privateOf("hook-private-turn")+" and "+w.secretOf("hook-private-turn")+"</private>")},
			{"PostToolUse", with("tool_name", "Read", "tool_use_id", "toolu_audit_2",
				"tool_input", map[string]any{"file_path": filepath.Join(env.project, w.turn+".go")},
				"tool_response", map[string]any{"type": "text", "file": map[string]any{"filePath": filepath.Join(env.project, w.turn+".go"), "content": w.turn, "numLines": 1}})},
			{"Stop", with("last_assistant_message", "Read "+w.turn)},
			{"SessionEnd", with("reason", "other")},
		}
		for _, h := range hooks {
			r := runHook(env, h.event, h.payload)
			if r.err != nil || r.code != 0 {
				t.Fatalf("%s hook: exit %d, %v", h.event, r.code, r.err)
			}
		}
		entries = append(entries, "hook-prompt", "hook-input", "hook-response", "hook-stop")
	})

	t.Run("editor", func(t *testing.T) {
		c := startServe(t, env)
		res := c.call("initialize", map[string]any{
			"processId": nil, "rootUri": "file://" + env.project, "capabilities": map[string]any{},
			"initializationOptions": map[string]any{"clientKind": "vscode", "protocolVersion": 1, "contentSessionId": "audit-editor", "cwd": env.project},
		})
		injected = append(injected, string(res))
		c.call(memory.MethodUserPromptSubmit, map[string]any{"contentSessionId": "audit-editor", "cwd": env.project, "prompt": w.tainted("editor-prompt")})
		c.call(memory.MethodSave, map[string]any{"text": w.tainted("editor-save"), "cwd": env.project})
		c.call(memory.MethodSave, map[string]any{"title": w.tainted("editor-title"), "text": "the retry path fails", "cwd": env.project})
		// A saved file: what the save changed reaches memory, its private
		// part and its secret never do.
		uri := "file://" + filepath.Join(env.project, "retry.py")
		before := "def retry(op):\n    return op()\n"
		after := "def retry(op):\n    # " + w.tainted("editor-file") + "\n    return op()\n"
		c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "python", "version": 1, "text": before}})
		c.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}, "text": after})
		c.call("shutdown", nil) // remembers the save before the session ends
		entries = append(entries, "editor-prompt", "editor-save", "editor-title", "editor-file")
	})

	t.Run("mcp", func(t *testing.T) {
		m, err := startMCP(env)
		if err != nil {
			t.Skipf("`mnemo mcp` does not serve in this build (%v): the MCP entry point is not audited", err)
		}
		defer m.close()
		res, err := m.call("tools/call", map[string]any{"name": "save_memory", "arguments": map[string]any{"text": w.tainted("mcp-save"), "title": w.tainted("mcp-title")}})
		if err != nil {
			t.Fatalf("save_memory: %v", err)
		}
		injected = append(injected, string(res))
		res, err = m.call("tools/call", map[string]any{"name": "search", "arguments": map[string]any{"query": "retry path"}})
		if err != nil {
			t.Fatalf("search: %v", err)
		}
		injected = append(injected, string(res))
		entries = append(entries, "mcp-save", "mcp-title")
	})

	t.Run("import", func(t *testing.T) {
		now := time.Now().UTC()
		file := filepath.Join(env.root, "audit-import.jsonl")
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		for _, rec := range []map[string]any{
			{"kind": "session", "session": map[string]any{"id": 1, "contentSessionId": "audit-import", "project": "billing-api", "platform": "import", "status": "completed", "createdAt": now}},
			{"kind": "prompt", "prompt": map[string]any{"sessionId": 1, "number": 1, "text": w.tainted("import-prompt"), "time": now}},
			{"kind": "observation", "observation": map[string]any{"sessionId": 1, "project": "billing-api", "type": "bugfix",
				"title": "Fixed the retry path", "narrative": w.tainted("import-narrative"), "facts": []string{w.tainted("import-fact")},
				"evidence": w.tainted("import-evidence"), "filesModified": []string{"retry.go"}, "time": now}},
			{"kind": "summary", "summary": map[string]any{"sessionId": 1, "project": "billing-api", "request": "fix the retry path",
				"learned": w.tainted("import-summary"), "completed": "fixed", "time": now}},
		} {
			if err := enc.Encode(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		mnemo(t, env, "import", file)
		entries = append(entries, "import-prompt", "import-narrative", "import-fact", "import-evidence", "import-summary")
	})

	// The next session's context, through the hook and the command line.
	waitObservations(t, env, 1, 30*time.Second)
	r := runHook(env, "SessionStart", map[string]any{"session_id": "audit-next", "cwd": env.project, "source": "startup"})
	if !strings.Contains(r.stdout, "<mnemo-context") {
		t.Fatalf("SessionStart gave no context: %q", r.stdout)
	}
	injected = append(injected, r.stdout, mnemo(t, env, "context", "--json"), mnemo(t, env, "search", "--json", "retry"))
	stopDaemon(t, env)

	// The words that must not be found: the run's private marker and
	// secret (every entry's begins with them), the private turn's marker.
	forbidden := map[string]string{"private marker": w.private, "secret": w.secret, "private turn's marker": w.turn}
	for i, text := range injected {
		for name, word := range forbidden {
			if strings.Contains(text, word) {
				t.Errorf("context or answer %d handed to a client holds the %s (entry points: %s): %s", i, name, leakedBy(text, word, append([]string{"hook-private-turn"}, entries...)), text)
			}
		}
	}
	// Where each leak came in: every entry, and the private turn.
	sources := append([]string{"hook-private-turn"}, entries...)
	words := []string{w.private, w.secret, w.turn}
	for _, e := range sources {
		words = append(words, visible(e), w.privateOf(e), w.secretOf(e))
	}
	found := scanHome(t, env.home, words)
	for name, word := range forbidden {
		if files := found[word]; len(files) > 0 {
			var by []string
			for _, e := range sources {
				if len(found[w.privateOf(e)]) > 0 || len(found[w.secretOf(e)]) > 0 {
					by = append(by, e)
				}
			}
			t.Errorf("the %s is stored under $MNEMO_HOME, in %s; it came in through: %s", name, strings.Join(files, ", "), strings.Join(by, ", "))
		}
	}
	for _, e := range entries {
		if len(found[visible(e)]) == 0 {
			t.Errorf("control: the plain marker of %s is not found under $MNEMO_HOME, so the scan proves nothing for it", e)
		}
	}
}

// leakedBy names the entry points whose private marker or secret text
// holds.
func leakedBy(text, word string, entries []string) string {
	var by []string
	for _, e := range entries {
		if strings.Contains(text, word+"-"+e) || strings.Contains(text, word+strings.ReplaceAll(e, "-", "")) {
			by = append(by, e)
		}
	}
	if len(by) == 0 {
		return "unknown"
	}
	return strings.Join(by, ", ")
}

// scanHome reads every regular file under home and returns, for each word,
// the files (relative to home) whose bytes contain it, as they are or
// inside a value frame of the store (which compresses its values), inflated.
func scanHome(t *testing.T, home string, words []string) map[string][]string {
	t.Helper()
	found := map[string][]string{}
	var files, frames int
	err := filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(home, path)
		inflated := store.Frames(b)
		frames += len(inflated)
		for _, w := range words {
			in := bytes.Contains(b, []byte(w))
			for _, f := range inflated {
				in = in || bytes.Contains(f, []byte(w))
			}
			if in {
				found[w] = append(found[w], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("nothing under %s to scan", home)
	}
	t.Logf("scanned %d files under $MNEMO_HOME, %d value frames in them", files, frames)
	return found
}

// mcpClient speaks MCP (newline-delimited JSON-RPC) to `mnemo mcp`.
type mcpClient struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	nextID int
}

// startMCP starts `mnemo mcp` and initializes the session; an error means
// the command does not serve MCP in this build.
func startMCP(env *testEnv) (*mcpClient, error) {
	cmd := exec.Command(mnemoBin, "mcp")
	cmd.Env = env.environ()
	cmd.Dir = env.project
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	m := &mcpClient{cmd: cmd, in: in, lines: make(chan []byte, 16)}
	go func() {
		defer close(m.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			m.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	if _, err := m.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "privacy-audit", "version": "1"},
	}); err != nil {
		m.close()
		return nil, fmt.Errorf("%w; stderr: %s", err, strings.TrimSpace(stderr.String()))
	}
	if err := m.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

func (m *mcpClient) send(msg map[string]any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = m.in.Write(append(b, '\n'))
	return err
}

// call sends a request and returns its result; a tool's isError result is
// an error too.
func (m *mcpClient) call(method string, params any) (json.RawMessage, error) {
	m.nextID++
	id := m.nextID
	if err := m.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-m.lines:
			if !ok {
				return nil, fmt.Errorf("%s: the server closed its output", method)
			}
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != id {
				continue
			}
			if msg.Error != nil {
				return nil, fmt.Errorf("%s: %s", method, msg.Error.Message)
			}
			var tool struct {
				IsError bool `json:"isError"`
			}
			if json.Unmarshal(msg.Result, &tool) == nil && tool.IsError {
				return msg.Result, fmt.Errorf("%s: tool error: %s", method, msg.Result)
			}
			return msg.Result, nil
		case <-timeout:
			return nil, fmt.Errorf("%s: no answer in 30s", method)
		}
	}
}

func (m *mcpClient) close() {
	m.in.Close()
	done := make(chan struct{})
	go func() {
		m.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		m.cmd.Process.Kill()
		<-done
	}
}
