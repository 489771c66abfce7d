//go:build e2e

// Command record runs one real Claude Code CLI, offline, against the
// scripted model server (package modelserver) and keeps what it wrote:
// the session transcripts (~/.claude/projects, sub-agents' files
// included) and the hook payloads it sent, scrubbed of this machine's
// paths, as test data for the back-fill (adapters/claudecode/testdata/
// transcripts/<version>, whose README.md says what each version wrote).
//
// The sessions, in one project (will-it-rain, a git repository):
//
//   - image (-p, stream-json input): a prompt with a pasted PNG, a Read of
//     a PNG; its init line says which tools, commands and skills the
//     version has;
//   - work (interactive, in tmux, typed as a person types): Read, Bash,
//     Edit, Write, turns that only answer in text, prompts in Chinese,
//     German and French, a pasted specification of 40 KB, a sub-agent,
//     /compact and a turn after it, a background Bash and a background
//     sub-agent (their notifications, where the version sends them);
//   - commands (interactive): a first turn started by a custom slash
//     command, a plain turn, a skill invoked as a slash command and one
//     the model invokes with the Skill tool (where the version has skills);
//   - sdk (stream-json input, one process): a slash command, a plain turn;
//   - resumed (-p --resume of image), continued (-p --resume of work,
//     after its compaction), other-model (--model glm-4.6).
//
// Next to the transcripts it writes manifest.json: each run's session
// ids and turns as the person typed them (and whether the model got
// each), and every tool call the model made with the turn it belongs to
// and whether a sub-agent made it, from the model server's side, not
// read back from the transcripts.
//
// It must run in a loopback-only network namespace: record.sh installs
// the CLIs (../setup.sh), builds this command and runs it under
// `unshare -n`. It is not part of `just test`.
//
//	adapters/claudecode/e2e/record/record.sh              # every version
//	adapters/claudecode/e2e/record/record.sh 2.0.76       # one
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
)

// apiKey is the key the CLI sends; the scripted server takes any.
const apiKey = "sk-ant-api03-scripted-model-server-key"

// Placeholders of the scrubbed files (see scrub).
const (
	homeHolder = "/home/dev"
	tmpHolder  = "/tmp"
	baseHolder = "/tmp/rec"
	cliHolder  = "/opt/claude-code"
	// kernelHolder stands for this machine's kernel release, which the
	// CLI writes into its environment notes (OS Version: Linux …).
	kernelHolder = "6.8.0-1-generic"
)

func main() {
	cli := flag.String("claude", "", "the claude binary to run")
	out := flag.String("out", "", "the folder that receives this version's transcripts (emptied first)")
	keep := flag.Bool("keep", false, "keep the scratch folder (its logs hold the CLI's output)")
	flag.Parse()
	if *cli == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: record -claude BIN -out DIR [-keep]")
		os.Exit(2)
	}
	// Stopped, it stops what it started: the CLIs' process groups and
	// the terminals they run in.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		stopAll()
		fmt.Fprintln(os.Stderr, "record: stopped")
		os.Exit(1)
	}()
	if err := run(*cli, *out, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

// started holds how to stop each process group and terminal the
// recorder started and has not stopped yet, by a name of its own.
var started sync.Map

// stopAll stops everything in started.
func stopAll() {
	started.Range(func(k, v any) bool {
		v.(func())()
		started.Delete(k)
		return true
	})
}

// recorder is one version's recording.
type recorder struct {
	cli, cliDir, version string
	perm                 []string // how the CLI is let run tools
	base, home, project  string
	hooks                string // where the hook writes payloads
	srv                  *modelserver.Server
	mu                   sync.Mutex
	marks                []mark // turns, in the order they were sent
	runs                 []*runRecord
	notes                []string
}

// mark says that from request number Request on, the model server
// answered turn Turn of run Label.
type mark struct {
	Label   string
	Turn    int
	Request int
}

func (r *recorder) beginTurn(label string, turn int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marks = append(r.marks, mark{label, turn, len(r.srv.Requests())})
}

func (r *recorder) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "record %s: %s\n", r.version, fmt.Sprintf(format, args...))
}

func (r *recorder) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
	r.logf("note: "+format, args...)
}

