// Mnemo's plugin for OpenCode: it hands OpenCode's session events to Mnemo's
// hook binary, `mnemo-hook --host opencode <EVENT>`, with a JSON payload on
// its stdin, and puts the memory the hook answers into the system prompt.
//
// Install: `mnemo install opencode` copies this file to
// ~/.config/opencode/plugins/mnemo.js (or <project>/.opencode/plugins/) and
// writes the absolute path of mnemo-hook into INSTALLED_HOOK_BIN below.
//
// Events (OpenCode → the hook's event):
//   session.created, or the first sight of a session  → SessionStart
//   chat.message (the user's prompt)                   → UserPromptSubmit
//   tool.execute.after                                 → PostToolUse
//   session.idle (the turn is over)                    → Stop
//   session.deleted, and OpenCode shutting down        → SessionEnd
// The context that SessionStart and UserPromptSubmit answer is pushed onto
// the system prompt by experimental.chat.system.transform.
//
// It never blocks OpenCode: tool events and turn ends are fire-and-forget
// (the hook is spawned and its stdin written, never awaited; a hook still
// running after KILL_AFTER_MS is killed). The context is awaited at most
// CONTEXT_WAIT_MS, once per session. Every failure is swallowed.
//
// Plain ES module, no dependencies, no build step. OpenCode calls every
// export of a plugin file as a plugin, so the file exports one function.

import { spawn } from "node:child_process";

// The absolute path of mnemo-hook, written here by `mnemo install opencode`.
// Empty: $MNEMO_HOOK_BIN, else mnemo-hook on PATH.
const INSTALLED_HOOK_BIN = "";

const HOST = "opencode";
// How long a system prompt waits for a session's context (SessionStart's,
// and a prompt's recall). A late answer is used from the next request on.
const CONTEXT_WAIT_MS = 2000;
// A hook still running after this long is killed (the hook bounds itself
// well within it: 2 s at SessionStart, 1 s for the other events).
const KILL_AFTER_MS = 5000;
// On shutdown, how long OpenCode waits for the hooks still running, then
// for the SessionEnd hooks.
const DRAIN_MS = 1500;
const END_WAIT_MS = 1000;
// A hook's stdout beyond this is not read.
const MAX_ANSWER_BYTES = 1 << 20;
// The prompt recalls a session keeps in its system prompt, newest last.
const MAX_RECALLS = 5;
// OpenCode names its session titles with the session's id and a system
// prompt that starts so; Mnemo's context has no use there.
const TITLE_PROMPT = "You are a title generator";

/**
 * The plugin: OpenCode calls it once per project directory with its
 * context. options (from a `["…/mnemo.js", {…}]` entry of opencode.json's
 * "plugin", or from a test) may set hookBin, contextWaitMs, killAfterMs,
 * drainMs, endWaitMs and env (the hooks' environment).
 */
