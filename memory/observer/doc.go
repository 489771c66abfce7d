// Package observer holds the memory agents that ask a language model to
// write the observations: Claude, the headless Claude Code CLI run as an
// observer, and OpenAICompatible, a local chat-completions endpoint (Ollama,
// LM Studio).
//
// Both implement memory.Agent. They share the prompt (the tool event with
// its input and output capped head and tail at MaxFieldChars, and the
// turn's request), the tolerant parser of the <observation> and <summary>
// XML the model answers with (Parse), and a hard token budget per content
// session and per day (Budget), counted from the usage the model reports
// and kept under Options.StateDir across restarts. Past the budget, or while the model cannot
// be reached, a run returns an error wrapping memory.ErrFallback and the
// local agent makes the observations; AgentStatus says why.
//
// Claude keeps the session-ID rules of docs/architecture.md §5: a fresh memory
// session is started with --session-id set to the worker's new id and
// checked against the CLI's system/init message; a resume uses --resume and
// a refused one ("No conversation found with session ID") returns
// memory.ErrResumeRefused; every line the CLI reads and writes is appended,
// timestamped, to <AgentsDir>/<memorySessionId>/stream.log; and each run
// reports the uuid of its last assistant text message. The CLI runs with no
// tools, in its own working folder and with its own CLAUDE_CONFIG_DIR, so
// its sessions never show in the user's `claude --resume` list and the
// user's hooks (Mnemo's among them) never fire for it.
//
// Check tells `mnemo doctor` whether the chosen agent can run.
package observer
