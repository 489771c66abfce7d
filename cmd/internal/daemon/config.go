package daemon

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/memory"
)

// Config is what can be set in $MNEMO_HOME/settings.json or, taking
// precedence, in MNEMO_* environment variables (flags, where a command has
// them, come first). `mnemo doctor` prints what is in force and where it
// came from.
type Config struct {
	// Agent makes observations: "local" (default), "claude" or
	// "openai-compatible".
	Agent string `json:"agent" env:"MNEMO_AGENT"`
	// ClaudePath is the claude binary for the claude agent ("claude" on
	// PATH by default).
	ClaudePath string `json:"claudePath" env:"MNEMO_CLAUDE_PATH"`
	// AgentURL and AgentModel address an OpenAI-compatible server (Ollama,
	// LM Studio) for the openai-compatible agent.
	AgentURL   string `json:"agentUrl" env:"MNEMO_AGENT_URL"`
	AgentModel string `json:"agentModel" env:"MNEMO_AGENT_MODEL"`
	// SessionTokens and DayTokens cap what a remote agent may spend; past
	// them the local agent takes over.
	SessionTokens int `json:"sessionTokens" env:"MNEMO_SESSION_TOKENS"`
	DayTokens     int `json:"dayTokens" env:"MNEMO_DAY_TOKENS"`
	// Embedder is "default" (the sentence encoder when installed, else
	// hashing), "hash", "ollama:<model>@<url>" or
	// "openai:<model>@<url>".
	Embedder string `json:"embedder" env:"MNEMO_EMBEDDER"`
	// ContextBytes is the SessionStart context budget.
	ContextBytes int `json:"contextBytes" env:"MNEMO_CONTEXT_BYTES"`
	// SkipTools adds tools whose events are not stored (comma-separated in
	// the environment).
	SkipTools []string `json:"skipTools" env:"MNEMO_SKIP_TOOLS"`
	// PromptRecall gives each prompt the few memories that match it and
	// that its session has not been given yet (on by default; false, or
	// MNEMO_PROMPT_RECALL=0, turns it off).
	PromptRecall bool `json:"promptRecall" env:"MNEMO_PROMPT_RECALL"`
	// SaveWindowSeconds is how long an editor's saves of one file are
	// gathered into one observation of their net change: 0 is the default
	// (a minute, or the editor's idle delay if shorter), negative
	// remembers every save on its own. An editor's initializationOptions
	// (saveWindowSeconds) win.
	SaveWindowSeconds int `json:"saveWindowSeconds" env:"MNEMO_SAVE_WINDOW_SECONDS"`
	// ReviewAfterDays is how long a record whose file changed since may
	// go without a confirmation before it needs review (memory.StateReview):
	// 0 is the default (memory.ReviewAfter), negative is at once.
	ReviewAfterDays int `json:"reviewAfterDays" env:"MNEMO_REVIEW_AFTER_DAYS"`
	// Paused maps projects to what they do without: "capture" (nothing
	// new is stored from their sessions), "inject" (no context, no prompt
	// recall) or "all". `mnemo pause` and `mnemo resume` keep it; one
	// session is paused with MNEMO_PAUSE in its agent's environment (the
	// hook reads it), not here.
	Paused map[string]string `json:"paused"`
	// TeamURL is the PostgreSQL server of team memory (docs/team.md); it
	// is never printed or logged with its password. `mnemo team join`
	// keeps it, and TeamProjects, the projects shared through it.
	TeamURL      string   `json:"teamUrl" env:"MNEMO_TEAM_URL"`
	TeamProjects []string `json:"teamProjects"`
	// TeamAuthor names this person on what is shared; $USER@host when
	// empty.
	TeamAuthor string `json:"teamAuthor" env:"MNEMO_TEAM_AUTHOR"`
	// TeamPollMillis is the longest wait for a notification from the
	// team server before pulling anyway.
	TeamPollMillis int `json:"teamPollMillis" env:"MNEMO_TEAM_POLL_MS"`
	// TeamPushBatch is the most operations one push transaction carries.
	TeamPushBatch int `json:"teamPushBatch" env:"MNEMO_TEAM_PUSH_BATCH"`
}

