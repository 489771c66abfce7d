// A client that no one here wrote, the MCP TypeScript SDK from npm, drives
// `mnemo mcp` over real stdio: it lists every tool, calls each one
// (save_memory → search → timeline → get_observations → correct_memory →
// pin_memory → forget), checks
// that the daemon's restart under a live session is survived, and sends
// bad arguments, each answered by a clear tool error while the server keeps
// serving. The SDK's client also checks every structured result against the
// tool's output schema. MNEMO_BIN names the binary; everything runs in a
// temp HOME and MNEMO_HOME, and the daemon started on the way is stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const bin = process.env.MNEMO_BIN;

const textOf = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const rowIds = (text) => [...text.matchAll(/^(?:> |  )?#(\d+) · \d{4}-\d\d-\d\d \d\d:\d\d · [a-z_]+ · .+$/gm)].map((m) => Number(m[1]));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

test('the MCP TypeScript SDK drives mnemo mcp', { skip: !bin && 'MNEMO_BIN is not set', timeout: 120_000 }, async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'mnemo-mcp-node-'));
  const project = join(root, 'billing-api');
  mkdirSync(join(project, '.git'), { recursive: true });
  const home = join(root, 'home');
  mkdirSync(home);
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_DATA_HOME: join(home, '.local', 'share'),
    MNEMO_HOME: join(root, 'mnemo'),
    MNEMO_IDLE_TIMEOUT: '1m',
  };
  const mnemo = (...args) => execFileSync(bin, args, { env, encoding: 'utf8', timeout: 20_000 });

  const transport = new StdioClientTransport({ command: bin, args: ['mcp'], env, cwd: project, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'mnemo-node-test', version: '1.0.0' });
  try {
    let started = Date.now();
    await client.connect(transport);
    t.diagnostic(`connected (mnemo mcp and its daemon up) in ${Date.now() - started} ms`);
    assert.equal(client.getServerVersion().name, 'mnemo');
    assert.match(client.getInstructions(), /search[\s\S]*timeline[\s\S]*get_observations/);
    assert.match(client.getInstructions(), /"billing-api"/);

    await t.test('lists every tool with its schemas', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name).sort(), ['correct_memory', 'forget', 'get_observations', 'pin_memory', 'save_memory', 'search', 'timeline']);
      for (const tool of tools) {
        assert.equal(tool.inputSchema.type, 'object', `${tool.name} input schema`);
        assert.ok(Object.keys(tool.inputSchema.properties ?? {}).length > 0, `${tool.name} has no arguments`);
        assert.equal(tool.outputSchema?.type, 'object', `${tool.name} output schema`);
        assert.ok(tool.description.length > 100, `${tool.name} description`);
      }
      const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
      assert.deepEqual(byName.get_observations.inputSchema.required, ['ids']);
      assert.deepEqual(byName.forget.inputSchema.required, ['ids']);
      assert.deepEqual(byName.save_memory.inputSchema.required, ['text']);
      assert.deepEqual(byName.timeline.inputSchema.required, ['anchor']);
      assert.deepEqual(byName.correct_memory.inputSchema.required, ['id']);
      assert.deepEqual(byName.pin_memory.inputSchema.required, ['ids']);
      assert.equal(byName.pin_memory.inputSchema.properties.unpin.type, 'boolean');
      assert.equal(byName.search.inputSchema.required, undefined);
      assert.equal(byName.search.annotations.readOnlyHint, true);
      assert.equal(byName.forget.annotations.destructiveHint, true);
    });

    const word = `zq${randomBytes(6).toString('hex')}`;
    let id;
    await t.test('save_memory says the new id', async () => {
      const res = await client.callTool({ name: 'save_memory', arguments: {
        text: `Invoices round half-even before currency conversion (${word}).\nThe other order drifts by a cent.`,
        type: 'decision',
        files: ['billing/round.go'],
      } });
      assert.ok(!res.isError, textOf(res));
      id = res.structuredContent.id;
      assert.ok(Number.isInteger(id) && id > 0);
      assert.match(textOf(res), new RegExp(`^Saved as #${id} \\(decision, project billing-api\\)`));
      assert.equal(res.structuredContent.project, 'billing-api');
    });

    await t.test('search finds it in a compact index', async () => {
      const res = await client.callTool({ name: 'search', arguments: { query: word } });
      assert.ok(!res.isError, textOf(res));
      assert.equal(res.structuredContent.hits[0].id, id);
      assert.deepEqual(res.structuredContent.hits[0].files, ['billing/round.go']);
      assert.equal(rowIds(textOf(res))[0], id);
      assert.match(textOf(res), /Next: timeline\(anchor=/);
      const byFile = await client.callTool({ name: 'search', arguments: { files: ['round.go'], types: ['decision'], since: '1h' } });
      assert.deepEqual(byFile.structuredContent.hits.map((h) => h.id), [id]);
    });

    await t.test('timeline shows it as the anchor', async () => {
      const res = await client.callTool({ name: 'timeline', arguments: { anchor: id, before: 3, after: 3 } });
      assert.ok(!res.isError, textOf(res));
      assert.equal(res.structuredContent.anchorId, id);
      assert.ok(res.structuredContent.observations.some((o) => o.id === id));
      assert.match(textOf(res), new RegExp(`^> #${id} · `, 'm'));
      const byHash = await client.callTool({ name: 'timeline', arguments: { anchor: `#${id}` } });
      assert.equal(byHash.structuredContent.anchorId, id);
    });

    await t.test('get_observations returns the full record', async () => {
      const res = await client.callTool({ name: 'get_observations', arguments: { ids: [id] } });
      assert.ok(!res.isError, textOf(res));
      const [o] = res.structuredContent.observations;
      assert.equal(o.id, id);
      assert.equal(o.source, 'saved');
      assert.equal(o.type, 'decision');
      assert.match(o.narrative, new RegExp(word));
      assert.match(textOf(res), /The other order drifts by a cent\./);
      assert.match(textOf(res), /saved by the agent/);
      assert.match(textOf(res), /Files modified: billing\/round\.go/);
    });

    await t.test('the daemon restarts under the session', async () => {
      mnemo('daemon', 'stop');
      const res = await client.callTool({ name: 'search', arguments: { query: word } });
      assert.ok(!res.isError, textOf(res));
      assert.equal(res.structuredContent.hits[0].id, id);
    });

    await t.test('correct_memory keeps the history and search finds the new words', async () => {
      const res = await client.callTool({ name: 'correct_memory', arguments: { id, text: `Invoices round half-even after currency conversion (${word}, per the auditor).` } });
      assert.ok(!res.isError, textOf(res));
      assert.deepEqual(res.structuredContent, { id, project: 'billing-api', type: 'decision', title: 'Invoices round half-even before currency conversion (' + word + ').', changed: true, edits: 1 });
      assert.match(textOf(res), new RegExp(`^Corrected #${id} \\(decision, project billing-api\\)`));
      const found = await client.callTool({ name: 'search', arguments: { query: 'auditor' } });
      assert.equal(found.structuredContent.hits[0].id, id);
      const got = await client.callTool({ name: 'get_observations', arguments: { ids: [id] } });
      assert.equal(got.structuredContent.observations[0].edits.length, 1);
      assert.match(got.structuredContent.observations[0].edits[0].narrative, /The other order drifts by a cent\./);
      assert.match(textOf(got), /Corrected 1 time;/);
    });

    await t.test('pin_memory pins and unpins', async () => {
      let res = await client.callTool({ name: 'pin_memory', arguments: { ids: [id] } });
      assert.ok(!res.isError, textOf(res));
      assert.deepEqual(res.structuredContent, { pinned: true, changed: [id], unchanged: [] });
      assert.match(mnemo('context', '--project', 'billing-api'), new RegExp(`## Pinned \\(id · time · type · what\\)\\n- #${id} · `));
      res = await client.callTool({ name: 'pin_memory', arguments: { ids: [id], unpin: true } });
      assert.deepEqual(res.structuredContent, { pinned: false, changed: [id], unchanged: [] });
    });

    await t.test('forget removes it and says what it removed', async () => {
      const res = await client.callTool({ name: 'forget', arguments: { ids: [id, 999999] } });
      assert.ok(!res.isError, textOf(res));
      assert.deepEqual(res.structuredContent, { deleted: [id], missing: [999999] });
      assert.match(textOf(res), new RegExp(`- #${id} "Invoices round half-even before currency conversion`));
      assert.match(textOf(res), /Did not exist, nothing removed: #999999/);
      const after = await client.callTool({ name: 'search', arguments: { query: word } });
      assert.ok(!after.structuredContent.hits.some((h) => h.id === id), textOf(after));
      const byFile = await client.callTool({ name: 'search', arguments: { files: ['round.go'] } });
      assert.deepEqual(byFile.structuredContent.hits, []);
      assert.match(textOf(byFile), /^No observation found/);
    });

    await t.test('bad arguments get clear tool errors and the server lives on', async () => {
      const cases = [
        ['search', { limit: 'ten' }, /^search: invalid arguments: argument "limit": got a string "ten", want an integer from 1 to 100\./],
        ['search', { query: 42 }, /argument "query": got an integer 42, want a string/],
        ['search', { type: 'bugfix' }, /unknown argument "type"; this tool takes author, files, host, limit, project, query, since, types, until/],
        ['search', { since: 'last tuesday' }, /argument "since": "last tuesday" is not a time: use today, yesterday, an age/],
        ['get_observations', {}, /^get_observations: invalid arguments: missing required argument "ids"/],
        ['get_observations', { ids: '12' }, /argument "ids": got a string "12", want an array of integers/],
        ['get_observations', { ids: [1, 'two'] }, /argument "ids" item 2: got a string "two", want an integer/],
        ['get_observations', { ids: [999999] }, /^get_observations: no observation #999999 exists/],
        ['timeline', {}, /missing required argument "anchor"/],
        ['timeline', { anchor: 'whenever' }, /"whenever" is neither an observation id/],
        ['timeline', { anchor: 999999 }, /^timeline: no observation #999999 exists/],
        ['save_memory', {}, /^save_memory: invalid arguments: missing required argument "text"/],
        ['save_memory', { text: '' }, /argument "text": must not be empty/],
        ['save_memory', { text: ['a', 'b'] }, /argument "text": got an array/],
        ['forget', { ids: 'everything' }, /^forget: invalid arguments: argument "ids": got a string "everything"/],
        ['forget', { ids: [id] }, /^forget: nothing removed: no observation #\d+ exists/],
        ['correct_memory', { id: 999999, title: 'x' }, /^correct_memory: no observation #999999 exists/],
        ['correct_memory', { id: 1 }, /an empty correction changes nothing/],
        ['pin_memory', { ids: [999999] }, /^pin_memory: no observation #999999 exists/],
      ];
      for (const [name, args, re] of cases) {
        const res = await client.callTool({ name, arguments: args });
        assert.equal(res.isError, true, `${name} ${JSON.stringify(args)}: ${textOf(res)}`);
        assert.match(textOf(res), re, `${name} ${JSON.stringify(args)}`);
        assert.match(textOf(res), /\S{10,}/);
      }
      await assert.rejects(client.callTool({ name: 'remember', arguments: {} }), /unknown tool "remember"/);
      const res = await client.callTool({ name: 'save_memory', arguments: { text: `still serving ${word}` } });
      assert.ok(!res.isError, textOf(res));
      assert.equal((await client.callTool({ name: 'search', arguments: { query: `still serving ${word}` } })).structuredContent.hits[0].id, res.structuredContent.id);
    });

    await t.test('timings', async () => {
      const ms = [];
      for (let i = 0; i < 25; i++) {
        started = performance.now();
        await client.callTool({ name: 'search', arguments: { query: 'currency conversion' } });
        ms.push(performance.now() - started);
      }
      t.diagnostic(`search round trip over stdio and the socket: median ${median(ms).toFixed(2)} ms`);
    });
  } finally {
    await client.close();
    try { mnemo('daemon', 'stop'); } catch (err) { console.error(`daemon stop: ${err}\n${stderr}`); }
    rmSync(root, { recursive: true, force: true });
  }
});