func (r *recorder) env() []string {
	return []string{
		"PATH=" + filepath.Dir(nodePath()) + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + r.home,
		"TMPDIR=" + filepath.Join(r.base, "tmp"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"ANTHROPIC_BASE_URL=" + r.srv.URL(),
		"ANTHROPIC_API_KEY=" + apiKey,
		"IS_SANDBOX=1", // --dangerously-skip-permissions is refused to root without it
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
}

func nodePath() string {
	p, err := exec.LookPath("node")
	if err != nil {
		return "/usr/bin/node"
	}
	return p
}

func run(cli, out string, keep bool) error {
	if err := requireLoopbackOnly(); err != nil {
		return err
	}
	cli, err := filepath.Abs(cli)
	if err != nil {
		return err
	}
	r := &recorder{cli: cli, perm: []string{"--dangerously-skip-permissions"}}
	// <dir>/node_modules/.bin/claude: the install folder is <dir>.
	if real, err := filepath.EvalSymlinks(cli); err == nil {
		if i := strings.Index(real, "/node_modules/"); i > 0 {
			r.cliDir = real[:i]
		}
	}
	if r.base, err = os.MkdirTemp("", "ccrec-"); err != nil {
		return err
	}
	if keep {
		defer fmt.Fprintln(os.Stderr, "record: scratch folder kept:", r.base)
	} else {
		defer os.RemoveAll(r.base)
	}
	r.home = filepath.Join(r.base, "home")
	r.project = filepath.Join(r.home, "code", "will-it-rain")
	r.hooks = filepath.Join(r.base, "hooks")
	v, err := exec.Command(cli, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", cli, err)
	}
	r.version, _, _ = strings.Cut(strings.TrimSpace(string(v)), " ")
	if err := r.world(); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if r.srv, err = modelserver.Start(ctx, "127.0.0.1:0"); err != nil {
		return err
	}
	defer r.srv.Close()
	if err := r.srv.Register(scripts(r.project)...); err != nil {
		return err
	}
	// A turn without a marker of its own (a task notification) that
	// no script continues.
	if err := r.srv.SetDefault(modelserver.Step{Text: "Noted: the background work has finished."}); err != nil {
		return err
	}
	r.srv.SetSummary("The session explored will-it-rain, fixed the off-by-one UTC offset in will_it_rain " +
		"(local_day was called with offset_hours - 1), added celsius_to_fahrenheit, wrote src/alerts.py from a " +
		"pasted spec and had a sub-agent audit the tests.")

	err = r.sessions()
	if f, ferr := os.Create(filepath.Join(r.base, "logs", "server-requests.jsonl")); ferr == nil {
		r.srv.WriteRequests(f)
		f.Close()
	}
	if err != nil {
		return err
	}
	return r.collect(out)
}

// requireLoopbackOnly fails unless the only network interface is an up
// loopback: the CLI must not reach beyond 127.0.0.1.
func requireLoopbackOnly() error {
	ifaces, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagLoopback == 0 {
			return fmt.Errorf("network interface %s is not loopback: run inside `unshare -n` (record.sh does)", ifc.Name)
		}
	}
	return nil
}

// world writes the isolated home: the project (a git repository), the
// CLI's settings (onboarding done, the project trusted, the recording
// hook on every event), the custom command and the skill.
func (r *recorder) world() error {
	files := map[string][]byte{}
	for name, body := range projectFiles {
		files[filepath.Join(r.project, name)] = []byte(body)
	}
	files[filepath.Join(r.project, "assets", "logo.png")] = logoPNG()
	files[filepath.Join(r.project, ".claude", "commands", "rain-review.md")] = []byte(reviewCommand)
	files[filepath.Join(r.project, ".claude", "skills", "weather-report", "SKILL.md")] = []byte(weatherSkill)
	files[filepath.Join(r.home, ".claude", "hooks", "record.sh")] = []byte(hookScript)
	seed, _ := json.MarshalIndent(map[string]any{
		"hasCompletedOnboarding": true, "theme": "dark", "bypassPermissionsModeAccepted": true,
		"customApiKeyResponses": map[string]any{"approved": []string{apiKey[len(apiKey)-20:]}, "rejected": []string{}},
		// Older versions expect every field of a project's entry.
		"projects": map[string]any{r.project: map[string]any{
			"hasTrustDialogAccepted": true, "allowedTools": []string{}, "history": []any{}, "mcpContextUris": []string{},
			"mcpServers": map[string]any{}, "enabledMcpjsonServers": []string{}, "disabledMcpjsonServers": []string{},
			"ignorePatterns": []string{}, "projectOnboardingSeenCount": 1,
			"hasClaudeMdExternalIncludesApproved": false, "hasClaudeMdExternalIncludesWarningShown": false}},
	}, "", "  ")
	files[filepath.Join(r.home, ".claude.json")] = seed
	hooks := map[string]any{}
	for _, ev := range hookEvents(r.version) {
		group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": `sh "$HOME/.claude/hooks/record.sh"`}}}
		if strings.Contains(ev, "Tool") {
			group["matcher"] = "*"
		}
		hooks[ev] = []any{group}
	}
	settings, _ := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	files[filepath.Join(r.home, ".claude", "settings.json")] = settings
	for path, body := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, body, 0o644); err != nil {
			return err
		}
	}
	for _, dir := range []string{filepath.Join(r.base, "tmp"), r.hooks} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = r.project
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + r.home, "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_DATE=2026-03-01T12:00:00Z", "GIT_COMMITTER_DATE=2026-03-01T12:00:00Z"}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	return errors.Join(git("init", "-q", "-b", "main"), git("add", "-A"),
		git("-c", "user.name=Dev", "-c", "user.email=dev@example.invalid", "commit", "-q", "-m", "will-it-rain: first import"))
}

