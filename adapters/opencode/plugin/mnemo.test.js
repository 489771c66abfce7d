// Tests of the OpenCode plugin with node's test runner (`node --test` in this
// folder): the plugin is loaded with a fake OpenCode context and a recorder
// (testdata/recorder.mjs) in place of mnemo-hook; each hook is driven with the
// inputs OpenCode 1.18.33 gives it (see ../testdata/payloads/).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { MnemoPlugin } from "./mnemo.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const recorder = path.join(here, "testdata", "recorder.mjs");
const project = "/work/proj";
const START = '<mnemo-context project="proj" source="startup">fixed add in calc.py</mnemo-context>';
const RECALL = '<mnemo-context project="proj" source="prompt">- #7 · calc.py: add returns a+b</mnemo-context>';

// world makes a temporary folder for the recorder's files and the hooks'
// environment (a temporary HOME; nothing of the real one).
function world(t, extraEnv = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mnemo-opencode-"));
  const rec = path.join(dir, "rec");
  fs.mkdirSync(rec);
  t.after(async () => {
    // A hook run the test did not wait for may still be writing its .done
    // (after its .json): let it finish (at most 2 s), then remove.
    const running = () => fs.readdirSync(rec).some((f) => f.endsWith(".tmp") || (f.endsWith(".json") && !fs.existsSync(path.join(rec, f.replace(/\.json$/, ".done")))));
    for (const until = Date.now() + 2000; Date.now() < until && running(); ) await sleep(10);
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
  });
  const env = { PATH: process.env.PATH, HOME: dir, REC_DIR: rec, ...extraEnv };
  return {
    dir,
    env,
    // records lists what each hook run got, oldest first.
    records() {
      return fs
        .readdirSync(rec)
        .filter((f) => f.endsWith(".json"))
        .sort((a, b) => (BigInt(a.split("-")[0]) < BigInt(b.split("-")[0]) ? -1 : 1))
        .map((f) => {
          const r = JSON.parse(fs.readFileSync(path.join(rec, f), "utf8"));
          r.payload = JSON.parse(r.stdin);
          const done = path.join(rec, f.replace(/\.json$/, ".done"));
          r.done = () => fs.existsSync(done);
          r.doneAt = () => Number(fs.readFileSync(done, "utf8"));
          return r;
        });
    },
    of(event) {
      return this.records().filter((r) => r.payload.hook_event_name === event);
    },
    // waitFor polls until the records of event number n, and returns them.
    async waitFor(event, n = 1, ms = 5000) {
      const until = Date.now() + ms;
      for (;;) {
        const got = this.of(event);
        if (got.length >= n) return got;
        if (Date.now() > until) assert.fail(`${event}: ${got.length} hook runs after ${ms} ms, want ${n}`);
        await sleep(20);
      }
    },
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function load(w, options = {}) {
  const ctx = { directory: project, worktree: project, project: { id: "global", worktree: project } };
  return MnemoPlugin(ctx, { hookBin: recorder, env: w.env, ...options });
}

// OpenCode's inputs, shaped as 1.18.33 gives them.
const created = (id, extra = {}) => ({
  event: { id: "evt_1", type: "session.created", properties: { sessionID: id, info: { id, slug: "s", projectID: "global", directory: project, title: "New session", version: "1.18.33", time: { created: 1, updated: 1 }, ...extra } } },
});
const idle = (id) => ({ event: { id: "evt_2", type: "session.idle", properties: { sessionID: id } } });
const deleted = (id) => ({ event: { id: "evt_3", type: "session.deleted", properties: { sessionID: id, info: { id, directory: project } } } });
const message = (id, ...texts) => [
  { sessionID: id, agent: "build", model: { providerID: "mock", modelID: "m" }, messageID: "msg_1" },
  { message: { id: "msg_1", role: "user", sessionID: id, agent: "build", model: { providerID: "mock", modelID: "m" } }, parts: texts.map((text, i) => (typeof text === "string" ? { id: `prt_${i}`, type: "text", text, sessionID: id, messageID: "msg_1" } : text)) },
];
const system = (id, first = "You are opencode, an interactive CLI tool") => [{ sessionID: id, model: { id: "m" } }, { system: [first] }];
const editArgs = { filePath: `${project}/calc.py`, oldString: "a - b", newString: "a + b" };
const editResult = { title: "calc.py", output: "Edit applied successfully.", metadata: { diagnostics: {}, diff: "-a - b\n+a + b\n", truncated: false } };

test("session.created runs SessionStart once, and its context is in every system prompt of the session", async (t) => {
  const w = world(t, { REC_ANSWER_SessionStart: JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: START } }) });
  const hooks = await load(w);
  await hooks.event(created("ses_a"));
  const [input, output] = system("ses_a");
  await hooks["experimental.chat.system.transform"](input, output);
  assert.deepEqual(output.system, ["You are opencode, an interactive CLI tool", START]);
  const [input2, output2] = system("ses_a");
  await hooks["experimental.chat.system.transform"](input2, output2);
  assert.deepEqual(output2.system, ["You are opencode, an interactive CLI tool", START]);

  const runs = w.of("SessionStart");
  assert.equal(runs.length, 1, "SessionStart runs once per session");
  assert.deepEqual(runs[0].args, ["--host", "opencode", "SessionStart"]);
  assert.deepEqual(runs[0].payload, { hook_event_name: "SessionStart", session_id: "ses_a", cwd: project, source: "startup" });
});