// saveWindow is SaveWindowSeconds for vscode.Options.
func (c Config) saveWindow() time.Duration {
	if c.SaveWindowSeconds < 0 {
		return -1
	}
	return time.Duration(c.SaveWindowSeconds) * time.Second
}

// reviewAfter is ReviewAfterDays for store.Options.
func (c Config) reviewAfter() time.Duration {
	if c.ReviewAfterDays < 0 {
		return -1
	}
	return time.Duration(c.ReviewAfterDays) * 24 * time.Hour
}

// defaultConfig is what applies when nothing is set.
func defaultConfig() Config {
	return Config{Agent: "local", ClaudePath: "claude", Embedder: "default", ContextBytes: 8 << 10,
		SessionTokens: 200_000, DayTokens: 2_000_000, PromptRecall: true, TeamPollMillis: 2000, TeamPushBatch: 200}
}

// SettingsFile is the settings file of a home.
func SettingsFile(home string) string { return filepath.Join(home, "settings.json") }

// ModelsDir is where the embedding model lives: $MNEMO_MODELS, else
// <home>/models; and when that holds no model, the .cache/models of the
// checkout whose bin/ holds this mnemo, if it holds one: where `just
// model` and `just demo` put it, so that bin/mnemo finds it after them
// as it did under them.
func ModelsDir(home string) string {
	if d := os.Getenv("MNEMO_MODELS"); d != "" {
		return d
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		exe = ""
	}
	return modelsDir(home, exe)
}

// modelsDir is ModelsDir without $MNEMO_MODELS, for the binary at exe.
func modelsDir(home, exe string) string {
	dir := filepath.Join(home, "models")
	if hasModel(dir) || exe == "" {
		return dir
	}
	if checkout := filepath.Join(filepath.Dir(filepath.Dir(exe)), ".cache", "models"); hasModel(checkout) {
		return checkout
	}
	return dir
}

// hasModel reports whether dir holds the sentence encoder's folder
// (vector.OpenUSELite reads it).
func hasModel(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "use-lite"))
	return err == nil && fi.IsDir()
}

// LoadConfig reads the settings file and the environment over the
// defaults. It returns where each value came from ("default", the file, or
// the variable). An unreadable or invalid file is an error naming it.
func LoadConfig(home string) (Config, map[string]string, error) {
	c := defaultConfig()
	source := map[string]string{}
	t := reflect.TypeOf(c)
	for i := range t.NumField() {
		source[t.Field(i).Tag.Get("json")] = "default"
	}
	path := SettingsFile(home)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return c, source, fmt.Errorf("read %s: %w", path, err)
	default:
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return c, source, fmt.Errorf("%s is not valid JSON: %w", path, err)
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return c, source, fmt.Errorf("%s: %w", path, err)
		}
		for k := range raw {
			source[k] = path
		}
	}
	v := reflect.ValueOf(&c).Elem()
	for i := range t.NumField() {
		f := t.Field(i)
		val, ok := os.LookupEnv(f.Tag.Get("env"))
		if !ok || val == "" {
			continue
		}
		field := v.Field(i)
		switch field.Kind() {
		case reflect.String:
			field.SetString(val)
		case reflect.Int:
			n, err := strconv.Atoi(val)
			if err != nil {
				return c, source, fmt.Errorf("%s=%q: want a number", f.Tag.Get("env"), val)
			}
			field.SetInt(int64(n))
		case reflect.Slice:
			field.Set(reflect.ValueOf(SplitList(val)))
		case reflect.Bool:
			b, err := strconv.ParseBool(val)
			if err != nil {
				return c, source, fmt.Errorf("%s=%q: want 1 or 0 (true or false)", f.Tag.Get("env"), val)
			}
			field.SetBool(b)
		}
		source[f.Tag.Get("json")] = f.Tag.Get("env")
	}
	switch c.Agent {
	case "local", "claude", "openai-compatible":
	default:
		return c, source, fmt.Errorf("agent %q (from %s): want local, claude or openai-compatible", c.Agent, source["agent"])
	}
	for _, project := range slices.Sorted(maps.Keys(c.Paused)) {
		if _, err := memory.ParsePause(c.Paused[project]); err != nil {
			return c, source, fmt.Errorf("paused project %q (from %s): %v", project, source["paused"], err)
		}
	}
	if c.TeamPollMillis < 50 || c.TeamPushBatch < 1 || c.TeamPushBatch > 1000 {
		return c, source, fmt.Errorf("teamPollMillis %d (from %s) or teamPushBatch %d (from %s): want at least 50 ms, and 1 to 1000 operations", c.TeamPollMillis, source["teamPollMillis"], c.TeamPushBatch, source["teamPushBatch"])
	}
	if c.ContextBytes < 512 {
		return c, source, fmt.Errorf("contextBytes %d (from %s): want at least 512", c.ContextBytes, source["contextBytes"])
	}
	return c, source, nil
}