// hookEvents are the hook events the recording hook is set on: those the
// version knows. A settings file that names an event the version does
// not know is ignored whole (1.0.84 has no SessionEnd, 2.0.14 no
// PostToolUseFailure; 1.0.30 runs no hooks at all).
func hookEvents(version string) []string {
	evs := []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SubagentStop", "PreCompact"}
	if !older(version, "1.0.85") {
		evs = append(evs, "SessionEnd")
	}
	if !older(version, "2.0.76") {
		evs = append(evs, "PostToolUseFailure")
	}
	return evs
}

// older reports whether version a comes before b (dotted numbers).
func older(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		var x, y int
		fmt.Sscan(as[i], &x)
		fmt.Sscan(bs[i], &y)
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}

// hookScript keeps each payload as it came, and for a Stop how long the
// transcript was at that moment (the live hook reads its tail then).
const hookScript = `#!/bin/sh
d="$HOME/../hooks"
n="$(date +%s%N)-$$"
cat > "$d/$n.json"
tp=$(sed -n 's/.*"transcript_path":"\([^"]*\)".*/\1/p' "$d/$n.json")
if [ -n "$tp" ] && [ -f "$tp" ]; then wc -c < "$tp" > "$d/$n.size"; fi
exit 0
`

// runRecord is one CLI run in the manifest.
type runRecord struct {
	Label string `json:"label"`
	// Args are the CLI's arguments after the ones every run has.
	Args []string `json:"args"`
	// SessionIDs are the ids its output named, the first the session's.
	SessionIDs []string     `json:"sessionIds"`
	Turns      []turnRecord `json:"turns"`
	Results    int          `json:"results"`
	Exit       int          `json:"exit"`
	Error      string       `json:"error,omitempty"`
}

// turnRecord is one message the person sent.
type turnRecord struct {
	Kind string `json:"kind"`
	// Prompt is the text as typed (its first 600 bytes); Bytes its length.
	Prompt string `json:"prompt"`
	Bytes  int    `json:"bytes"`
	Image  bool   `json:"image,omitempty"`
	// Reached says the model got the turn: false for one the version
	// refused or ran locally (2.0.76 lets only the model invoke a skill).
	Reached bool `json:"reached"`
}

// toolRecord is one tool call the model server asked for.
type toolRecord struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Script string `json:"script"`
	Run    string `json:"run"`
	// Turn is the index of the run's turn being answered; -1 for a
	// background sub-agent's, which may run into a later turn.
	Turn      int  `json:"turn"`
	Sidechain bool `json:"sidechain"`
}

// manifest is manifest.json.
type manifest struct {
	Version string       `json:"version"`
	Project string       `json:"project"`
	Runs    []*runRecord `json:"runs"`
	Tools   []toolRecord `json:"tools"`
	// Requests counts the model server's answers by kind.
	Requests map[string]int `json:"requests"`
	Notes    []string       `json:"notes,omitempty"`
}

