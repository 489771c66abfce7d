package observer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// Claude is the memory agent that runs the headless Claude Code CLI as an
// observer: one `claude -p` process per run, stream-json in and out, no
// tools. It is safe for concurrent use.
type Claude struct {
	spending
	o      Options
	system string
}

// NewClaude makes the claude agent. It needs o.WorkDir; the budget spent
// so far is read from o.StateDir.
func NewClaude(o Options) (*Claude, error) {
	o.defaults()
	if o.WorkDir == "" {
		return nil, fmt.Errorf("%w: the claude agent needs a working folder", ErrConfig)
	}
	if o.Model == "" {
		o.Model = DefaultClaudeModel
	}
	var path string
	if o.StateDir != "" {
		path = filepath.Join(o.StateDir, "claude-budget.json")
	}
	l, err := openLedger(path, o.Budget, o.Now)
	if err != nil {
		return nil, err
	}
	g := &gate{name: KindClaude, now: o.Now, cooldown: o.Cooldown}
	return &Claude{spending: spending{ledger: l, gate: g}, o: o, system: systemPrompt(o.ExtraSystemPrompt)}, nil
}

// Name implements memory.Agent.
func (c *Claude) Name() string { return KindClaude }

// Run implements memory.Agent. A fresh memory session (in.NewID) runs with
// --session-id in.NewID, a continued one with --resume in.ResumeID; the
// CLI's system/init message must name that same id. A resume the CLI
// refuses returns an error wrapping memory.ErrResumeRefused. A spent
// budget or an unusable CLI (missing, not logged in, rate-limited) returns
// an error wrapping memory.ErrFallback.
func (c *Claude) Run(ctx context.Context, in memory.AgentInput) (memory.AgentOutput, error) {
	id, resume, err := c.admit("claude", in)
	if err != nil {
		return memory.AgentOutput{}, err
	}
	csid := in.Session.ContentSessionID
	bin, err := c.binary()
	if err != nil {
		return memory.AgentOutput{}, c.gate.down("claude binary not found: " + err.Error())
	}
	for _, dir := range []string{c.o.WorkDir, c.o.ConfigDir} {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return memory.AgentOutput{}, fmt.Errorf("claude: %w", err)
		}
	}

	var stdin bytes.Buffer
	for _, ev := range in.Events {
		line, err := json.Marshal(userMessage{Type: "user", Message: userContent{Role: "user", Content: prompt(in, ev, !resume)}})
		if err != nil {
			return memory.AgentOutput{}, fmt.Errorf("claude: %w", err)
		}
		stdin.Write(line)
		stdin.WriteByte('\n')
	}
	args := c.args(id, resume)
	log, err := openStreamLog(c.o.AgentsDir, id, c.o.Now)
	if err != nil {
		c.o.Logger.Warn("claude agent stream log", "memorySession", id, "err", err)
	}
	defer func() {
		if err := log.Close(); err != nil {
			c.o.Logger.Warn("claude agent stream log", "memorySession", id, "err", err)
		}
	}()
	log.write("exec", c.describe(bin, args))
	log.write("stdin", stdin.String())

	run, err := c.exec(ctx, bin, args, stdin.Bytes(), log)
	if tokens := run.tokens(); tokens > 0 {
		if err := c.ledger.add(csid, tokens); err != nil {
			c.o.Logger.Warn("claude agent budget", "err", err)
		}
	}
	if err != nil {
		return memory.AgentOutput{}, err
	}
	if err := c.failure(run, id, resume); err != nil {
		return memory.AgentOutput{}, err
	}
	out, err := collect(ctx, in, id, run.msgs)
	if err != nil {
		return memory.AgentOutput{}, fmt.Errorf("claude: %w", err)
	}
	c.gate.ok()
	return out, nil
}

// userMessage is one line of --input-format stream-json.
type userMessage struct {
	Type    string      `json:"type"`
	Message userContent `json:"message"`
}

type userContent struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (c *Claude) args(id string, resume bool) []string {
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--tools", "", "--strict-mcp-config", "--disable-slash-commands",
		"--system-prompt", c.system, "--model", c.o.Model, "--effort", "low"}
	if resume {
		return append(args, "--resume", id)
	}
	return append(args, "--session-id", id)
}

