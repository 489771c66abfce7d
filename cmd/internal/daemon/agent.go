package daemon

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/mnemo-dev/mnemo/memory"
	"github.com/mnemo-dev/mnemo/memory/observer"
)

// agentOptions are the memory agent's settings under home: its own
// working and configuration folders (its sessions never show in the user's
// `claude --resume` list), its state (the day's token spend, conversations),
// and the audit trail folder the worker also writes.
func agentOptions(cfg Config, home string, log *slog.Logger) observer.Options {
	agents := filepath.Join(home, "agents")
	return observer.Options{
		Binary:    cfg.ClaudePath,
		WorkDir:   filepath.Join(agents, "claude-cwd"),
		ConfigDir: filepath.Join(agents, "claude-config"),
		BaseURL:   cfg.AgentURL,
		Model:     cfg.AgentModel,
		Budget:    observer.Budget{PerSession: int64(cfg.SessionTokens), PerDay: int64(cfg.DayTokens)},
		StateDir:  filepath.Join(home, "state"),
		AgentsDir: agents,
		Logger:    log,
	}
}

// CheckAgent says whether the configured memory agent can run.
func CheckAgent(ctx context.Context, cfg Config, home string) error {
	if cfg.Agent == observer.KindLocal {
		return nil
	}
	return observer.Check(ctx, cfg.Agent, agentOptions(cfg, home, slog.New(slog.DiscardHandler)))
}

// newAgent makes the configured memory agent; nil means the local one.
func newAgent(cfg Config, home string, log *slog.Logger) (memory.Agent, error) {
	if cfg.Agent == observer.KindLocal {
		return nil, nil
	}
	return observer.New(cfg.Agent, agentOptions(cfg, home, log))
}