// do runs the CLI and records the run; a run that fails is noted, not
// fatal: what an old version cannot do is part of what is recorded.
func (r *recorder) do(label string, turns []turn, args ...string) *runOut {
	o, err := r.claude(label, turns, args...)
	rr := &runRecord{Label: label, Args: args}
	if o != nil {
		rr.SessionIDs, rr.Results, rr.Exit = o.SessionIDs, len(o.Results), o.Exit
	}
	if err != nil {
		rr.Error = err.Error()
		r.note("%s: %v", label, err)
	}
	for _, t := range turns {
		p := t.Text
		if len(p) > 600 {
			p = p[:600]
		}
		rr.Turns = append(rr.Turns, turnRecord{Kind: t.kind(), Prompt: p, Bytes: len(t.Text), Image: t.Image})
	}
	r.runs = append(r.runs, rr)
	return o
}

// prompt is the stream-json-less run's single turn, for the manifest.
func (r *recorder) lastRunTurn(t turn) {
	rr := r.runs[len(r.runs)-1]
	rr.Turns = append(rr.Turns, turnRecord{Kind: t.kind(), Prompt: t.Text, Bytes: len(t.Text)})
}

func (r *recorder) sessions() error {
	// A stream-json run first: its init line says which tools, commands
	// and skills this version has.
	img := r.do("image", []turn{{Text: "SCENARIO:img-look What does this logo show? Compare it with assets/logo.png.", Image: true}})
	if img == nil || img.Init == nil {
		return errors.New("the first run printed no init line")
	}
	init := img.Init

	work := []turn{
		{Text: "SCENARIO:t1-explore What does this project do? Look around before answering."},
		{Text: "SCENARIO:t2-text Why would a rain forecast be missed just after midnight? Explain, do not change anything yet."},
		{Text: "SCENARIO:t3-fix Fix the midnight bug in src/forecast.py and run the tests."},
		{Text: "SCENARIO:t4-zh 请把 README 里的安装说明翻译成中文，并告诉我需要哪些依赖。"},
		{Text: "SCENARIO:t5-de Erkläre bitte kurz, warum der Test um Mitternacht fehlgeschlagen ist."},
		{Text: "SCENARIO:t6-fr Ajoute une fonction qui convertit les degrés Celsius en Fahrenheit, et vérifie-la."},
		{Text: "SCENARIO:t7-spec Implement the alerts module from this spec, starting with the alert names.\n\n" + spec()},
		{Text: "SCENARIO:t8-agent Use a sub-agent to audit the tests for missing edge cases."},
		{Text: "/compact", Kind: "compact"},
		{Text: "SCENARIO:after-compact What did we fix earlier in this session? Check it is still in place."},
		{Text: "SCENARIO:t9-bg Refresh the radar data in the background while we talk.", Settle: true},
		{Text: "SCENARIO:t10-bgagent Have a background agent check the requirements.", Settle: true},
	}
	r.doInteractive("work", work)

	cmds := []turn{
		{Text: "/rain-review src/forecast.py", Kind: "command"},
		{Text: "SCENARIO:c2-plain What changed in git since the first commit?"},
	}
	if slices.Contains(init.Commands, "weather-report") {
		cmds = append(cmds, turn{Text: "/weather-report Paris", Kind: "skill"})
	} else {
		r.note("no slash command weather-report: the skill is not invoked as a command")
	}
	if slices.Contains(init.Tools, "Skill") {
		cmds = append(cmds, turn{Text: "SCENARIO:c4-skill Give me the weather report for Lyon."})
	} else {
		r.note("no Skill tool")
	}
	r.doInteractive("commands", cmds)

	// The same two kinds of turn driven as the SDK does (stream-json
	// input, one process), and a -p run that resumes the first session.
	r.do("sdk", []turn{
		{Text: "/rain-review src/forecast.py", Kind: "command"},
		{Text: "SCENARIO:c2-plain What changed in git since the first commit?"},
	})
	if ids := r.sessionIDs("image"); len(ids) > 0 {
		resume := turn{Text: "SCENARIO:other-model How long is the forecast module?"}
		r.do("resumed", nil, resume.Text, "--resume", ids[0])
		r.lastRunTurn(resume)
	}
	// The work session again, after its compaction: 1.0 starts a session
	// of its own with the conversation since the compaction.
	if ids := r.sessionIDs("work"); len(ids) > 0 {
		cont := turn{Text: "SCENARIO:c2-plain What changed in git since the first commit?"}
		r.do("continued", nil, cont.Text, "--resume", ids[0])
		r.lastRunTurn(cont)
	}
	other := turn{Text: "SCENARIO:other-model How long is the forecast module?"}
	r.do("other-model", nil, other.Text, "--model", "glm-4.6")
	r.lastRunTurn(other)
	return nil
}

