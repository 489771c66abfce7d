//go:build e2e

package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The test binary is its own recorder hook: settings.json runs
// `<test binary> gemini-e2e-record-hook <Event>`, and TestMain, seeing that
// argument, records the payload instead of running the tests.
const recorderArg = "gemini-e2e-record-hook"

// The recorder's environment (inherited from the CLI's):
const (
	// recordDirEnv is the folder that receives one file per hook run.
	recordDirEnv = "GEMINI_E2E_RECORD_DIR"
	// recordOutEnv + <Event> is what the hook prints on stdout, instead of {}.
	recordOutEnv = "GEMINI_E2E_HOOK_OUT_"
	// recordSleepEnv + <Event> is a duration the hook sleeps before it
	// answers; it writes a ".done" file after.
	recordSleepEnv = "GEMINI_E2E_HOOK_SLEEP_"
)

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == recorderArg {
		os.Exit(recordHook(os.Args[2]))
	}
	os.Exit(m.Run())
}

// hookRecord is one hook run as the recorder saw it.
type hookRecord struct {
	Event   string            `json:"event"` // the event named on the command line
	Start   time.Time         `json:"start"`
	Payload json.RawMessage   `json:"payload"`
	Env     map[string]string `json:"env"` // GEMINI_* and CLAUDE_* variables but the API key

	file string
}

// recordHook saves the payload on stdin as <dir>/<unix nanos>-<event>.json
// and prints the answer. Its exit status is the hook's.
func recordHook(event string) int {
	start := time.Now()
	dir := os.Getenv(recordDirEnv)
	payload, err := io.ReadAll(os.Stdin)
	if dir == "" || err != nil {
		fmt.Fprintf(os.Stderr, "recorder: no %s or stdin: %v\n", recordDirEnv, err)
		return 1
	}
	rec := hookRecord{Event: event, Start: start, Payload: payload, Env: map[string]string{}}
	if !json.Valid(payload) {
		rec.Payload, _ = json.Marshal(string(payload))
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(k, "GEMINI_") || strings.HasPrefix(k, "CLAUDE_")) && k != "GEMINI_API_KEY" && !strings.HasPrefix(k, "GEMINI_E2E_") {
			rec.Env[k] = v
		}
	}
	// The payload is kept as the CLI wrote it: no HTML escapes of <, >, &.
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(rec)
	base := filepath.Join(dir, fmt.Sprintf("%d-%s", start.UnixNano(), event))
	if err := os.WriteFile(base+".json", data.Bytes(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "recorder: %v\n", err)
		return 1
	}
	if d, err := time.ParseDuration(os.Getenv(recordSleepEnv + event)); err == nil {
		time.Sleep(d)
		_ = os.WriteFile(base+".done", []byte(time.Now().Format(time.RFC3339Nano)), 0o644)
	}
	out, ok := os.LookupEnv(recordOutEnv + event)
	if !ok {
		out = "{}"
	}
	fmt.Print(out)
	return 0
}

// readRecords returns the hook runs recorded in dir, in the order they
// started.
func readRecords(t *testing.T, dir string) []hookRecord {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files) // same-width unix nanos: the names sort by time
	var out []hookRecord
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r hookRecord
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		r.file = f
		out = append(out, r)
	}
	return out
}

// recorderSettings returns the hooks object that runs the recorder for
// every event, the tool events for every tool (matcher "*"), each with
// timeout ms.
func recorderSettings(t *testing.T, events []string, timeout time.Duration) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hooks := map[string]any{}
	for _, ev := range events {
		matcher := ""
		if ev == "BeforeTool" || ev == "AfterTool" {
			matcher = "*"
		}
		hooks[ev] = []any{map[string]any{
			"matcher": matcher,
			"hooks": []any{map[string]any{
				"name":    "record-" + ev,
				"type":    "command",
				"command": shellQuote(exe) + " " + recorderArg + " " + ev,
				"timeout": timeout.Milliseconds(),
			}},
		}}
	}
	return hooks
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
