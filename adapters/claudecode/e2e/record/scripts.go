//go:build e2e

package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/adapters/claudecode/modelserver"
)

// The project every session works in: a small Python forecast helper
// whose local_day is called with the UTC offset minus one (the bug the
// sessions find, explain and fix).
var projectFiles = map[string]string{
	"README.md": `# will-it-rain

Says whether it will rain on a given local day, from an hourly forecast.

## Install

    python3 -m venv .venv && . .venv/bin/activate
    pip install -r requirements.txt

## Use

    from forecast import will_it_rain
    will_it_rain(hourly, day, offset_hours)
`,
	"requirements.txt": "requests==2.32.3\n",
	"src/forecast.py": `from datetime import datetime, timedelta, timezone


def local_day(ts, offset_hours):
    """The calendar day of a UTC timestamp at a UTC offset."""
    t = datetime.fromtimestamp(ts, tz=timezone.utc) + timedelta(hours=offset_hours)
    return t.date()


def will_it_rain(hourly, day, offset_hours):
    """True when an hour of the local day has a rain probability of 50% or more."""
    return any(p >= 0.5 for ts, p in hourly if local_day(ts, offset_hours - 1) == day)
`,
	"tests/test_forecast.py": `import sys
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
import forecast  # noqa: E402

# 2026-03-01 23:30 UTC is 2026-03-02 00:30 at UTC+1.
hourly = [(1772407800, 0.8)]
assert forecast.local_day(1772407800, 1) == date(2026, 3, 2)
assert forecast.will_it_rain(hourly, date(2026, 3, 2), 1), "rain at 00:30 local time was missed"
print("2 tests passed")
`,
}