// doInteractive runs an interactive session and records it as a run; the
// session's id is the transcript that appears for it.
func (r *recorder) doInteractive(label string, turns []turn) {
	before := r.transcripts()
	err := r.interactive(label, turns)
	if errors.Is(err, errNoStart) {
		r.note("%s: %v; trying once more", label, err)
		time.Sleep(5 * time.Second)
		err = r.interactive(label, turns)
	}
	rr := &runRecord{Label: label, Args: []string{"(interactive)"}}
	for _, t := range turns {
		p := t.Text
		if len(p) > 600 {
			p = p[:600]
		}
		rr.Turns = append(rr.Turns, turnRecord{Kind: t.kind(), Prompt: p, Bytes: len(t.Text)})
	}
	for _, id := range r.transcripts() {
		if !slices.Contains(before, id) {
			rr.SessionIDs = append(rr.SessionIDs, id)
		}
	}
	if err != nil {
		rr.Error = err.Error()
		r.note("%s: %v", label, err)
	}
	r.logf("%s: sessions %v", label, rr.SessionIDs)
	r.runs = append(r.runs, rr)
}

// transcripts lists the session ids of the transcripts written so far,
// oldest first.
func (r *recorder) transcripts() []string {
	paths, _ := filepath.Glob(filepath.Join(r.home, ".claude", "projects", "*", "*.jsonl"))
	sort.Slice(paths, func(i, j int) bool {
		a, _ := os.Stat(paths[i])
		b, _ := os.Stat(paths[j])
		return a != nil && b != nil && a.ModTime().Before(b.ModTime())
	})
	var ids []string
	for _, p := range paths {
		if id := strings.TrimSuffix(filepath.Base(p), ".jsonl"); !strings.HasPrefix(id, "agent-") {
			ids = append(ids, id)
		}
	}
	return ids
}

func (r *recorder) sessionIDs(label string) []string {
	for _, rr := range r.runs {
		if rr.Label == label {
			return rr.SessionIDs
		}
	}
	return nil
}

// tools attributes every tool call the server asked for to the run and
// turn it answered.
func (r *recorder) tools() ([]toolRecord, map[string]int) {
	reqs := r.srv.Requests()
	kinds := map[string]int{}
	var out []toolRecord
	for i, rec := range reqs {
		kinds[string(rec.Kind)]++
		var m mark
		for _, mk := range r.marks {
			if mk.Request <= i {
				m = mk
			}
		}
		if !conversation(rec) {
			continue // a side request: the CLI does not run its tools
		}
		for _, tu := range rec.ToolUses() {
			t := toolRecord{ID: tu.ID, Name: tu.Name, Script: rec.Script, Run: m.Label, Turn: m.Turn,
				Sidechain: strings.HasPrefix(rec.Script, "sub-")}
			if rec.Script == "sub-bg" {
				t.Turn = -1
			}
			out = append(out, t)
		}
	}
	return out, kinds
}

// reached marks the turns the model got: a request of the turn's script
// (a compaction for /compact) came while the turn was being answered.
func (r *recorder) reached() {
	reqs := r.srv.Requests()
	for _, rr := range r.runs {
		for i := range rr.Turns {
			tr := &rr.Turns[i]
			from, to := -1, len(reqs)
			for k, m := range r.marks {
				if m.Label == rr.Label && m.Turn == i {
					from = m.Request
					if k+1 < len(r.marks) {
						to = r.marks[k+1].Request
					}
				}
			}
			if from < 0 {
				continue
			}
			want := scriptOf(turn{Text: tr.Prompt})
			for _, q := range reqs[from:to] {
				if want == "" && q.Kind == modelserver.KindCompaction || want != "" && q.Script == want && conversation(q) {
					tr.Reached = true
				}
			}
		}
	}
}