test("a session first seen by a prompt starts with source resume, and the prompt's recall joins the system prompt", async (t) => {
  const w = world(t, {
    REC_ANSWER_SessionStart: JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: START } }),
    REC_ANSWER_UserPromptSubmit: JSON.stringify({ hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: RECALL } }),
  });
  const hooks = await load(w);
  await hooks["chat.message"](...message("ses_b", "what did we change in calc.py?", { id: "prt_s", type: "text", text: "synthetic note", synthetic: true }, { id: "prt_f", type: "file", mime: "text/plain", url: "file:///x" }));
  const [input, output] = system("ses_b");
  await hooks["experimental.chat.system.transform"](input, output);
  assert.deepEqual(output.system, ["You are opencode, an interactive CLI tool", START, RECALL]);

  const [start] = w.of("SessionStart");
  assert.equal(start.payload.source, "resume");
  const [prompt] = w.of("UserPromptSubmit");
  assert.deepEqual(prompt.args, ["--host", "opencode", "UserPromptSubmit"]);
  assert.deepEqual(prompt.payload, { hook_event_name: "UserPromptSubmit", session_id: "ses_b", cwd: project, prompt: "what did we change in calc.py?" });

  // The recall stays for the rest of the session; the next prompt's joins it.
  const [input2, output2] = system("ses_b");
  await hooks["experimental.chat.system.transform"](input2, output2);
  assert.deepEqual(output2.system, ["You are opencode, an interactive CLI tool", START, RECALL]);
  await hooks["chat.message"](...message("ses_b", "and mul?"));
  const [input3, output3] = system("ses_b");
  await hooks["experimental.chat.system.transform"](input3, output3);
  assert.deepEqual(output3.system, ["You are opencode, an interactive CLI tool", START, RECALL, RECALL]);
  assert.equal(w.of("SessionStart").length, 1);
});

test("tool.execute.after runs PostToolUse with OpenCode's tool as is, and does not wait for the hook", async (t) => {
  const w = world(t, { REC_SLEEP_PostToolUse: "1500" });
  const hooks = await load(w);
  await hooks.event(created("ses_c"));
  await hooks["tool.execute.before"]({ tool: "edit", sessionID: "ses_c", callID: "call_1" }, { args: editArgs });
  const began = Date.now();
  await hooks["tool.execute.after"]({ tool: "edit", sessionID: "ses_c", callID: "call_1", args: editArgs }, editResult);
  const took = Date.now() - began;
  assert.ok(took < 500, `tool.execute.after took ${took} ms`);

  const [run] = await w.waitFor("PostToolUse");
  assert.equal(run.done(), false, "the hook is still running when tool.execute.after has returned");
  assert.deepEqual(run.args, ["--host", "opencode", "PostToolUse"]);
  assert.deepEqual(run.payload, {
    hook_event_name: "PostToolUse",
    session_id: "ses_c",
    cwd: project,
    tool_name: "edit",
    tool_input: editArgs,
    tool_response: editResult,
    tool_use_id: "call_1",
  });
  // The hook finishes on its own: nothing killed it.
  for (let i = 0; i < 150 && !run.done(); i++) await sleep(20);
  assert.equal(run.done(), true);
});

