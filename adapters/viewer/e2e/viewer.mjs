// Mnemo's memory viewer in a real browser (Debian's Chromium, headless,
// driven by puppeteer-core), used as a person would: a session played
// through the real hook binary into a fresh home, `mnemo ui --no-open`, the
// page opened with the address it prints; then the records are listed, a
// search finds one, the address keeps the view (a search, a record, a
// tab) for a reload or another page, an event sent through the hook
// appears without a reload within a second, forget removes a record
// everywhere, the records that need review are listed and each kept,
// corrected or forgotten with one key, and a request without the token
// is refused. Screenshots go to the artifacts.
//
// Env: MNEMO_BIN, MNEMO_HOOK_BIN (absolute), MNEMO_E2E_ARTIFACTS (a folder,
// optional), CHROMIUM (default: chromium on PATH). Run by run.sh, in a
// loopback-only network namespace. Prints "N passed, N failed".

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const mnemoBin = process.env.MNEMO_BIN;
const hookBin = process.env.MNEMO_HOOK_BIN;
const artifacts = process.env.MNEMO_E2E_ARTIFACTS || '';
if (!mnemoBin || !hookBin) {
  console.error('viewer.mjs: set MNEMO_BIN and MNEMO_HOOK_BIN');
  process.exit(2);
}

// An isolated world: HOME, MNEMO_HOME, TMPDIR and a project.
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mnemo-viewer-e2e-'));
const world = {
  home: path.join(base, 'home'),
  mnemoHome: path.join(base, 'mnemo'),
  tmp: path.join(base, 'tmp'),
  project: path.join(base, 'calc-project'),
};
for (const d of Object.values(world)) fs.mkdirSync(d, { recursive: true });
fs.writeFileSync(path.join(world.project, 'calc.py'), 'def add(a, b):\n    return a + b\n');
const env = {
  PATH: process.env.PATH, HOME: world.home, MNEMO_HOME: world.mnemoHome, TMPDIR: world.tmp,
  XDG_DATA_HOME: path.join(world.home, '.local', 'share'), MNEMO_IDLE_TIMEOUT: '5m',
  // A record whose file changed needs review at once, not after a week.
  MNEMO_REVIEW_AFTER_DAYS: '-1',
};