// describe is the command line for the stream log, the system prompt
// abbreviated.
func (c *Claude) describe(bin string, args []string) string {
	parts := []string{bin}
	for i, a := range args {
		switch {
		case i > 0 && args[i-1] == "--system-prompt":
			a = fmt.Sprintf("<%d characters>", len(a))
		case a == "" || strings.ContainsAny(a, " \t\n'\""):
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

func (c *Claude) binary() (string, error) {
	if c.o.Binary == "" {
		return exec.LookPath("claude")
	}
	fi, err := os.Stat(c.o.Binary)
	if err != nil {
		return "", err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", c.o.Binary)
	}
	return c.o.Binary, nil
}

// sessionVars tie a process to the Claude Code session that started it; a
// daemon started from a hook inherits them, and the observer must not.
var sessionVars = []string{
	"AI_AGENT", "CLAUDECODE", "CLAUDE_CODE_CHILD_NOTES_DIR", "CLAUDE_CODE_CHILD_SESSION",
	"CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_MESSAGING_SOCKET", "CLAUDE_CODE_MESSAGING_TOKEN",
	"CLAUDE_CODE_SESSION_ATTENDED", "CLAUDE_CODE_SESSION_ID", "CLAUDE_EFFORT", "CLAUDE_ENV_FILE",
	"CLAUDE_PID", "CLAUDE_PROJECT_DIR",
}

// env is the CLI's environment: the base without sessionVars, quiet
// defaults where the base says nothing, MNEMO_OBSERVER=1 so that Mnemo's
// hooks can tell the observer apart, and the agent's own
// CLAUDE_CONFIG_DIR.
func (c *Claude) env() []string {
	base := c.o.Env
	if base == nil {
		base = os.Environ()
	}
	drop := map[string]bool{"MNEMO_OBSERVER": true}
	for _, v := range sessionVars {
		drop[v] = true
	}
	if c.o.ConfigDir != "" {
		drop["CLAUDE_CONFIG_DIR"] = true
	}
	var env []string
	have := map[string]bool{}
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
			have[k] = true
		}
	}
	for _, kv := range []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1", "DISABLE_AUTOUPDATER=1"} {
		if k, _, _ := strings.Cut(kv, "="); !have[k] {
			env = append(env, kv)
		}
	}
	env = append(env, "MNEMO_OBSERVER=1")
	if c.o.ConfigDir != "" {
		env = append(env, "CLAUDE_CONFIG_DIR="+c.o.ConfigDir)
	}
	return env
}

// runResult is a finished CLI process.
type runResult struct {
	exit   int
	stderr string
	msgs   []streamMsg
}

func (r runResult) tokens() int64 {
	var n int64
	for _, m := range r.msgs {
		if m.Type == "result" && m.Usage != nil {
			n += m.Usage.total()
		}
	}
	return n
}

// exec runs the CLI once and reads its stream. It fails only when the CLI
// cannot start or does not finish in time; an exit status is in the
// result.
func (c *Claude) exec(ctx context.Context, bin string, args []string, stdin []byte, log *streamLog) (runResult, error) {
	rctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, bin, args...)
	cmd.Dir = c.o.WorkDir
	cmd.Env = c.env()
	cmd.Stdin = bytes.NewReader(stdin)
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return runResult{}, fmt.Errorf("claude: %w", err)
	}
	began := c.o.Now()
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return runResult{}, c.gate.down("cannot run claude: " + err.Error())
		}
		return runResult{}, fmt.Errorf("claude: start: %w", err)
	}
	var (
		res   runResult
		abort error // set when the stream shows the run cannot succeed
	)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	for sc.Scan() {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		log.write("stdout", string(raw))
		var m streamMsg
		if err := json.Unmarshal(raw, &m); err != nil {
			c.o.Logger.Warn("claude agent: unreadable stream line", "err", err)
			continue
		}
		res.msgs = append(res.msgs, m)
		if m.Type == "system" && m.Subtype == "api_retry" && abort == nil {
			if abort = c.retrying(&m); abort != nil {
				cancel() // kills the CLI's process group
			}
		}
	}
	scanErr := sc.Err()
	if scanErr != nil {
		_, _ = io.Copy(io.Discard, stdout) // let the CLI finish writing
	}
	err = cmd.Wait()
	killGroup(cmd)
	res.stderr = stderr.String()
	if res.stderr != "" {
		log.write("stderr", res.stderr)
	}
	var exitErr *exec.ExitError
	switch {
	case abort != nil:
		log.write("exit", "stopped: "+abort.Error())
		return res, abort
	case ctx.Err() != nil:
		log.write("exit", "canceled")
		return res, ctx.Err()
	case rctx.Err() != nil:
		log.write("exit", fmt.Sprintf("killed after %v", c.o.Timeout))
		return res, fmt.Errorf("claude: no answer within %v", c.o.Timeout)
	case errors.As(err, &exitErr):
		res.exit = exitErr.ExitCode()
	case err != nil:
		return res, fmt.Errorf("claude: %w", err)
	case scanErr != nil:
		return res, fmt.Errorf("claude: read stream: %w", scanErr)
	}
	log.write("exit", fmt.Sprintf("%d after %.2fs", res.exit, c.o.Now().Sub(began).Seconds()))
	return res, nil
}

// maxAPIRetries is how many times the CLI may retry a failing API request
// before the run gives up; the CLI itself would try ten times over minutes.
const maxAPIRetries = 3