test("tool.execute.after without args takes those tool.execute.before saw for its callID", async (t) => {
  const w = world(t);
  const hooks = await load(w);
  const args = { command: "sh test.sh", description: "Run the tests" };
  await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_d", callID: "call_9" }, { args });
  await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_d", callID: "call_9" }, { title: "sh test.sh", output: "ok\n", metadata: { exit: 0 } });
  const [run] = await w.waitFor("PostToolUse");
  assert.deepEqual(run.payload.tool_input, args);
  assert.equal(run.payload.tool_name, "bash");
  assert.deepEqual(run.payload.tool_response, { title: "sh test.sh", output: "ok\n", metadata: { exit: 0 } });
});

test("session.idle runs Stop with the turn's last text, without waiting; session.deleted runs SessionEnd", async (t) => {
  const w = world(t, { REC_SLEEP_Stop: "1500" });
  const hooks = await load(w);
  await hooks.event(created("ses_e"));
  await hooks["chat.message"](...message("ses_e", "fix calc.py"));
  await hooks["experimental.text.complete"]({ sessionID: "ses_e", messageID: "msg_2", partID: "prt_1" }, { text: "Looking." });
  await hooks["experimental.text.complete"]({ sessionID: "ses_e", messageID: "msg_3", partID: "prt_2" }, { text: "Fixed add and mul." });
  const began = Date.now();
  await hooks.event(idle("ses_e"));
  assert.ok(Date.now() - began < 500);
  const [stop] = await w.waitFor("Stop");
  assert.equal(stop.done(), false);
  assert.deepEqual(stop.payload, { hook_event_name: "Stop", session_id: "ses_e", cwd: project, stop_hook_active: false, last_assistant_message: "Fixed add and mul." });

  await hooks.event(deleted("ses_e"));
  const [end] = await w.waitFor("SessionEnd");
  assert.deepEqual(end.args, ["--host", "opencode", "SessionEnd"]);
  assert.deepEqual(end.payload, { hook_event_name: "SessionEnd", session_id: "ses_e", cwd: project, reason: "other" });
  // A second deletion, or the shutdown after it, does not end it again.
  await hooks.event(deleted("ses_e"));
  await hooks.dispose();
  assert.equal(w.of("SessionEnd").length, 1);
});

test("dispose lets running hooks finish, then ends every open session before it returns", async (t) => {
  const w = world(t, { REC_SLEEP_Stop: "300" });
  // Bounds far above what the hooks take: on a machine at load 15 a hook
  // process took more than the default second to start, and dispose
  // rightly stopped waiting for it. Here it must wait, and it returns as
  // soon as they are done.
  const hooks = await load(w, { drainMs: 15000, endWaitMs: 15000 });
  await hooks.event(created("ses_f"));
  await hooks.event(created("ses_g"));
  await hooks.event(idle("ses_f"));
  await hooks.dispose();
  const [stop] = w.of("Stop");
  assert.equal(stop.done(), true, "dispose waited for the Stop hook");
  const ends = w.of("SessionEnd");
  assert.deepEqual(ends.map((r) => r.payload.session_id).sort(), ["ses_f", "ses_g"]);
  assert.ok(ends.every((r) => r.started >= stop.doneAt()), "SessionEnd ran after Stop finished");
  assert.ok(ends.every((r) => r.done()), "dispose waited for the SessionEnd hooks");
});

test("the context is awaited at most contextWaitMs; a late answer serves the next request", async (t) => {
  const w = world(t, {
    REC_SLEEP_SessionStart: "1200",
    REC_ANSWER_SessionStart: JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: START } }),
  });
  const hooks = await load(w, { contextWaitMs: 200 });
  await hooks.event(created("ses_h"));
  const [input, output] = system("ses_h");
  const began = Date.now();
  await hooks["experimental.chat.system.transform"](input, output);
  const took = Date.now() - began;
  assert.ok(took >= 150 && took < 800, `the first system prompt waited ${took} ms`);
  assert.deepEqual(output.system, ["You are opencode, an interactive CLI tool"]);
  const [run] = await w.waitFor("SessionStart");
  for (let i = 0; i < 150 && !run.done(); i++) await sleep(20);
  await sleep(50);
  const [input2, output2] = system("ses_h");
  await hooks["experimental.chat.system.transform"](input2, output2);
  assert.deepEqual(output2.system, ["You are opencode, an interactive CLI tool", START]);
});

