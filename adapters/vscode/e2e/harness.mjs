// The real-VS-Code end-to-end harness for the Mnemo extension. run.sh starts
// code-server with the packaged extension installed, then runs this twice:
//
//   node harness.mjs drive    headless Chromium (puppeteer-core) opens the
//                             workbench on the workspace, waits for the
//                             extension to be up, opens each file through Quick
//                             Open, types a statement into its function body
//                             and saves it with Ctrl+S,
//                             waits for the idle summary, then closes the page
//   node harness.mjs verify   after code-server has stopped: what is left in
//                             Mnemo's memory, read with the mnemo command line
//
// Every wait is on a condition with a deadline, never a fixed sleep. The
// configuration comes from the environment (run.sh sets it):
//
//   MNEMO_E2E_URL        code-server's base URL (drive)
//   MNEMO_E2E_WORKSPACE  the workspace folder (a git repository)
//   MNEMO_E2E_PROJECT    the project Mnemo should file the work under
//   MNEMO_E2E_FILES      the files to edit, comma-separated, relative to the workspace
//   MNEMO_E2E_RUN        the run's folder: chromium profile, pid file, screenshots, state
//   MNEMO_E2E_EXTENSIONS code-server's extensions folder (the VSIX is installed there)
//   MNEMO_E2E_CHROMIUM   the chromium binary (default: chromium on PATH)
//   MNEMO_BIN            the mnemo binary used for the checks
//   MNEMO_HOME           Mnemo's data directory (the same one the extension uses)

import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import puppeteer from 'puppeteer-core';

const run = promisify(execFile);

const env = (name) => {
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new Error(`${name} is not set`);
  }
  return value;
};

const config = {
  workspace: env('MNEMO_E2E_WORKSPACE'),
  project: env('MNEMO_E2E_PROJECT'),
  files: env('MNEMO_E2E_FILES').split(',').filter((f) => f !== ''),
  runDir: env('MNEMO_E2E_RUN'),
  extensions: env('MNEMO_E2E_EXTENSIONS'),
  mnemo: env('MNEMO_BIN'),
  home: env('MNEMO_HOME'),
};
const statePath = path.join(config.runDir, 'harness-state.json');

const t0 = Date.now();
const marks = {};
function mark(what, key) {
  const ms = Date.now() - t0;
  if (key !== undefined) {
    marks[key] = ms;
  }
  console.log(`[+${String(ms).padStart(6)} ms] ${what}`);
}

