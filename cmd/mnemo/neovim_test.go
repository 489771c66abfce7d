package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// Neovim's built-in LSP client against the real binary: a headless nvim
// starts `mnemo serve --stdio` (forwarding to the daemon it starts), edits
// the body of a function and writes the file twice within the save window,
// then stops the client. The one observation of the two writes names the
// function and the identifiers the change added, and a search for one of
// them finds it. Skipped where nvim is not installed (apt-get install
// neovim; .ci/run installs it).
func TestNeovimSaveThatChangesAFunctionIsRememberedByTheFunctionAndTheIdentifierItAdded(t *testing.T) {
	t.Parallel()
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not installed (apt-get install neovim)")
	}
	env := newTestEnv(t)
	t.Cleanup(func() { stopDaemon(t, env) })
	cart := "def total(items):\n    return sum(i.price for i in items)\n\n\ndef checkout(cart):\n    return cart.total()\n"
	if err := os.WriteFile(filepath.Join(env.project, "cart.py"), []byte(cart), 0o644); err != nil {
		t.Fatal(err)
	}
	// A real repository (newTestEnv's .git is only a marker).
	if err := os.RemoveAll(filepath.Join(env.project, ".git")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "start"}} {
		if out, err := exec.Command("git", append([]string{"-C", env.project}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	script, err := filepath.Abs(filepath.Join("testdata", "neovim", "save.lua"))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-n", "-c", "luafile "+script)
	cmd.Dir = env.project
	cmd.Env = env.environ("MNEMO_NVIM_BIN="+mnemoBin, "MNEMO_NVIM_ROOT="+env.project,
		"XDG_CONFIG_HOME="+filepath.Join(env.userHome, ".config"), "XDG_STATE_HOME="+filepath.Join(env.userHome, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(env.userHome, ".cache"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, out.String())
	}
	if b, err := os.ReadFile(filepath.Join(env.project, "cart.py")); err != nil || !strings.Contains(string(b), "dropEmptyLines") {
		t.Fatalf("nvim did not write cart.py (%v): %s\n%s", err, b, out.String())
	}

	// The daemon compresses in the background: search until the save is found.
	var hits []memory.Hit
	deadline := time.Now().Add(30 * time.Second)
	for {
		var res memory.SearchResult
		if err := json.Unmarshal([]byte(mnemo(t, env, "search", "--json", "--project", "billing-api", "applyLoyaltyDiscount")), &res); err != nil {
			t.Fatal(err)
		}
		hits = res.Hits
		if len(hits) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(hits) == 0 {
		t.Fatalf("searching applyLoyaltyDiscount finds nothing; nvim said:\n%s", out.String())
	}
	var got memory.ObservationsResult
	if err := json.Unmarshal([]byte(mnemo(t, env, "get", "--json", strconv.FormatUint(hits[0].ID, 10))), &got); err != nil {
		t.Fatal(err)
	}
	o := got.Observations[0]
	if o.Tool != "Edit" || o.Source != memory.SourceEditor || !strings.Contains(o.Title, "total in cart.py") || !slices.Contains(o.Facts, "symbols: total") {
		t.Errorf("observation #%d: %s from %s, %q, facts %q; want an Edit from the editor naming total", o.ID, o.Tool, o.Source, o.Title, o.Facts)
	}
	for _, id := range []string{"applyLoyaltyDiscount", "dropEmptyLines"} {
		if !strings.Contains(o.Evidence, id) {
			t.Errorf("evidence %q lacks %s, which the change added", o.Evidence, id)
		}
	}
	// The two writes are one observation, in Neovim's session, which the
	// client's shutdown completed.
	var all memory.SearchResult
	if err := json.Unmarshal([]byte(mnemo(t, env, "search", "--json", "--project", "billing-api", "--file", "cart.py")), &all); err != nil {
		t.Fatal(err)
	}
	edits := 0
	for _, h := range all.Hits {
		if strings.HasPrefix(h.Title, "Changed") {
			edits++
		}
	}
	if edits != 1 {
		t.Errorf("%d observations of edits of cart.py, want 1: %+v", edits, all.Hits)
	}
	var sessions memory.SessionsResult
	if err := json.Unmarshal([]byte(mnemo(t, env, "sessions", "--json")), &sessions); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(sessions.Sessions, func(s memory.Session) bool { return s.ContentSessionID == "nvim-test" })
	if i < 0 || sessions.Sessions[i].Platform != "neovim" || sessions.Sessions[i].Status != memory.StatusCompleted || o.ContentSessionID != "nvim-test" {
		t.Errorf("sessions %+v: want nvim-test, neovim, completed, holding the observation", sessions.Sessions)
	}
}