test("a hook that outlives killAfterMs is killed", async (t) => {
  const w = world(t);
  // A hook that starts at once (sh, not node) and would run for 30 s.
  const hook = path.join(w.dir, "slow-hook");
  const pidFile = path.join(w.dir, "pid");
  fs.writeFileSync(hook, `#!/bin/sh\necho $$ > ${JSON.stringify(pidFile)}.tmp && mv ${JSON.stringify(pidFile)}.tmp ${JSON.stringify(pidFile)}\nexec sleep 30\n`, { mode: 0o755 });
  const hooks = await load(w, { hookBin: hook, killAfterMs: 1500 });
  await hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_i", callID: "c", args: { filePath: "/work/proj/a" } }, { title: "a", output: "", metadata: {} });
  for (let i = 0; i < 250 && !fs.existsSync(pidFile); i++) await sleep(20);
  const pid = Number(fs.readFileSync(pidFile, "utf8"));
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const began = Date.now();
  for (let i = 0; i < 250 && alive(); i++) await sleep(20);
  assert.equal(alive(), false, "the hook was not killed");
  assert.ok(Date.now() - began < 4000);
});

test("subagent sessions: their tools go to the parent session; no SessionStart, Stop or context of their own", async (t) => {
  const w = world(t, { REC_ANSWER_SessionStart: JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: START } }) });
  const hooks = await load(w);
  await hooks.event(created("ses_parent"));
  await hooks.event(created("ses_child", { parentID: "ses_parent", title: "Read the notes (@general subagent)" }));
  await hooks["chat.message"](...message("ses_child", "SUBAGENT: read notes.md"));
  const [input, output] = system("ses_child");
  await hooks["experimental.chat.system.transform"](input, output);
  assert.deepEqual(output.system, ["You are opencode, an interactive CLI tool"]);
  await hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_child", callID: "call_7", args: { filePath: `${project}/notes.md` } }, { title: "notes.md", output: "# Notes", metadata: {} });
  await hooks.event(idle("ses_child"));
  const [run] = await w.waitFor("PostToolUse");
  assert.equal(run.payload.session_id, "ses_parent");
  await hooks.dispose();
  assert.deepEqual(w.of("SessionStart").map((r) => r.payload.session_id), ["ses_parent"]);
  assert.deepEqual(w.of("SessionEnd").map((r) => r.payload.session_id), ["ses_parent"]);
  assert.equal(w.of("Stop").length, 0);
  assert.equal(w.of("UserPromptSubmit").length, 0);
});

test("the title generator's system prompt gets no context and does not wait", async (t) => {
  const w = world(t, { REC_SLEEP_SessionStart: "1000", REC_ANSWER_SessionStart: JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: START } }) });
  const hooks = await load(w);
  await hooks.event(created("ses_t"));
  const [input, output] = system("ses_t", "You are a title generator. You output ONLY a thread title.");
  const began = Date.now();
  await hooks["experimental.chat.system.transform"](input, output);
  assert.ok(Date.now() - began < 300);
  assert.equal(output.system.length, 1);
  // A system prompt without a session (OpenCode's agent generator) neither.
  const out = { system: ["Generate an agent"] };
  await hooks["experimental.chat.system.transform"]({ model: { id: "m" } }, out);
  assert.deepEqual(out.system, ["Generate an agent"]);
});

test("answers that are not a hook's context inject nothing", async (t) => {
  for (const answer of ["not json", "{}", '{"hookSpecificOutput":{"hookEventName":"SessionStart"}}', '{"hookSpecificOutput":{"additionalContext":7}}', "[]"]) {
    const w = world(t, { REC_ANSWER_SessionStart: answer, REC_ANSWER_UserPromptSubmit: answer });
    const hooks = await load(w);
    await hooks.event(created("ses_j"));
    await hooks["chat.message"](...message("ses_j", "hello"));
    const [input, output] = system("ses_j");
    await hooks["experimental.chat.system.transform"](input, output);
    assert.deepEqual(output.system, ["You are opencode, an interactive CLI tool"], `answer ${answer}`);
  }
});

