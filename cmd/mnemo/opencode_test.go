package main

import (
	"slices"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/claudecode"
)

// The daemon refreshes the rules files claudecode's installers name
// (cmd/internal/daemon's rules refresher); an installer joined here must
// name none other, or its file would never be refreshed.
func TestEveryInstallersRulesFileIsRefreshed(t *testing.T) {
	for _, in := range installers() {
		if in.Rules == "" {
			continue
		}
		if !slices.ContainsFunc(claudecode.Installers, func(c claudecode.Installer) bool { return c.Rules == in.Rules }) {
			t.Errorf("%s keeps its memory in %s, which the daemon does not refresh", in.Host, in.Rules)
		}
	}
}