// collect writes the scrubbed transcripts, hook payloads and manifest.
func (r *recorder) collect(out string) error {
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	projects := filepath.Join(r.home, ".claude", "projects")
	var tree []string
	err := filepath.WalkDir(filepath.Join(r.home, ".claude"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.home, path)
		if d.IsDir() {
			return nil
		}
		fi, _ := d.Info()
		tree = append(tree, fmt.Sprintf("%s %d", r.scrub(rel), fi.Size()))
		if !strings.HasPrefix(path, projects+string(filepath.Separator)) {
			return nil
		}
		prel, _ := filepath.Rel(projects, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return r.write(filepath.Join(out, "projects", r.scrub(prel)), data)
	})
	if err != nil {
		return fmt.Errorf("collect transcripts: %w", err)
	}
	sort.Strings(tree)
	if err := r.write(filepath.Join(out, "home-tree.txt"), []byte(strings.Join(tree, "\n")+"\n")); err != nil {
		return err
	}

	// The hook payloads, in the order they came, each with the
	// transcript's length when it came.
	names, _ := filepath.Glob(filepath.Join(r.hooks, "*.json"))
	sort.Slice(names, func(i, j int) bool { return hookOrder(names[i]) < hookOrder(names[j]) })
	var hooks []byte
	for _, name := range names {
		payload, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		size := -1
		if b, err := os.ReadFile(strings.TrimSuffix(name, ".json") + ".size"); err == nil {
			fmt.Sscan(strings.TrimSpace(string(b)), &size)
		}
		if size >= 0 {
			// The length of the transcript as it will be kept: scrubbed.
			var p struct {
				TranscriptPath string `json:"transcript_path"`
			}
			json.Unmarshal(payload, &p)
			if b, err := os.ReadFile(p.TranscriptPath); err == nil && size <= len(b) {
				size = len(r.scrub(string(b[:size])))
			}
		}
		line := fmt.Sprintf(`{"transcript_size":%d,"payload":%s}`, size, strings.TrimSpace(string(payload)))
		hooks = append(hooks, line...)
		hooks = append(hooks, '\n')
	}
	if len(hooks) > 0 {
		if err := r.write(filepath.Join(out, "hooks.jsonl"), hooks); err != nil {
			return err
		}
	}

	tools, kinds := r.tools()
	r.reached()
	m := manifest{Version: r.version, Project: r.project, Runs: r.runs, Tools: tools, Requests: kinds, Notes: r.notes}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := r.write(filepath.Join(out, "manifest.json"), append(b, '\n')); err != nil {
		return err
	}
	r.logf("wrote %s: %d runs, %d tool calls, %d hook payloads", out, len(r.runs), len(tools), len(names))
	return nil
}

// hookOrder is the time a payload file was written (its name's first part).
func hookOrder(name string) string {
	base := filepath.Base(name)
	stamp, _, _ := strings.Cut(base, "-")
	return fmt.Sprintf("%020s", stamp)
}

// write writes scrubbed data, failing when anything of this machine is
// left in it.
func (r *recorder) write(path string, data []byte) error {
	data = []byte(r.scrub(string(data)))
	for _, left := range []string{filepath.Base(r.base), "/work/", "/root"} {
		if strings.Contains(string(data), left) {
			return fmt.Errorf("%s: %q is left after scrubbing", path, left)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// scrub rewrites this machine's paths to the placeholders: the scratch
// home to /home/dev, its temp folder to /tmp, the rest of the scratch
// folder to /tmp/rec, the CLI's install folder to /opt/claude-code;
// also in the CLI's encoding of a path as a folder name (every
// character but letters and digits becomes '-'). The kernel release
// becomes kernelHolder.
func (r *recorder) scrub(s string) string {
	type pair struct{ from, to string }
	pairs := []pair{
		{filepath.Join(r.base, "home"), homeHolder},
		{filepath.Join(r.base, "tmp"), tmpHolder},
		{r.base, baseHolder},
	}
	if r.cliDir != "" {
		pairs = append([]pair{{r.cliDir, cliHolder}}, pairs...)
	}
	enc := func(p string) string { return nonAlnum.ReplaceAllString(p, "-") }
	for _, p := range slices.Clone(pairs) {
		pairs = append(pairs, pair{enc(p.from), enc(p.to)})
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil && len(bytes.TrimSpace(b)) > 0 {
		pairs = append(pairs, pair{string(bytes.TrimSpace(b)), kernelHolder})
	}
	for _, p := range pairs {
		s = strings.ReplaceAll(s, p.from, p.to)
	}
	return s
}