/** Polls check (which returns a value, or undefined to go on) until deadline. */
async function waitFor(what, timeoutMs, check, intervalMs = 150) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) {
        return value;
      }
    } catch (error) {
      last = error;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Runs the mnemo command line on the test's data directory and parses its JSON. */
async function mnemo(...args) {
  const { stdout } = await run(config.mnemo, args, {
    env: { ...process.env, MNEMO_HOME: config.home },
    timeout: 15_000,
    maxBuffer: 16 << 20,
  });
  return JSON.parse(stdout);
}

/** Whether a daemon serves the data directory (without starting one). */
async function daemonRunning() {
  try {
    await run(config.mnemo, ['daemon', 'status'], { env: { ...process.env, MNEMO_HOME: config.home }, timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}

/** The editor's sessions: those made by the VS Code extension for the workspace. */
async function editorSessions() {
  const { sessions } = await mnemo('sessions', '--json');
  return sessions.filter((s) => s.platform === 'vscode' && s.cwd === config.workspace);
}

/**
 * The observations that record a save of file: found with `mnemo search --file`,
 * read in full with `mnemo get`, kept when the file is among the modified ones.
 */
async function savesOf(file) {
  const names = [file, path.join(config.workspace, file)]; // relative to the workspace, or absolute
  const { hits } = await mnemo('search', '--json', '--project', config.project, '--file', file, '--limit', '100');
  if (hits.length === 0) {
    return [];
  }
  const { observations } = await mnemo('get', '--json', ...hits.map((h) => String(h.id)));
  return observations.filter((o) => (o.filesModified ?? []).some((f) => names.includes(f)));
}

async function counts() {
  return (await mnemo('status', '--json')).counts;
}

function chromiumPath() {
  if (process.env.MNEMO_E2E_CHROMIUM) {
    return process.env.MNEMO_E2E_CHROMIUM;
  }
  return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
}

async function press(page, ...keys) {
  for (const key of keys) {
    await page.keyboard.down(key);
  }
  for (const key of [...keys].reverse()) {
    await page.keyboard.up(key);
  }
}

/** The text of the Mnemo status bar item, or undefined while it is not shown. */
function statusItemText(page) {
  return page.evaluate(() => {
    const item = [...document.querySelectorAll('.statusbar-item')].find((el) =>
      /mnemo/i.test(el.id) || /mnemo/i.test(el.getAttribute('aria-label') ?? ''),
    );
    if (!item) {
      return undefined;
    }
    const icons = [...item.querySelectorAll('.codicon')].map((i) => [...i.classList].find((c) => c.startsWith('codicon-') && c !== 'codicon-modifier-spin'));
    return { id: item.id, text: item.textContent.trim(), icons };
  });
}

/** The rows of the visible tree views, as their text. */
function treeRows(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.pane-body .monaco-list-row')].map((row) => row.textContent.replace(/\s+/g, ' ').trim()),
  );
}

/** Clicks the first tree row whose text includes text. */
async function clickTreeRow(page, text) {
  const row = await page.evaluateHandle(
    (t) => [...document.querySelectorAll('.pane-body .monaco-list-row')].find((r) => r.textContent.includes(t)) ?? null,
    text,
  );
  const el = row.asElement();
  if (el === null) {
    throw new Error(`no tree row with ${JSON.stringify(text)}`);
  }
  await el.click();
}

/**
 * The Mnemo view, opened from the Command Palette: this window's session is listed and
 * marked; expanded, it shows the observation of a save; a click opens that record as a
 * document.
 */
async function checkMemoryView(page, title) {
  await press(page, 'Control', 'Shift', 'KeyP');
  await page.waitForSelector('.quick-input-widget .quick-input-box input', { visible: true, timeout: 10_000 });
  await page.keyboard.type('Mnemo: Focus on Memory View');
  await waitFor('the command to focus the Mnemo view', 15_000, () =>
    page.evaluate(() => {
      const row = document.querySelector('.quick-input-widget .quick-input-list .monaco-list-row[data-index="0"]');
      return row !== null && /Focus on Memory View/.test(row.getAttribute('aria-label') ?? row.textContent) ? true : undefined;
    }),
  );
  await page.keyboard.press('Enter');
  const rows = await waitFor('the Mnemo view to list this window\'s session', 20_000, async () => {
    const r = await treeRows(page);
    return r.some((t) => t.includes('shop · vscode (this window)')) ? r : undefined;
  });
  mark(`Mnemo view lists ${rows.length} row(s): "${rows[0]}"`);
  await clickTreeRow(page, '(this window)');
  await waitFor(`the session's records to show "${title}"`, 20_000, async () =>
    (await treeRows(page)).some((t) => t.includes(title)) ? true : undefined,
  );
  mark('the session expands into its records');
  await clickTreeRow(page, title);
  const tab = await waitFor('the record to open in a tab', 20_000, () =>
    page.evaluate(() =>
      [...document.querySelectorAll('.tabs-container .tab')].map((t) => t.textContent.trim()).find((t) => /\.md/.test(t)),
    ),
  );
  mark(`the record opened in tab "${tab}"`, 'view');
  return tab;
}

/** Opens a file of the workspace through Quick Open (Ctrl+P) and waits for its editor. */
async function quickOpen(page, file) {
  const name = path.basename(file);
  await press(page, 'Control', 'KeyP');
  await page.waitForSelector('.quick-input-widget .quick-input-box input', { visible: true, timeout: 10_000 });
  await page.keyboard.type(file);
  // The row appears once the file search (ripgrep) has answered.
  await waitFor(`Quick Open to list ${file}`, 15_000, () =>
    page.evaluate((n) => {
      const row = document.querySelector('.quick-input-widget .quick-input-list .monaco-list-row[data-index="0"]');
      return row !== null && (row.getAttribute('aria-label') ?? row.textContent).includes(n) ? true : undefined;
    }, name),
  );
  await page.keyboard.press('Enter');
  await waitFor(`the editor of ${file}`, 15_000, () =>
    page.evaluate((n) => {
      const tab = document.querySelector('.tabs-container .tab.active');
      const focused = document.activeElement?.closest('.editor-instance .monaco-editor');
      const label = tab?.getAttribute('data-resource-name') ?? tab?.getAttribute('aria-label') ?? '';
      return label.startsWith(n) && focused ? true : undefined;
    }, name),
  );
}

/**
 * The edit of each file: a statement typed into the body of its function, before the
 * return, calling an identifier that is nowhere else.
 */
const edits = {
  'cart.py': { fn: 'total', identifier: 'applyLoyaltyDiscount', line: 'items = applyLoyaltyDiscount(items)' },
  'checkout.py': { fn: 'checkout', identifier: 'reserveStockFor', line: 'reserveStockFor(cart)' },
};

/**
 * Types a statement into the function body of the open file (line 2, before the
 * return: Home goes to its first non-blank character, Enter keeps the indentation),
 * saves it with Ctrl+S, waits until it is on disk.
 */
async function editAndSave(page, file, line) {
  const abs = path.join(config.workspace, file);
  await press(page, 'Control', 'Home');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Home');
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
  await waitFor(`${file} to be dirty`, 5_000, () =>
    page.evaluate(() => document.querySelector('.tabs-container .tab.active')?.classList.contains('dirty') || undefined),
  );
  await press(page, 'Control', 'KeyS');
  await waitFor(`${file} to be saved`, 10_000, async () => {
    const onDisk = fs.readFileSync(abs, 'utf8').includes(line);
    const clean = await page.evaluate(() => {
      const tab = document.querySelector('.tabs-container .tab.active');
      return tab !== null && !tab.classList.contains('dirty');
    });
    return onDisk && clean ? true : undefined;
  });
}

async function drive() {
  const url = env('MNEMO_E2E_URL');
  const profile = path.join(config.runDir, 'chromium');
  const browser = await puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    userDataDir: profile,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--no-default-browser-check',
      '--window-size=1280,800',
    ],
    defaultViewport: { width: 1280, height: 800 },
  });
  const pid = browser.process()?.pid;
  if (pid !== undefined) {
    // run.sh ends this process group if the harness itself dies.
    fs.writeFileSync(path.join(config.runDir, 'chromium.pid'), `${pid}\n`);
  }
  mark('browser launched', 'browser');
  let page;
  const state = {};
  try {
    page = await browser.newPage();
    page.on('pageerror', (error) => console.log(`page error: ${error.message}`));
    await page.goto(`${url}/?folder=${encodeURIComponent(config.workspace)}`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('.monaco-workbench', { timeout: 30_000 });
    mark('workbench shown', 'workbench');

    // The extension is up when its status bar item shows the observation count
    // (the sidecar runs and answered mnemo/status through the daemon it started).
    const item = await waitFor('the Mnemo status bar item to show a count', 60_000, async () => {
      const it = await statusItemText(page);
      return it !== undefined && it.icons.includes('codicon-database') && /^\d[\d,]*$/.test(it.text) ? it : undefined;
    });
    mark(`extension active: status bar "${item.text}" (${item.id})`, 'activated');
    if (!(await daemonRunning())) {
      throw new Error('the status bar shows a count but no daemon runs for MNEMO_HOME');
    }
    // The sidecar started the daemon with its own executable: the one in the VSIX.
    const { pid } = await mnemo('status', '--json');
    state.daemonExe = fs.readlinkSync(`/proc/${pid}/exe`);
    mark(`daemon pid ${pid} runs ${state.daemonExe}`);
    const [session] = await waitFor('the editor session in Mnemo', 10_000, async () => {
      const s = await editorSessions();
      return s.length > 0 ? s : undefined;
    });
    mark(`session ${session.id}: contentSessionId ${session.contentSessionId}, project ${session.project}`);
    state.contentSessionId = session.contentSessionId;

    for (const [i, file] of config.files.entries()) {
      await quickOpen(page, file);
      mark(`opened ${file} with Quick Open`);
      await editAndSave(page, file, edits[file].line);
      mark(`typed into ${edits[file].fn} of ${file} and saved it with Ctrl+S`, `saved${i + 1}`);
    }

    let saves0Title;
    for (const file of config.files) {
      const saves = await waitFor(`an observation of the save of ${file}`, 20_000, async () => {
        const s = await savesOf(file);
        return s.length > 0 ? s : undefined;
      });
      saves0Title ??= saves[0].title;
      mark(`observation #${saves[0].id} records the save of ${file}`);
    }
    mark('all saves are observations', 'observed');

    // Nothing touches the page now: the editor goes idle, and the extension
    // (and the sidecar's own timer) asks Mnemo for the Stop stage.
    const c = await waitFor('the idle summary', 60_000, async () => {
      const n = await counts();
      return n.summaries >= 1 && n.queued === 0 ? n : undefined;
    }, 250);
    mark(`idle summary made: ${c.summaries} summary, ${c.observations} observations`, 'summarized');
    state.summariesBeforeClose = c.summaries;
    // The status bar refreshes shortly after a save: it shows the new count.
    const shown = await waitFor(`the status bar to show ${c.observations} observations`, 40_000, async () => {
      const it = await statusItemText(page);
      return it?.text === String(c.observations) ? it : undefined;
    }, 250);
    mark(`status bar shows "${shown.text}"`);
    state.viewTab = await checkMemoryView(page, saves0Title);

    const open = (await editorSessions()).find((s) => s.contentSessionId === state.contentSessionId);
    state.statusBeforeClose = open?.status;
    mark(`session status before the page closes: ${open?.status}`);

    await page.screenshot({ path: path.join(config.runDir, 'workbench.png') });
    // Closing the page the way a user closes the tab: the workbench unloads and
    // tells the server it is going, so the server ends the extension host.
    await page.close({ runBeforeUnload: false });
    page = undefined;
    mark('page closed', 'closed');
    const ended = await waitFor('the session to end after the window closed', 30_000, async () => {
      const s = (await editorSessions()).find((x) => x.contentSessionId === state.contentSessionId);
      return s?.status === 'completed' ? s : undefined;
    }, 250);
    mark(`session ${ended.id} completed (SessionEnd)`, 'ended');
  } catch (error) {
    if (page !== undefined) {
      try {
        await page.screenshot({ path: path.join(config.runDir, 'failure.png') });
        console.log(`screenshot: ${path.join(config.runDir, 'failure.png')}`);
      } catch {
        // The page may be gone.
      }
    }
    throw error;
  } finally {
    fs.writeFileSync(statePath, JSON.stringify({ ...state, marks }, null, 2));
    await browser.close();
    mark('browser closed');
  }
}

async function verify() {
  const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
  const failures = [];
  const check = (ok, what) => {
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) {
      failures.push(what);
    }
  };

  const sessions = await editorSessions();
  check(sessions.length === 1, `exactly one editor session for the workspace (found ${sessions.length})`);
  const session = sessions.find((s) => s.contentSessionId === state.contentSessionId);
  check(session !== undefined, `the session is the editor's (contentSessionId ${state.contentSessionId})`);
  // With telemetry off (as here, and in any build without telemetry such as
  // code-server or VSCodium) vscode.env.sessionId is the constant
  // "someValue.sessionId" of VS Code's NullTelemetryService: every window would
  // share one content session. The id must be this window's own.
  const csid = state.contentSessionId;
  check(
    typeof csid === 'string' && csid !== '' && !csid.startsWith('editor-') && !csid.startsWith('someValue.'),
    `its contentSessionId is the window's own, set by the extension (${csid})`,
  );
  check(
    typeof state.daemonExe === 'string' && state.daemonExe.startsWith(config.extensions + path.sep),
    `the daemon ran the binary bundled in the VSIX (${state.daemonExe})`,
  );
  check(session?.project === config.project, `the session is in project ${config.project} (got ${session?.project})`);
  check(session?.status === 'completed', `the session was ended when the window closed (status ${session?.status})`);

  for (const file of config.files) {
    const saves = await savesOf(file);
    const mine = saves.filter((o) => o.contentSessionId === state.contentSessionId && o.sessionId === session?.id);
    check(
      mine.length >= 1,
      `mnemo search --file ${file} finds its save (${saves.map((o) => `#${o.id} ${o.type} "${o.title}"`).join('; ') || 'none'})`,
    );
    check(mine.every((o) => o.project === config.project), `the save of ${file} is in project ${config.project}`);
    // What the save changed: the function, and the identifier it added, by which a
    // search finds it.
    const { fn, identifier } = edits[file];
    const edit = mine.find((o) => o.tool === 'Edit' && o.source === 'editor');
    check(
      edit !== undefined && new RegExp(`\\b${fn}\\b`, 'u').test(edit.title) && (edit.facts ?? []).includes(`symbols: ${fn}`),
      `the save of ${file} is an Edit naming the function ${fn} (${edit ? `#${edit.id} "${edit.title}"` : 'none'})`,
    );
    check((edit?.evidence ?? '').includes(identifier), `it keeps the identifier the change added, ${identifier}`);
    const { hits } = await mnemo('search', '--json', '--project', config.project, identifier);
    check(
      edit !== undefined && hits[0]?.id === edit.id,
      `mnemo search ${identifier} finds it first (${hits.map((h) => `#${h.id}`).join(', ') || 'no hits'})`,
    );
  }

  const c = await counts();
  check(typeof state.viewTab === 'string', `the Mnemo view listed this window's session, its records, and opened one (${state.viewTab})`);
  check(state.summariesBeforeClose >= 1, `the idle period produced a summary before the window closed (${state.summariesBeforeClose})`);
  check(c.summaries >= 1 && c.queued === 0, `summaries stored: ${c.summaries}, queue empty: ${c.queued === 0}`);
  const context = await mnemo('context', '--json', '--project', config.project);
  // The last summary, as the next session's context shows it.
  const line = context.context.split('\n').find((l) => l.startsWith('- Files modified: ')) ?? '';
  const modified = line.slice('- Files modified: '.length).split(', ').filter((f) => f !== '');
  check(
    config.files.every((f) => modified.includes(f) || modified.includes(path.join(config.workspace, f))),
    `the last summary names the saved files (${modified.join(', ') || 'none'})`,
  );
  // The idle summary says which functions changed, not only which files.
  const completed = context.context.split('\n').find((l) => l.startsWith('- Completed: ')) ?? '';
  check(
    config.files.every((f) => completed.includes(`${edits[f].fn} in ${f}`)),
    `the summary names the functions the saves changed (${completed || 'no Completed line'})`,
  );

  if (failures.length > 0) {
    throw new Error(`${failures.length} check(s) failed`);
  }
}

const phase = process.argv[2];
try {
  if (phase === 'drive') {
    await drive();
  } else if (phase === 'verify') {
    await verify();
  } else {
    throw new Error('usage: node harness.mjs drive|verify');
  }
} catch (error) {
  console.log(`FAIL (${phase}): ${error.message}`);
  process.exit(1);
}
