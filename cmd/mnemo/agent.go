package main

import (
	"context"

	"github.com/mnemo-dev/mnemo/memory"
)

// checkAgent says whether the configured memory agent can run.
func checkAgent(ctx context.Context, cfg Config) error {
	return nil
}

// newAgent makes the configured memory agent; nil means the local one.
func newAgent(cfg Config, home string) (memory.Agent, error) {
	return nil, nil
}