test("MNEMO_OBSERVER=1: the plugin does nothing", async (t) => {
  const w = world(t, { MNEMO_OBSERVER: "1" });
  const hooks = await load(w);
  assert.deepEqual(hooks, {});
});

test("a missing hook binary breaks nothing", async (t) => {
  const w = world(t);
  const hooks = await load(w, { hookBin: path.join(w.dir, "no-such-mnemo-hook") });
  await hooks.event(created("ses_k"));
  await hooks["chat.message"](...message("ses_k", "hello"));
  await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_k", callID: "c", args: { command: "true" } }, { title: "", output: "", metadata: {} });
  const [input, output] = system("ses_k");
  const began = Date.now();
  await hooks["experimental.chat.system.transform"](input, output);
  assert.ok(Date.now() - began < 1000);
  assert.equal(output.system.length, 1);
  await hooks.event(idle("ses_k"));
  await hooks.dispose();
});

test("tool metadata JSON cannot write as it is still reaches the hook", async (t) => {
  const w = world(t);
  const hooks = await load(w);
  const metadata = { count: 10n, nested: {} };
  metadata.nested.self = metadata;
  await hooks["tool.execute.after"]({ tool: "glob", sessionID: "ses_l", callID: "c", args: { pattern: "*.py" } }, { title: "", output: "calc.py", metadata });
  const [run] = await w.waitFor("PostToolUse");
  assert.deepEqual(run.payload.tool_response, { title: "", output: "calc.py", metadata: { count: "10", nested: {} } });
});

// Where the hook binary comes from: options.hookBin, else $MNEMO_HOOK_BIN,
// else the path `mnemo install opencode` writes into the copied plugin,
// else mnemo-hook on PATH.
test("the hook binary: $MNEMO_HOOK_BIN, else the installed path, else mnemo-hook on PATH", async (t) => {
  const w = world(t);
  const bin = path.join(w.dir, "bin");
  fs.mkdirSync(bin);
  // mnemo-hook on PATH: a copy of the recorder that tags its records.
  const tagged = (tag) => `#!/bin/sh\nREC_ANSWER_SessionStart='{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"${tag}"}}' exec ${JSON.stringify(recorder)} "$@"\n`;
  fs.writeFileSync(path.join(bin, "mnemo-hook"), tagged("from PATH"), { mode: 0o755 });
  const installedBin = path.join(w.dir, "installed-mnemo-hook");
  fs.writeFileSync(installedBin, tagged("from the installed path"), { mode: 0o755 });
  const envBin = path.join(w.dir, "env-mnemo-hook");
  fs.writeFileSync(envBin, tagged("from MNEMO_HOOK_BIN"), { mode: 0o755 });

  // The copy the installer makes: the same file with the constant set.
  const source = fs.readFileSync(path.join(here, "mnemo.js"), "utf8");
  const line = 'const INSTALLED_HOOK_BIN = "";';
  assert.equal(source.split(line).length, 2, "mnemo.js has exactly one INSTALLED_HOOK_BIN line");
  const installed = path.join(w.dir, "plugins", "mnemo.js");
  fs.mkdirSync(path.dirname(installed));
  fs.writeFileSync(installed, source.replace(line, `const INSTALLED_HOOK_BIN = ${JSON.stringify(installedBin)};`));
  const copy = (await import(pathToFileURL(installed).href)).MnemoPlugin;

  const contextOf = async (plugin, env) => {
    const hooks = await plugin({ directory: project }, { env: { ...w.env, ...env } });
    await hooks.event(created("ses_bin"));
    const [input, output] = system("ses_bin");
    await hooks["experimental.chat.system.transform"](input, output);
    return output.system[1];
  };
  const PATH = `${bin}:${process.env.PATH}`;
  assert.equal(await contextOf(copy, { PATH, MNEMO_HOOK_BIN: envBin }), "from MNEMO_HOOK_BIN");
  assert.equal(await contextOf(copy, { PATH }), "from the installed path");
  assert.equal(await contextOf(MnemoPlugin, { PATH }), "from PATH");
});
