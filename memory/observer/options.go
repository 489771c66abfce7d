package observer

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/local"
)

// The kinds of memory agent, as a setting or MNEMO_AGENT names them.
const (
	KindLocal  = "local"
	KindClaude = "claude"
	KindOpenAI = "openai-compatible"
)

// Defaults for Options.
const (
	// DefaultClaudeModel is the model the claude agent asks for when
	// Options.Model is empty: the small one, since an observer runs on
	// every tool call.
	DefaultClaudeModel = "haiku"
	// DefaultTimeout bounds one agent run.
	DefaultTimeout = 3 * time.Minute
	// DefaultCooldown is how long an agent whose model could not be reached
	// declines at once, without trying again.
	DefaultCooldown = time.Minute
)

// Errors of this package. The two declining errors wrap memory.ErrFallback:
// the worker lets the local agent make the observations instead.
var (
	// ErrBudgetSpent means the token budget of the day or of the session
	// is spent.
	ErrBudgetSpent = fmt.Errorf("token budget spent: %w", memory.ErrFallback)
	// ErrUnavailable means the model cannot be reached: the claude binary
	// is missing or not logged in, the endpoint is down or refuses.
	ErrUnavailable = fmt.Errorf("model unavailable: %w", memory.ErrFallback)
	// ErrConfig marks options an agent cannot run with.
	ErrConfig = errors.New("bad agent options")
	// ErrNoCredentials is what Check returns when the claude agent's own
	// configuration folder holds no login and the environment names no
	// key or token.
	ErrNoCredentials = errors.New("the claude agent has no credentials")
)

// Budget bounds the tokens an agent may spend. Tokens are counted from the
// usage the model reports: input, output, cache creation and cache reads.
// A run is refused once a bound is reached; the run that crosses it still
// counts, so the spend may pass a bound by one run. Zero means no bound.
type Budget struct {
	PerSession int64 // per content session, over its whole life
	PerDay     int64 // per calendar day, local time, all sessions together
}

// Options configure an agent. The fields under "claude" are for Claude,
// those under "openai-compatible" for OpenAICompatible; the rest are shared.
type Options struct {
	// claude
	//
	// Binary is the claude CLI; looked up on PATH at each run when empty.
	Binary string
	// WorkDir is the CLI's working folder, its own (for example
	// <MNEMO_HOME>/agents/claude-cwd); created when missing. Required.
	WorkDir string
	// ConfigDir becomes the CLI's CLAUDE_CONFIG_DIR, so that the observer's
	// sessions stay out of the user's `claude --resume` list and the user's
	// settings and hooks do not apply. Empty keeps the user's. Its login is
	// its own: give the CLI ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN in
	// Env, or log in once with CLAUDE_CONFIG_DIR set to it.
	ConfigDir string
	// Env is the CLI's base environment; os.Environ() when nil. Variables
	// that tie a process to a running Claude Code session (CLAUDECODE,
	// CLAUDE_CODE_SESSION_ID, …) are removed.
	Env []string

	// openai-compatible
	//
	// BaseURL is the endpoint, "http://127.0.0.1:11434" (Ollama) or
	// "http://127.0.0.1:1234/v1" (LM Studio); /v1/chat/completions is
	// appended, without doubling /v1. Required.
	BaseURL string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// HTTPClient makes the requests; a plain client when nil (Timeout
	// bounds each run).
	HTTPClient *http.Client

	// shared
	//
	// Model names the model; DefaultClaudeModel for claude, required for
	// openai-compatible.
	Model string
	// ExtraSystemPrompt is appended to the observer's system prompt.
	ExtraSystemPrompt string
	Budget            Budget
	// StateDir keeps what must survive a restart: the day's spend and, for
	// openai-compatible, each memory session's conversation. Nothing
	// survives when empty.
	StateDir string
	// AgentsDir receives <memorySessionId>/stream.log, the raw lines of
	// every run (rule 7); none when empty. The worker writes
	// conversation.json in the same folder.
	AgentsDir string
	// Timeout bounds one run; DefaultTimeout when 0.
	Timeout time.Duration
	// Cooldown is how long the agent declines at once after it found its
	// model unavailable; DefaultCooldown when 0.
	Cooldown time.Duration
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Cooldown <= 0 {
		o.Cooldown = DefaultCooldown
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// New makes the agent of the given kind: KindLocal, KindClaude or KindOpenAI.
func New(kind string, o Options) (memory.Agent, error) {
	switch kind {
	case KindLocal, "":
		return local.Agent{}, nil
	case KindClaude:
		return NewClaude(o)
	case KindOpenAI:
		return NewOpenAICompatible(o)
	}
	return nil, fmt.Errorf("%w: unknown agent %q (want %s, %s or %s)", ErrConfig, kind, KindLocal, KindClaude, KindOpenAI)
}