// logoPNG is the project's assets/logo.png: a 16×16 blue-and-white
// picture, small enough to be inlined as base64 where the CLI inlines
// images.
func logoPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for y := range 16 {
		for x := range 16 {
			c := color.RGBA{R: 30, G: 90, B: 200, A: 255}
			if y > 9 && (x+y)%3 == 0 {
				c = color.RGBA{R: 255, G: 255, B: 255, A: 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func logoBase64() string { return base64.StdEncoding.EncodeToString(logoPNG()) }

// The custom slash command (/rain-review: a name no version has built in,
// unlike /review) and the skill the sessions use; each body
// carries the marker of the script that answers it.
const (
	reviewCommand = `---
description: Review a file for bugs
---
SCENARIO:cmd-review Review $ARGUMENTS for bugs: read it, compile it, then list what is wrong.
`
	weatherSkill = `---
name: weather-report
description: Write a short weather report for a city from the forecast module. Use when asked for a weather report.
---
SCENARIO:skill-weather To write the report, run the forecast module for the city and summarise
the rain chance in one sentence.
`
)

// spec is the long pasted prompt: a deterministic specification of
// about 40 KB.
func spec() string {
	var b strings.Builder
	b.WriteString("# Alerts module specification\n\nThe alerts module turns an hourly forecast into notifications.\n\n")
	for i := 1; b.Len() < 40<<10; i++ {
		fmt.Fprintf(&b, "## Rule %d: rain threshold %d%%\n\n", i, 40+i%50)
		fmt.Fprintf(&b, "When the rain probability of any hour between %02d:00 and %02d:59 local time reaches %d%%, "+
			"send one alert named `rain-%03d` to every subscriber of the city, unless an alert of the same name was sent "+
			"in the previous %d hours. The alert says the hour, the probability rounded to the nearest 5%%, and the "+
			"city's name as the subscriber spelled it. Alerts are idempotent by (city, name, local day).\n\n",
			i%24, i%24, 40+i%50, i, 1+i%6)
		fmt.Fprintf(&b, "- Edge case %d.a: a forecast hour that straddles a daylight-saving change counts once.\n", i)
		fmt.Fprintf(&b, "- Edge case %d.b: an offset of +14 or -12 hours keeps the local day of the city.\n\n", i)
	}
	return b.String()
}

// turn is one message a person sends in a session.
type turn struct {
	// Text is the prompt as typed; Image adds a pasted image.
	Text  string
	Image bool
	// Kind says what it is: "prompt", "command" (a custom slash
	// command), "skill" (a skill invoked as a slash command), "compact".
	Kind string
	// Results is how many result lines the CLI prints for it (default
	// 1); Settle waits that long for more (background tasks whose
	// notifications start turns of their own).
	Results int
	Settle  bool
}

func (t turn) kind() string {
	if t.Kind == "" {
		return "prompt"
	}
	return t.Kind
}

// scripts are the model's side of every session, by marker. p is the
// project folder, as the CLI sees it.
func scripts(p string) []modelserver.Script {
	file := func(rel string) string { return filepath.Join(p, rel) }
	read := func(rel string) modelserver.ToolUse {
		return modelserver.ToolUse{Name: "Read", Input: map[string]any{"file_path": file(rel)}}
	}
	bash := func(cmd, desc string) modelserver.ToolUse {
		return modelserver.ToolUse{Name: "Bash", Input: map[string]any{"command": cmd, "description": desc}}
	}
	tools := func(t ...modelserver.ToolUse) []modelserver.ToolUse { return t }
	runTests := bash("python3 tests/test_forecast.py", "Run the tests")
	steps := func(name string, st ...modelserver.Step) modelserver.Script {
		return modelserver.Script{Name: name, Steps: st}
	}
	weather := []modelserver.Step{
		{Text: "Running the forecast for the city.", ToolUses: tools(bash(`python3 -c 'import sys; sys.path.insert(0, "src"); import forecast; print(forecast.local_day(1772407800, 1))'`, "Run the forecast"))},
		{Text: "Weather report: rain is likely just after midnight local time (80%); take an umbrella."},
	}
	return sideAware([]modelserver.Script{
		steps("t1-explore",
			modelserver.Step{Text: "I'll read the README and list the sources first.", ToolUses: tools(read("README.md"), bash("ls -R src tests", "List the sources"))},
			modelserver.Step{Text: "will-it-rain says whether a local day will see rain: `will_it_rain(hourly, day, offset_hours)` in src/forecast.py scans the hourly forecast, and tests/test_forecast.py checks the midnight case."}),
		steps("t2-text",
			modelserver.Step{Text: "Root cause: `will_it_rain` calls `local_day(ts, offset_hours - 1)`, so every hour is shifted back by one. " +
				"An hour at 00:30 local time is then counted on the previous day, and rain just after midnight is missed. " +
				"The fix is to pass `offset_hours` unchanged."}),
		steps("t3-fix",
			modelserver.Step{Text: "Reading the module.", ToolUses: tools(read("src/forecast.py"))},
			modelserver.Step{Text: "Running the tests to see the failure.", ToolUses: tools(runTests)},
			modelserver.Step{Text: "The offset is off by one; fixing it.", ToolUses: tools(modelserver.ToolUse{Name: "Edit", Input: map[string]any{
				"file_path": file("src/forecast.py"), "old_string": "local_day(ts, offset_hours - 1)", "new_string": "local_day(ts, offset_hours)"}})},
			modelserver.Step{Text: "Running the tests again.", ToolUses: tools(runTests)},
			modelserver.Step{Text: "Fixed the off-by-one in will_it_rain: it now passes offset_hours to local_day unchanged, and both tests pass."}),
		steps("t4-zh",
			modelserver.Step{Text: "先看一下依赖文件。", ToolUses: tools(read("requirements.txt"))},
			modelserver.Step{Text: "安装说明：先用 `python3 -m venv .venv` 创建虚拟环境并激活，再运行 `pip install -r requirements.txt`。唯一的依赖是 requests 2.32.3。"}),
		steps("t5-de",
			modelserver.Step{Text: "Der Test ist fehlgeschlagen, weil `will_it_rain` den UTC-Versatz um eine Stunde zu klein an `local_day` übergab: " +
				"Die Stunde um 00:30 Ortszeit landete dadurch am Vortag, und der Regen kurz nach Mitternacht wurde übersehen."}),
		steps("t6-fr",
			modelserver.Step{Text: "J'ajoute la fonction de conversion.", ToolUses: tools(modelserver.ToolUse{Name: "Edit", Input: map[string]any{
				"file_path": file("src/forecast.py"), "old_string": "def will_it_rain(",
				"new_string": "def celsius_to_fahrenheit(c):\n    \"\"\"Degrés Celsius en degrés Fahrenheit.\"\"\"\n    return c * 9 / 5 + 32\n\n\ndef will_it_rain("}})},
			modelserver.Step{Text: "Je vérifie.", ToolUses: tools(bash(`python3 -c 'import sys; sys.path.insert(0, "src"); import forecast; print(forecast.celsius_to_fahrenheit(100))'`, "Check the conversion"))},
			modelserver.Step{Text: "C'est fait : `celsius_to_fahrenheit(100)` renvoie 212.0."}),
		steps("t7-spec",
			modelserver.Step{Text: "Writing the alerts module skeleton from the spec.", ToolUses: tools(modelserver.ToolUse{Name: "Write", Input: map[string]any{
				"file_path": file("src/alerts.py"),
				"content":   "\"\"\"Rain alerts, as the alerts specification describes.\"\"\"\n\n\ndef alert_name(rule):\n    return \"rain-%03d\" % rule\n"}})},
			modelserver.Step{Text: "Wrote src/alerts.py with alert_name; the rules' thresholds and the idempotency key (city, name, local day) come next."}),
		{Name: "t8-agent", Respond: func(t modelserver.Turn) modelserver.Step {
			switch t.Step {
			case 0:
				return modelserver.Step{Text: "I'll have a sub-agent audit the tests.", ToolUses: tools(modelserver.ToolUse{Name: agentTool(t), Input: map[string]any{
					"description": "Audit the tests", "subagent_type": "general-purpose",
					"prompt": "SCENARIO:sub-audit Audit tests/ for missing edge cases and report what is missing."}})}
			}
			return modelserver.Step{Text: "The audit found that the tests cover midnight at UTC+1 but not a daylight-saving change."}
		}},
		steps("sub-audit",
			modelserver.Step{Text: "Listing the tests.", ToolUses: tools(bash("ls tests", "List the tests"))},
			modelserver.Step{Text: "Reading the test file.", ToolUses: tools(read("tests/test_forecast.py"))},
			modelserver.Step{Text: "Report: tests/test_forecast.py covers 00:30 at UTC+1 only; missing: a daylight-saving change and offsets of +14 and -12."}),
		{Name: "t9-bg", Respond: func(t modelserver.Turn) modelserver.Step {
			switch t.Step {
			case 0:
				return modelserver.Step{Text: "Refreshing the radar data in the background.", ToolUses: tools(modelserver.ToolUse{Name: "Bash", Input: map[string]any{
					"command": "sleep 2; echo radar refreshed", "description": "Refresh the radar data", "run_in_background": true}})}
			}
			return modelserver.Step{Text: "The radar refresh is running in the background."}
		}},
		{Name: "t10-bgagent", Respond: func(t modelserver.Turn) modelserver.Step {
			switch t.Step {
			case 0:
				return modelserver.Step{Text: "A background agent will check the requirements.", ToolUses: tools(modelserver.ToolUse{Name: agentTool(t), Input: map[string]any{
					"description": "Check requirements", "subagent_type": "general-purpose", "run_in_background": true,
					"prompt": "SCENARIO:sub-bg Check requirements.txt for pinned versions and report."}})}
			}
			return modelserver.Step{Text: "The background agent is checking the requirements."}
		}},
		steps("sub-bg",
			modelserver.Step{Text: "Reading requirements.txt.", ToolUses: tools(read("requirements.txt"))},
			modelserver.Step{Text: "requirements.txt pins requests to 2.32.3; nothing else is needed."}),
		steps("after-compact",
			modelserver.Step{Text: "Checking the fix is still there.", ToolUses: tools(bash("grep -n local_day src/forecast.py", "Find local_day calls"))},
			modelserver.Step{Text: "Earlier we fixed the off-by-one in will_it_rain and added celsius_to_fahrenheit; the fix is still in place."}),
		steps("cmd-review", append([]modelserver.Step{
			{Text: "Reading the file under review.", ToolUses: tools(read("src/forecast.py"))},
			{Text: "Compiling it.", ToolUses: tools(bash("python3 -m py_compile src/forecast.py", "Compile the module"))}},
			modelserver.Step{Text: "Review: no syntax errors; local_day has no docstring for the offset's sign, and will_it_rain's threshold of 0.5 is a magic number."})...),
		steps("c2-plain",
			modelserver.Step{Text: "Looking at the history.", ToolUses: tools(bash("git log --oneline", "Show the history"))},
			modelserver.Step{Text: "There is one commit, the initial import; everything since is uncommitted."}),
		{Name: "skill-weather", Steps: weather},
		{Name: "c4-skill", Respond: func(t modelserver.Turn) modelserver.Step {
			switch {
			case t.Step == 0 && slices.Contains(t.Request.ToolNames(), "Skill"):
				return modelserver.Step{Text: "I'll use the weather-report skill.", ToolUses: tools(modelserver.ToolUse{Name: "Skill", Input: map[string]any{"skill": "weather-report"}})}
			case t.Step == 0:
				return weather[0]
			case t.Step-1 < len(weather):
				return weather[t.Step-1]
			}
			return weather[len(weather)-1]
		}},
		steps("img-look",
			modelserver.Step{Text: "Let me read the logo file too.", ToolUses: tools(read("assets/logo.png"))},
			modelserver.Step{Text: "The logo is a blue square with white dots along its lower part: rain over a blue sky."}),
		steps("other-model",
			modelserver.Step{Text: "Counting the lines of the module.", ToolUses: tools(bash("wc -l src/forecast.py", "Count lines"))},
			modelserver.Step{Text: "src/forecast.py has under twenty lines."}),
	})
}

// sideTitle answers the CLI's side requests (a title for a session, a
// summary of the last one): they offer no tools, and may quote an earlier
// session's prompt, marker and all.
const sideTitle = "Fix the forecast's midnight bug"

// sideAware makes every script answer a request that offers no tools
// with sideTitle, whatever marker it quotes.
func sideAware(scripts []modelserver.Script) []modelserver.Script {
	for i := range scripts {
		sc := scripts[i]
		scripts[i].Respond = func(t modelserver.Turn) modelserver.Step {
			if len(t.Request.Tools) == 0 {
				return modelserver.Step{Text: sideTitle}
			}
			if sc.Respond != nil {
				return sc.Respond(t)
			}
			if t.Step < len(sc.Steps) {
				return sc.Steps[t.Step]
			}
			return modelserver.Step{Text: fmt.Sprintf("Done: scenario %s finished after %d step(s).", sc.Name, t.Step)}
		}
	}
	return scripts
}

// scriptOf is the script a turn starts: its marker's, or the one its
// command's body or skill names; "" for /compact.
func scriptOf(t turn) string {
	switch {
	case strings.HasPrefix(t.Text, "/rain-review"):
		return "cmd-review"
	case strings.HasPrefix(t.Text, "/weather-report"):
		return "skill-weather"
	}
	if _, rest, ok := strings.Cut(t.Text, modelserver.MarkerPrefix); ok {
		name, _, _ := strings.Cut(rest, " ")
		return name
	}
	return ""
}

// agentTool is the name the CLI gives its sub-agent tool: Task, or Agent
// in the newest versions.
func agentTool(t modelserver.Turn) string {
	if slices.Contains(t.Request.ToolNames(), "Agent") {
		return "Agent"
	}
	return "Task"
}