// retrying judges a system/api_retry message: a refused key or a rate
// limit stops the run at once and declines (the CLI would retry for
// minutes), other API errors stop it after maxAPIRetries attempts.
func (c *Claude) retrying(m *streamMsg) error {
	status := 0
	if m.ErrorStatus != nil {
		status = *m.ErrorStatus
	}
	why := strings.TrimSpace(fmt.Sprintf("%d %s", status, rawText(m.Error)))
	switch {
	case status == 401 || status == 403:
		return c.gate.down("claude is not logged in: the API answered " + why)
	case status == 429:
		return c.gate.down("claude is rate-limited: the API answered " + why)
	case m.Attempt >= maxAPIRetries:
		return fmt.Errorf("claude: the API keeps failing: %s (attempt %d)", why, m.Attempt)
	}
	return nil
}

// Phrases of the CLI's failures.
var (
	refusedPhrases = []string{
		"No conversation found with session ID", // an unknown uuid
		"does not match any session title",      // not a uuid, nor a session's title
	}
	authPhrases = []string{
		"Invalid API key", "Please run /login", "authentication_error", "OAuth token has expired",
		"Not logged in", "Credit balance is too low",
	}
	limitPhrases = []string{"rate_limit_error", "usage limit", "Usage limit"}
)

// failure classifies an unsuccessful run: nil when the CLI exited 0 and
// every result succeeded.
func (c *Claude) failure(run runResult, id string, resume bool) error {
	var problems []string
	status := 0
	for _, m := range run.msgs {
		if m.Type != "result" || !m.IsError {
			continue
		}
		problems = append(problems, rawText(m.Errors), rawText(m.Result))
		if m.APIErrorStatus != nil {
			status = *m.APIErrorStatus
		}
	}
	if run.exit == 0 && len(problems) == 0 {
		return nil
	}
	problems = append(problems, run.stderr)
	all := strings.Join(problems, "\n")
	brief := clipLine(strings.Join(strings.Fields(all), " "), 300)
	has := func(phrases []string) bool {
		for _, p := range phrases {
			if strings.Contains(all, p) {
				return true
			}
		}
		return false
	}
	switch {
	case resume && has(refusedPhrases):
		return fmt.Errorf("claude: resume %s: %w", id, memory.ErrResumeRefused)
	case status == 401 || status == 403 || has(authPhrases):
		return c.gate.down("claude is not logged in: " + brief)
	case status == 429 || has(limitPhrases):
		return c.gate.down("claude is rate-limited: " + brief)
	}
	return fmt.Errorf("claude: exit %d: %s", run.exit, brief)
}

// streamMsg is the part of a stream-json line the agent reads.
type streamMsg struct {
	Type            string  `json:"type"`
	Subtype         string  `json:"subtype"`
	SessionID       string  `json:"session_id"`
	UUID            string  `json:"uuid"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	Message         *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	// api_retry
	Attempt     int             `json:"attempt"`
	ErrorStatus *int            `json:"error_status"`
	Error       json.RawMessage `json:"error"`
	// result
	IsError        bool            `json:"is_error"`
	Result         json.RawMessage `json:"result"`
	Errors         json.RawMessage `json:"errors"`
	APIErrorStatus *int            `json:"api_error_status"`
	Usage          *usage          `json:"usage"`
}

// usage is the token accounting of a result line: that turn's requests.
type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

func (u usage) total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// text is the text blocks of an assistant message.
func (m *streamMsg) text() string {
	if m.Message == nil {
		return ""
	}
	var s string
	if json.Unmarshal(m.Message.Content, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Message.Content, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// rawText renders a JSON string, or a list of them, as text.
func rawText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		parts := make([]string, 0, len(list))
		for _, item := range list {
			parts = append(parts, rawText(item))
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

// collect reads the stream of a successful run: one result line closes the
// reply to each event, in order. Every system/init line must carry id.
func collect(ctx context.Context, in memory.AgentInput, id string, msgs []streamMsg) (memory.AgentOutput, error) {
	col := newCollector(in, id)
	var (
		reply strings.Builder
		turn  int
		inits int
		last  string
	)
	for i := range msgs {
		m := &msgs[i]
		switch m.Type {
		case "system":
			if m.Subtype != "init" {
				continue
			}
			inits++
			if m.SessionID != id {
				return memory.AgentOutput{}, fmt.Errorf("the CLI ran under session %q, not %q", m.SessionID, id)
			}
		case "assistant":
			if m.ParentToolUseID != nil && *m.ParentToolUseID != "" {
				continue
			}
			if t := m.text(); t != "" {
				reply.WriteString(t)
				reply.WriteByte('\n')
				last = m.UUID
			}
		case "result":
			text := reply.String()
			if strings.TrimSpace(text) == "" {
				text = rawText(m.Result)
			}
			if turn < len(in.Events) {
				col.add(ctx, in.Events[turn], text)
			}
			turn++
			reply.Reset()
		}
	}
	if inits == 0 {
		return memory.AgentOutput{}, errors.New("no system/init message in the stream")
	}
	if turn < len(in.Events) {
		return memory.AgentOutput{}, fmt.Errorf("answered %d of %d events", turn, len(in.Events))
	}
	col.out.AssistantUUID = last
	return col.out, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