const results = [];
async function check(name, fn) {
  const began = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok   ${name} (${Date.now() - began} ms)`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`FAIL ${name}: ${e instanceof Error ? e.stack : e}`);
    if (page) await shot(page, `failed-${results.length}.png`).catch(() => {});
  }
}
function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

function mnemo(...args) {
  return execFileSync(mnemoBin, args, { env, cwd: world.project, encoding: 'utf8', timeout: 30_000 });
}

// hook sends one Claude Code hook payload through the real mnemo-hook.
function hook(event, fields) {
  const payload = { session_id: 'viewer-e2e-1', transcript_path: path.join(world.home, 't.jsonl'), cwd: world.project, hook_event_name: event, ...fields };
  const r = spawnSync(hookBin, [event], { env, input: JSON.stringify(payload), encoding: 'utf8', timeout: 30_000 });
  assert(r.status === 0, `mnemo-hook ${event} exited ${r.status}: ${r.stderr}`);
}

let toolN = 0;
function tool(name, input, response) {
  hook('PostToolUse', { tool_name: name, tool_input: input, tool_response: response, tool_use_id: `toolu_e2e_${++toolN}` });
}

// settle waits until nothing is queued and the store holds at least n
// observations.
async function settle(n) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const st = JSON.parse(mnemo('status', '--json'));
    if (st.counts.queued === 0 && st.counts.observations >= n) return st;
    assert(Date.now() < deadline, `the store did not settle: ${JSON.stringify(st.counts)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function shot(page, name) {
  if (!artifacts) return Promise.resolve();
  return page.screenshot({ path: path.join(artifacts, name), fullPage: false });
}

let browser;
let page;
try {
  // A session: read, a failing test, a fix, a passing test.
  hook('SessionStart', { source: 'startup' });
  hook('UserPromptSubmit', { prompt: 'make the tests pass: mul returns the wrong product' });
  tool('Read', { file_path: path.join(world.project, 'calc.py') },
    { type: 'text', file: { filePath: path.join(world.project, 'calc.py'), content: 'def mul(a, b):\n    return a + b\n' } });
  tool('Bash', { command: 'python -m pytest test_calc.py' },
    { stdout: 'FAILED test_calc.py::test_mul - AssertionError: assert 5 == 6', stderr: '', interrupted: false, exitCode: 1 });
  tool('Edit', { file_path: path.join(world.project, 'calc.py'), old_string: 'return a + b', new_string: 'return a * b' },
    { filePath: path.join(world.project, 'calc.py'), oldString: 'return a + b', newString: 'return a * b' });
  tool('Bash', { command: 'python -m pytest test_calc.py' }, { stdout: '2 passed in 0.01s', stderr: '', interrupted: false });
  hook('Stop', { last_assistant_message: 'mul multiplied by adding; it multiplies now and the tests pass.' });
  const st = await settle(4);
  console.log(`store: ${JSON.stringify(st.counts)}`);

  const url = mnemo('ui', '--no-open');
  await check('mnemo ui --no-open prints one address', () => {
    assert(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}\n$/.test(url), `printed ${JSON.stringify(url)}`);
  });
  const origin = new URL(url).origin;

  await check('a request without the token gets 401', async () => {
    for (const p of ['/', '/api/records', '/api/stream']) {
      const res = await fetch(origin + p);
      assert(res.status === 401, `${p}: ${res.status}`);
    }
  });

  browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || 'chromium',
    headless: true,
    userDataDir: path.join(base, 'chromium-profile'),
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--no-default-browser-check', '--window-size=1280,800'],
    defaultViewport: { width: 1280, height: 800 },
  });
  page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('dialog', (d) => d.accept());

  await check('the page lists the records of the session', async () => {
    const t0 = Date.now();
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    assert(page.url() === origin + '/', `the token stayed in the address: ${page.url()}`);
    await page.waitForFunction(() => document.querySelectorAll('#list .row[data-id]').length >= 4, { timeout: 10_000 });
    console.log(`     first page: ${Date.now() - t0} ms`);
    const titles = await page.$$eval('#list .row .title', (els) => els.map((e) => e.textContent));
    assert(titles.some((t) => t.includes('calc.py')), `titles: ${titles.join(' | ')}`);
    await page.waitForFunction(() => document.getElementById('live').textContent === 'live', { timeout: 10_000 });
    await shot(page, 'viewer-records.png');
  });

  await check('search finds a record by the error it saw', async () => {
    await page.keyboard.press('/');
    await page.keyboard.type('AssertionError');
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll('#list .row[data-id]')];
      return rows.length >= 1 && rows.every((r) => r.querySelector('.snippet, .title'));
    }, { timeout: 10_000 });
    await page.waitForFunction(() => document.querySelectorAll('#list .row[data-id]').length < 4, { timeout: 10_000 });
    // Esc leaves the search box for the list; Enter opens the first hit.
    await page.keyboard.press('Escape');
    await page.waitForSelector('#list .row.selected', { timeout: 10_000 });
    await page.keyboard.press('Enter');
    await page.waitForSelector('#detail h2', { timeout: 10_000 });
    const detail = await page.$eval('#detail', (e) => e.textContent);
    assert(/assert 5 == 6|AssertionError|pytest/.test(detail), `the record found: ${detail.slice(0, 300)}`);
    await shot(page, 'viewer-search.png');
    // Back to the newest records.
    await page.$eval('#q', (e) => { e.value = ''; e.dispatchEvent(new Event('input')); });
    await page.waitForFunction(() => document.querySelectorAll('#list .row[data-id]').length >= 4, { timeout: 10_000 });
  });

  await check('the address keeps the view: a search, a record and a tab come back on reload and in a new page', async () => {
    await page.$eval('#q', (e) => { e.value = 'AssertionError'; e.dispatchEvent(new Event('input')); });
    await page.waitForFunction(() => location.hash.startsWith('#q=AssertionError'), { timeout: 10_000 });
    await page.waitForFunction(() => {
      const n = document.querySelectorAll('#list .row[data-id]').length;
      return n >= 1 && n < 4;
    }, { timeout: 10_000 });
    const id = Number(await page.$eval('#list .row[data-id]', (e) => e.dataset.id));
    await page.click(`#list .row[data-id="${id}"]`);
    await page.waitForFunction((id) => location.hash === `#q=AssertionError&id=${id}`, { timeout: 10_000 }, id);
    const address = page.url();
    const opened = async (p) => {
      await p.waitForFunction((id) => document.querySelector('#detail .meta')?.textContent.includes(`#${id}`), { timeout: 10_000 }, id);
      await p.waitForFunction(() => document.querySelectorAll('#list .row[data-id]').length >= 1, { timeout: 10_000 });
      assert(await p.$eval('#q', (e) => e.value) === 'AssertionError', 'the search is not back');
    };
    await page.reload({ waitUntil: 'domcontentloaded' });
    await opened(page);
    const other = await browser.newPage();
    await other.goto(address, { waitUntil: 'domcontentloaded' });
    await opened(other);
    await other.close();
    // A tab too.
    await page.keyboard.press('2');
    await page.waitForFunction(() => location.hash.includes('tab=sessions'), { timeout: 10_000 });
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => document.querySelector('nav [data-tab="sessions"]')?.getAttribute('aria-selected') === 'true', { timeout: 10_000 });
    // Back to the newest records, and a clean address.
    await page.goto(origin + '/', { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => document.querySelectorAll('#list .row[data-id]').length >= 4 && location.hash === '', { timeout: 10_000 });
    await page.waitForFunction(() => document.getElementById('live').textContent === 'live', { timeout: 10_000 });
  });

  await check('a record is corrected, pinned and marked wrong from the page', async () => {
    const id = Number(await page.$eval('#list .row[data-id]', (e) => e.dataset.id));
    await page.click(`#list .row[data-id="${id}"]`);
    await page.waitForFunction((id) => document.querySelector('#detail .meta')?.textContent.includes(`#${id}`), { timeout: 10_000 }, id);
    await page.keyboard.press('e');
    await page.waitForSelector('#detail form.correct input.edit-title', { timeout: 10_000 });
    await page.$eval('#detail form.correct input.edit-title', (e) => { e.value = ''; });
    await page.type('#detail form.correct input.edit-title', 'pytest passes once mul multiplies');
    await page.click('#detail form.correct button');
    await page.waitForFunction(() => document.querySelector('#detail h2')?.textContent === 'pytest passes once mul multiplies', { timeout: 10_000 });
    await page.waitForFunction((id) => document.querySelector(`#list .row[data-id="${id}"] .title`)?.textContent === 'pytest passes once mul multiplies', { timeout: 10_000 }, id);
    const got = JSON.parse(mnemo('get', '--json', String(id))).observations[0];
    assert(got.title === 'pytest passes once mul multiplies' && (got.edits ?? []).length === 1, `mnemo get: ${JSON.stringify(got).slice(0, 300)}`);
    await page.keyboard.press('p');
    await page.waitForFunction(() => document.querySelector('#detail .meta')?.textContent.includes('pinned'), { timeout: 10_000 });
    const ctx = JSON.parse(mnemo('context', '--json'));
    assert((ctx.observationIds ?? [])[0] === id, `the pinned record is not first in the context: ${JSON.stringify(ctx.observationIds)}`);
    await shot(page, 'viewer-corrected.png');
    // Marked wrong, then not: out of the context, then back.
    await page.keyboard.press('w');
    await page.waitForSelector('#detail .state-note.s-wrong', { timeout: 10_000 });
    const wrongCtx = JSON.parse(mnemo('context', '--json'));
    assert(!(wrongCtx.observationIds ?? []).includes(id), `a record marked wrong is in the context: ${JSON.stringify(wrongCtx.observationIds)}`);
    await page.keyboard.press('w');
    await page.waitForFunction(() => !document.querySelector('#detail .state-note.s-wrong'), { timeout: 10_000 });
  });

  let liveID = 0;
  await check('an event sent through the hook shows up live, within a second', async () => {
    const before = await page.$$eval('#list .row[data-id]', (els) => els.map((e) => e.dataset.id));
    const t0 = Date.now();
    tool('Read', { file_path: path.join(world.project, 'README.md') },
      { type: 'text', file: { filePath: path.join(world.project, 'README.md'), content: '# calc\nA calculator.\n' } });
    const sent = Date.now();
    const handle = await page.waitForFunction((known) => {
      const row = [...document.querySelectorAll('#list .row[data-id]')].find((r) => !known.includes(r.dataset.id));
      return row ? row.dataset.id : false;
    }, { timeout: 5_000, polling: 20 }, before);
    const took = Date.now() - sent;
    liveID = Number(await handle.jsonValue());
    console.log(`     hook ran in ${sent - t0} ms; the record was on the page ${took} ms after it`);
    assert(took <= 1000, `it took ${took} ms`);
    const title = await page.$eval(`#list .row[data-id="${liveID}"] .title`, (e) => e.textContent);
    assert(title.includes('README.md'), `the new row: ${title}`);
    await shot(page, 'viewer-live.png');
  });

  await check('forget removes a record everywhere', async () => {
    assert(liveID > 0, 'no live record to forget');
    await page.click(`#list .row[data-id="${liveID}"]`);
    await page.waitForFunction((id) => document.querySelector('#detail .meta')?.textContent.includes(`#${id}`), { timeout: 10_000 }, liveID);
    await page.click('#detail button.danger');
    await page.waitForFunction((id) => !document.querySelector(`#list .row[data-id="${id}"]`), { timeout: 10_000 }, liveID);
    // mnemo get of an id that names nothing exits 1, saying so.
    const got = spawnSync(mnemoBin, ['get', String(liveID)], { env, cwd: world.project, encoding: 'utf8', timeout: 30_000 });
    assert(got.status === 1 && got.stderr.includes(`no observation #${liveID}`), `mnemo get still has #${liveID}: ${got.status} ${got.stdout}${got.stderr}`);
    const found = JSON.parse(mnemo('search', '--json', 'README.md'));
    assert(!(found.hits ?? []).some((h) => h.id === liveID), `mnemo search still finds #${liveID}`);
  });

  await check('the next session\'s context is previewed with its reasons', async () => {
    await page.keyboard.press('3');
    await page.waitForSelector('#detail pre.context', { timeout: 10_000 });
    const ctx = await page.$eval('#detail pre.context', (e) => e.textContent);
    assert(ctx.includes('<mnemo-context'), `context: ${ctx.slice(0, 200)}`);
    const reasons = await page.$$eval('#list ul.reasons li', (els) => els.map((e) => e.textContent));
    assert(reasons.length > 0, 'no reasons');
    // Ranks in words beside the ids: not "#12 bugfix, #1 newest".
    assert(!reasons.some((r) => / #\d+ newest/.test(r)), `reasons: ${reasons.join(' | ')}`);
    assert(/#context|tab=context/.test(page.url()), `the address does not say the tab: ${page.url()}`);
    await shot(page, 'viewer-context.png');
  });

  await check('the records that need review are listed, and kept, corrected or forgotten with one key each', async () => {
    // Three edits, then their files change outside the session.
    const n0 = JSON.parse(mnemo('status', '--json')).counts.observations;
    const files = ['tax.py', 'fees.py', 'rates.py'];
    for (const [i, f] of files.entries()) {
      const p = path.join(world.project, f);
      fs.writeFileSync(p, `RATE_${i} = 20\n`);
      tool('Edit', { file_path: p, old_string: `RATE_${i} = 19`, new_string: `RATE_${i} = 20` }, { filePath: p, oldString: `RATE_${i} = 19`, newString: `RATE_${i} = 20` });
    }
    await settle(n0 + 3);
    for (const [i, f] of files.entries()) fs.writeFileSync(path.join(world.project, f), `# percent\nRATE_${i} = 20\n`);
    const listed = () => JSON.parse(mnemo('review', '--json')).items.map((it) => it.observation.id);
    const ids = listed();
    assert(ids.length === 3, `mnemo review lists ${JSON.stringify(ids)}`);
    const rows = () => page.$$eval('#list .row[data-id]', (els) => els.map((e) => Number(e.dataset.id)));
    const open = async () => {
      await page.keyboard.press('Enter');
      const id = (await rows())[0];
      await page.waitForFunction((id) => document.querySelector('#detail .meta')?.textContent.includes(`#${id}`) &&
        document.querySelector('#detail .state-note.s-needs-review'), { timeout: 10_000 }, id);
      return id;
    };
    await page.keyboard.press('r');
    await page.waitForFunction(() => document.querySelectorAll('#list .row[data-id]').length === 3 && location.hash.includes('tab=review'), { timeout: 10_000 });
    const badges = await page.$$eval('#list .row .state.s-needs-review', (els) => els.length);
    assert(badges === 3, `${badges} rows say "needs review"`);
    await shot(page, 'viewer-review.png');
    // y keeps the first.
    const kept = await open();
    await page.keyboard.press('y');
    await page.waitForFunction((id) => document.querySelectorAll('#list .row[data-id]').length === 2 && !document.querySelector(`#list .row[data-id="${id}"]`), { timeout: 10_000 }, kept);
    assert(!listed().includes(kept), `#${kept} is still listed after its keep`);
    assert(JSON.parse(mnemo('get', '--json', String(kept))).observations[0].kept, `#${kept} is not kept`);
    // e corrects the next.
    await page.waitForSelector('#list .row.selected', { timeout: 10_000 });
    const corrected = await open();
    await page.keyboard.press('e');
    await page.waitForSelector('#detail form.correct textarea.edit-text', { timeout: 10_000 });
    await page.$eval('#detail form.correct textarea.edit-text', (e) => { e.value = 'The rate is 20 percent, as a plain number.'; });
    await page.click('#detail form.correct button');
    await page.waitForFunction((id) => document.querySelectorAll('#list .row[data-id]').length === 1 && !document.querySelector(`#list .row[data-id="${id}"]`), { timeout: 10_000 }, corrected);
    assert(JSON.parse(mnemo('get', '--json', String(corrected))).observations[0].edits.length === 1, `#${corrected} is not corrected`);
    // x forgets the last.
    await page.waitForSelector('#list .row.selected', { timeout: 10_000 });
    const forgotten = await open();
    await page.keyboard.press('x');
    await page.waitForFunction((id) => !document.querySelector(`#list .row[data-id="${id}"]`), { timeout: 10_000 }, forgotten);
    const gone = spawnSync(mnemoBin, ['get', String(forgotten)], { env, cwd: world.project, encoding: 'utf8', timeout: 30_000 });
    assert(gone.status === 1, `#${forgotten} was not forgotten`);
    assert(listed().length === 0, `mnemo review still lists ${JSON.stringify(listed())}`);
    await page.keyboard.press('r');
    await page.waitForFunction(() => document.querySelector('#list .review-head')?.textContent.startsWith('Nothing needs review'), { timeout: 10_000 });
  });

  await check('the page ran without errors', () => {
    assert(problems.length === 0, problems.join('\n'));
  });
} catch (e) {
  results.push({ name: 'setup', ok: false });
  console.log(`FAIL setup: ${e instanceof Error ? e.stack : e}`);
} finally {
  if (browser) await browser.close().catch(() => {});
  spawnSync(mnemoBin, ['daemon', 'stop'], { env, timeout: 15_000 });
  for (const name of fs.existsSync(path.join(world.mnemoHome, 'logs')) ? fs.readdirSync(path.join(world.mnemoHome, 'logs')) : []) {
    if (artifacts) fs.copyFileSync(path.join(world.mnemoHome, 'logs', name), path.join(artifacts, `mnemo-${name}`));
  }
  fs.rmSync(base, { recursive: true, force: true });
}
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