// Describe lists the settings in force, one per line, in words (none for
// a setting left empty; what 0 means where it means something), with
// their sources.
func (c Config) Describe(source map[string]string) []string {
	var out []string
	v := reflect.ValueOf(c)
	t := v.Type()
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("json")
		var val string
		switch f := v.Field(i); {
		case name == "teamUrl":
			val = cmp.Or(memory.RedactURL(c.TeamURL), "none")
		case name == "saveWindowSeconds" && c.SaveWindowSeconds == 0:
			val = "0 (a minute, or the editor's idle delay if shorter)"
		case name == "saveWindowSeconds" && c.SaveWindowSeconds < 0:
			val = fmt.Sprintf("%d (every save on its own)", c.SaveWindowSeconds)
		case name == "reviewAfterDays" && c.ReviewAfterDays == 0:
			val = fmt.Sprintf("0 (%d days)", int(memory.ReviewAfter.Hours()/24))
		case name == "reviewAfterDays" && c.ReviewAfterDays < 0:
			val = fmt.Sprintf("%d (at once)", c.ReviewAfterDays)
		case name == "teamAuthor" && c.TeamAuthor == "":
			val = "none: $USER@host"
		case name == "paused":
			var ps []string
			for _, project := range slices.Sorted(maps.Keys(c.Paused)) {
				ps = append(ps, project+": "+c.Paused[project])
			}
			val = cmp.Or(strings.Join(ps, ", "), "none")
		case f.Kind() == reflect.Slice:
			val = cmp.Or(strings.Join(f.Interface().([]string), ", "), "none")
		default:
			val = cmp.Or(fmt.Sprint(f.Interface()), "none")
		}
		out = append(out, fmt.Sprintf("%-17s %s  (%s)", name, val, source[name]))
	}
	sort.Strings(out)
	return out
}

// savePaused writes the paused projects into the settings file of home
// (its "paused" key; none removes the key), keeping every other setting.
// The file is replaced whole (temporary file, fsync, rename); its keys
// come out sorted. A file that is not valid JSON is left alone: an error.
func savePaused(home string, paused map[string]string) error {
	var v any
	if len(paused) > 0 {
		v = paused
	}
	return saveSettings(home, map[string]any{"paused": v})
}

// saveSettings writes keys into the settings file of home (a nil value
// removes its key), keeping every other setting, as savePaused does.
func saveSettings(home string, keys map[string]any) error {
	path := SettingsFile(home)
	settings := map[string]json.RawMessage{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	default:
		if err := json.Unmarshal(b, &settings); err != nil {
			return fmt.Errorf("%s is not valid JSON, left as it is: %w", path, err)
		}
	}
	for k, v := range keys {
		if v == nil {
			delete(settings, k)
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		settings[k] = raw
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	if err := ReplaceFile(path, func(w io.Writer) error {
		_, err := w.Write(append(out, '\n'))
		return err
	}); err != nil {
		return fmt.Errorf("write %s: %v", path, err)
	}
	return nil
}
