//go:build e2e

package e2e_test

// Codex 0.169.0 runs a hooks.json hook only once it is trusted: an
// untrusted hook is skipped without a word in `codex exec` (the TUI asks
// "Hooks need review"). Trust is a `[hooks.state."<key>"]` table with a
// trusted_hash in $CODEX_HOME/config.toml, which the TUI's "Trust all and
// continue" writes. hookTrust computes the same tables, as that TUI did for
// testdata/trust (TestHookTrustMatchesCodex), so that the tests run Mnemo's
// hooks the way a user who trusted them does, without
// --dangerously-bypass-hook-trust.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// hooksFile is Codex's hooks.json.
type hooksFile struct {
	Hooks map[string][]hookGroup `json:"hooks"`
}

type hookGroup struct {
	Matcher *string       `json:"matcher,omitempty"`
	Hooks   []hookHandler `json:"hooks"`
}

// hookHandler is a command handler. Fields the trust hash would need and
// that these tests do not use (statusMessage, commandWindows, …) make
// hookTrust fail rather than compute a hash Codex would not.
type hookHandler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout *int   `json:"timeout,omitempty"`
	Async   bool   `json:"async,omitempty"`

	Other map[string]json.RawMessage `json:"-"`
}

func (h *hookHandler) UnmarshalJSON(data []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	type plain hookHandler
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*h = hookHandler(p)
	for _, k := range []string{"type", "command", "timeout", "async"} {
		delete(all, k)
	}
	h.Other = all
	return nil
}

// eventsWithoutMatcher are the events whose matcher Codex ignores, in the
// hook's identity too.
var eventsWithoutMatcher = []string{"UserPromptSubmit", "Stop"}

// snakeEvent is Codex's key label of an event: SessionStart → session_start.
func snakeEvent(event string) string {
	var b strings.Builder
	for i, r := range event {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hookTrust returns the trusted_hash of every command handler of a
// hooks.json, by its key "<hooks.json path>:<event>:<group>:<handler>".
//
// The hash is "sha256:" and the hex SHA-256 of the compact JSON, keys
// sorted, of the handler's normalized identity: the event's key label, the
// group's matcher (for events that have one) and the one handler with its
// timeout (600 when absent) and async flag.
func hookTrust(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var file hooksFile
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	trust := map[string]string{}
	for event, groups := range file.Hooks {
		label := snakeEvent(event)
		for gi, g := range groups {
			for hi, hk := range g.Hooks {
				if hk.Type != "command" {
					continue
				}
				if len(hk.Other) > 0 {
					return nil, fmt.Errorf("%s: %s hook %d.%d has fields the trust hash here does not cover: %v",
						path, event, gi, hi, slices.Sorted(maps.Keys(hk.Other)))
				}
				timeout := 600
				if hk.Timeout != nil {
					timeout = max(*hk.Timeout, 1)
				}
				identity := map[string]any{
					"event_name": label,
					"hooks": []any{map[string]any{
						"type": "command", "command": hk.Command, "timeout": timeout, "async": hk.Async,
					}},
				}
				if g.Matcher != nil && !slices.Contains(eventsWithoutMatcher, event) {
					if m := *g.Matcher; m == "" || strings.TrimSpace(m) != m {
						return nil, fmt.Errorf("%s: %s group %d: matcher %q: empty or padded matchers are not covered", path, event, gi, m)
					}
					identity["matcher"] = *g.Matcher
				}
				var b bytes.Buffer
				enc := json.NewEncoder(&b) // maps encode with sorted keys
				enc.SetEscapeHTML(false)
				if err := enc.Encode(identity); err != nil {
					return nil, err
				}
				sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
				trust[fmt.Sprintf("%s:%s:%d:%d", path, label, gi, hi)] = "sha256:" + hex.EncodeToString(sum[:])
			}
		}
	}
	return trust, nil
}

// trustTOML renders trust as config.toml tables.
func trustTOML(trust map[string]string) string {
	var b strings.Builder
	for _, key := range slices.Sorted(maps.Keys(trust)) {
		fmt.Fprintf(&b, "\n[hooks.state.%s]\ntrusted_hash = %s\n", strconv.Quote(key), strconv.Quote(trust[key]))
	}
	return b.String()
}

// trustedState matches one trusted hook of a config.toml.
var trustedState = regexp.MustCompile(`(?m)^\[hooks\.state\.("(?:[^"\\]|\\.)*")\]\s*\ntrusted_hash = ("[^"]*")`)

// readTrust returns the trusted hashes a config.toml holds, by key.
func readTrust(configPath string) (map[string]string, error) {
	data, err := os.ReadFile(configPath)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, m := range trustedState.FindAllStringSubmatch(string(data), -1) {
		key, err1 := strconv.Unquote(m[1])
		hash, err2 := strconv.Unquote(m[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: unreadable hooks.state entry %q", configPath, m[0])
		}
		out[key] = hash
	}
	return out, nil
}

// trustHooks makes Codex trust every hook of hooksPath, as the TUI's "Trust
// all and continue" does: the hooks config.toml does not trust yet get
// their tables appended. It returns the keys it added.
func trustHooks(t *testing.T, configPath, hooksPath string) []string {
	t.Helper()
	want, err := hookTrust(hooksPath)
	if err != nil {
		t.Fatalf("hook trust: %v", err)
	}
	have, err := readTrust(configPath)
	if err != nil {
		t.Fatalf("hook trust: %v", err)
	}
	missing := map[string]string{}
	for k, v := range want {
		if have[k] != v {
			missing[k] = v
		}
	}
	if len(missing) == 0 {
		return nil
	}
	f, err := os.OpenFile(configPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(trustTOML(missing)); err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(missing))
}

// TestHookTrustMatchesCodex: the trust hookTrust computes for
// testdata/trust/hooks.json is what Codex 0.169.0's TUI wrote when it was
// told to trust them (testdata/trust/config.toml; the hooks were installed
// as /tmp/codexprobe/codexhome/hooks.json).
func TestHookTrustMatchesCodex(t *testing.T) {
	dir := filepath.Join("..", "testdata", "trust")
	want, err := readTrust(filepath.Join(dir, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 5 {
		t.Fatalf("testdata/trust/config.toml has %d trusted hooks, want 5", len(want))
	}
	// The keys name the path the hooks file had when Codex trusted it.
	const installedAs = "/tmp/codexprobe/codexhome/hooks.json"
	got, err := hookTrust(filepath.Join(dir, "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	renamed := map[string]string{}
	for k, v := range got {
		renamed[installedAs+strings.TrimPrefix(k, filepath.Join(dir, "hooks.json"))] = v
	}
	for k, v := range want {
		if renamed[k] != v {
			t.Errorf("%s: computed %q, Codex wrote %q", k, renamed[k], v)
		}
	}
	if len(renamed) != len(want) {
		t.Errorf("computed trust for %d hooks, Codex for %d: %v", len(renamed), len(want), renamed)
	}
	// And trustTOML writes what readTrust reads back.
	back := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(back, []byte(trustTOML(renamed)), 0o600); err != nil {
		t.Fatal(err)
	}
	again, err := readTrust(back)
	if err != nil || len(again) != len(renamed) {
		t.Fatalf("trustTOML round trip: %v, %d of %d", err, len(again), len(renamed))
	}
}