export const MnemoPlugin = async (ctx, options) => {
  const opts = options ?? {};
  const env = opts.env ?? process.env;
  if (env.MNEMO_OBSERVER === "1") return {}; // Mnemo's own observer sessions
  const hookBin = opts.hookBin || env.MNEMO_HOOK_BIN || INSTALLED_HOOK_BIN || "mnemo-hook";
  const contextWaitMs = opts.contextWaitMs ?? CONTEXT_WAIT_MS;
  const killAfterMs = opts.killAfterMs ?? KILL_AFTER_MS;
  const drainMs = opts.drainMs ?? DRAIN_MS;
  const endWaitMs = opts.endWaitMs ?? END_WAIT_MS;
  const directory = ctx?.directory || process.cwd();

  const sessions = new Map(); // session id → its state (session())
  const parents = new Map(); // a subagent's session id → its parent's
  const argsByCall = new Map(); // callID → the args tool.execute.before saw
  const running = new Set(); // the promises of the hooks still running
  let warned = false;

  // warn tells OpenCode's log, once, that the hook could not be run.
  function warn(message) {
    if (warned) return;
    warned = true;
    try {
      const log = ctx?.client?.app?.log;
      if (typeof log === "function") {
        Promise.resolve(log.call(ctx.client.app, { body: { service: "mnemo", level: "warn", message } })).catch(() => {});
      }
    } catch {}
  }

  // root follows a subagent's session up to the session the user started:
  // Mnemo records a subagent's tools under its parent, as Claude Code does.
  function root(id) {
    for (let i = 0; i < 64 && parents.has(id); i++) id = parents.get(id);
    return id;
  }

  function session(id) {
    let s = sessions.get(id);
    if (!s) {
      s = { id, cwd: directory, started: false, ended: false, context: null, contextText: "", recall: null, recalls: [], lastText: "" };
      sessions.set(id, s);
    }
    return s;
  }

  // run spawns `hookBin --host opencode event` with payload on its stdin.
  // It returns a promise of the hook's stdout ("" on any failure) when
  // capture is set, else undefined: the caller does not wait. The promise
  // of the hook's exit goes into running either way.
  function run(event, payload, capture) {
    const body = serialise(payload);
    let child;
    try {
      child = spawn(hookBin, ["--host", HOST, event], { env, stdio: ["pipe", capture ? "pipe" : "ignore", "ignore"], windowsHide: true });
    } catch (err) {
      warn(`mnemo: cannot run ${hookBin}: ${err?.message ?? err}`);
      return capture ? Promise.resolve("") : undefined;
    }
    const chunks = [];
    let size = 0;
    const done = new Promise((resolve) => {
      // Unref'd: the running hook keeps the event loop alive, not its timer.
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch {}
      }, killAfterMs);
      timer.unref?.();
      child.on("error", (err) => {
        clearTimeout(timer);
        warn(`mnemo: cannot run ${hookBin}: ${err?.message ?? err}`);
        resolve();
      });
      child.on("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    running.add(done);
    done.then(() => running.delete(done));
    if (capture) {
      child.stdout.on("data", (b) => {
        if (size < MAX_ANSWER_BYTES) chunks.push(b);
        size += b.length;
      });
      child.stdout.on("error", () => {});
    }
    child.stdin.on("error", () => {}); // EPIPE when the hook exits early
    child.stdin.end(body);
    if (!capture) return undefined;
    return done.then(() => Buffer.concat(chunks).toString("utf8"));
  }

  // contextOf reads the hook's answer: the additionalContext of
  // {"hookSpecificOutput":{…}}, "" for {} or anything else.
  function contextOf(answer) {
    try {
      const ctx = JSON.parse(answer)?.hookSpecificOutput?.additionalContext;
      return typeof ctx === "string" ? ctx : "";
    } catch {
      return "";
    }
  }

  // start sends SessionStart once per session; its context is cached.
  function start(s, source) {
    if (s.started) return;
    s.started = true;
    s.context = Promise.resolve(
      run("SessionStart", { hook_event_name: "SessionStart", session_id: s.id, cwd: s.cwd, source }, true),
    ).then((answer) => {
      s.contextText = contextOf(answer);
      return s.contextText;
    });
  }

  // known returns the state of a session the user started (not a
  // subagent's), sending SessionStart at its first sight.
  function known(id) {
    if (!id || parents.has(id)) return null;
    const s = session(id);
    if (!s.ended) start(s, "resume");
    return s;
  }

  function end(s, reason) {
    if (s.ended || !s.started) return undefined;
    s.ended = true;
    return run("SessionEnd", { hook_event_name: "SessionEnd", session_id: s.id, cwd: s.cwd, reason }, true);
  }

  function within(promise, ms) {
    let timer;
    return Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
  }

  const hooks = {
    event: async ({ event }) => {
      try {
        const p = event?.properties ?? {};
        switch (event?.type) {
          case "session.created": {
            const info = p.info ?? {};
            if (!info.id) return;
            if (info.parentID) {
              parents.set(info.id, info.parentID);
              return;
            }
            const s = session(info.id);
            if (info.directory) s.cwd = info.directory;
            start(s, "startup");
            return;
          }
          case "session.idle": {
            if (!p.sessionID || parents.has(p.sessionID)) return;
            const s = known(p.sessionID);
            const payload = { hook_event_name: "Stop", session_id: s.id, cwd: s.cwd, stop_hook_active: false };
            if (s.lastText) payload.last_assistant_message = s.lastText;
            run("Stop", payload, false);
            return;
          }
          case "session.deleted": {
            const id = p.info?.id;
            if (!id) return;
            parents.delete(id);
            const s = sessions.get(id);
            if (s) {
              end(s, "other");
              sessions.delete(id);
            }
            return;
          }
        }
      } catch {}
    },

    "chat.message": async (input, output) => {
      try {
        const s = known(input?.sessionID);
        if (!s) return;
        const prompt = (output?.parts ?? [])
          .filter((part) => part?.type === "text" && !part.synthetic && !part.ignored && typeof part.text === "string")
          .map((part) => part.text)
          .join("\n");
        if (!prompt) return;
        s.lastText = "";
        const recall = Promise.resolve(
          run("UserPromptSubmit", { hook_event_name: "UserPromptSubmit", session_id: s.id, cwd: s.cwd, prompt }, true),
        ).then((answer) => {
          const text = contextOf(answer);
          if (text) s.recalls = [...s.recalls, text].slice(-MAX_RECALLS);
          if (s.recall === recall) s.recall = null;
        });
        s.recall = recall;
      } catch {}
    },

    "tool.execute.before": async (input, output) => {
      try {
        if (input?.callID) argsByCall.set(input.callID, output?.args);
      } catch {}
    },

    "tool.execute.after": async (input, output) => {
      try {
        const args = input?.args ?? argsByCall.get(input?.callID);
        argsByCall.delete(input?.callID);
        if (!input?.sessionID) return;
        const s = known(root(input.sessionID));
        if (!s) return;
        run("PostToolUse", {
          hook_event_name: "PostToolUse",
          session_id: s.id,
          cwd: s.cwd,
          tool_name: input.tool,
          tool_input: args ?? {},
          tool_response: { title: output?.title, output: output?.output, metadata: output?.metadata },
          tool_use_id: input.callID,
        }, false);
      } catch {}
    },

    "experimental.text.complete": async (input, output) => {
      try {
        const s = sessions.get(input?.sessionID);
        if (s && typeof output?.text === "string" && output.text.trim()) s.lastText = output.text;
      } catch {}
    },

    "experimental.chat.system.transform": async (input, output) => {
      try {
        if (!Array.isArray(output?.system)) return;
        if (output.system[0]?.startsWith?.(TITLE_PROMPT)) return;
        const s = known(input?.sessionID);
        if (!s) return;
        const waits = [s.context, s.recall].filter(Boolean);
        if (waits.length) await within(Promise.all(waits), contextWaitMs);
        if (s.contextText) output.system.push(s.contextText);
        for (const text of s.recalls) output.system.push(text);
      } catch {}
    },

    // OpenCode shutting down: let the hooks still running finish, then end
    // every session this process started.
    dispose: async () => {
      try {
        await within(Promise.allSettled([...running]), drainMs);
        const ends = [];
        for (const s of sessions.values()) {
          const p = end(s, "other");
          if (p) ends.push(p);
        }
        if (ends.length) await within(Promise.allSettled(ends), endWaitMs);
      } catch {}
    },
  };
  return hooks;
};

// serialise writes a payload as JSON. Tool metadata that JSON cannot
// write as it is (a cycle, a BigInt) is written without the objects seen
// before and with BigInts as strings, else left out.
function serialise(payload) {
  try {
    return JSON.stringify(payload);
  } catch {}
  try {
    const seen = new WeakSet();
    return JSON.stringify(payload, (key, value) => {
      if (typeof value === "bigint") return value.toString();
      if (typeof value === "object" && value !== null) {
        if (seen.has(value)) return undefined;
        seen.add(value);
      }
      return value;
    });
  } catch {}
  return JSON.stringify({ ...payload, tool_input: {}, tool_response: {} });
}
