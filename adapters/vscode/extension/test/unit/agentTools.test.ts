import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Tool, ToolInputError, chatAnswer, chatSearch, indexLine, invocationMessage, runTool } from '../../src/agentTools';
import type { Hit, TimelineParams } from '../../src/protocol';

/** A sidecar that answers from a table and keeps what it was asked. */
function sidecar(answers: Record<string, unknown[]>): {
  calls: [string, unknown][];
  request: <R>(method: string, params: unknown) => Promise<R>;
} {
  const calls: [string, unknown][] = [];
  return {
    calls,
    request: <R>(method: string, params: unknown): Promise<R> => {
      calls.push([method, params]);
      const queue = answers[method];
      if (queue === undefined || queue.length === 0) {
        return Promise.reject(new Error(`no answer for ${method}`));
      }
      return Promise.resolve(queue.shift() as R);
    },
  };
}

const hit = (id: number, title: string, project = 'billing-api'): Hit => ({
  id,
  title,
  type: 'decision',
  time: '2026-11-20T10:00:00Z',
  project,
  files: ['src/invoice.ts'],
  score: 1,
  snippet: 'Invoices  round\nhalf-even.',
});

describe('runTool', () => {
  it('turns the model input into the memory methods, and their answers into text', async () => {
    const s = sidecar({
      'mnemo/search': [{ hits: [hit(12, 'Banker rounding')], total: 3 }],
      'mnemo/save': [{ id: 44 }],
    });
    const text = await runTool(Tool.search, { query: ' rounding ', limit: 5, types: ['decision', ' '] }, { request: s.request });
    assert.deepEqual(s.calls[0], ['mnemo/search', { limit: 5, query: 'rounding', types: ['decision'] }]);
    assert.match(text, /^1 of 3 observations/u);
    assert.match(text, /^#12 · .+ · decision · Banker rounding · invoice\.ts$/mu);

    assert.equal(
      await runTool(Tool.remember, { text: 'Use half-even.' }, { request: s.request, cwd: '/w/billing-api' }),
      'Mnemo saved this as #44; later sessions find it by search.',
    );
    assert.deepEqual(s.calls[1], ['mnemo/save', { text: 'Use half-even.', cwd: '/w/billing-api' }]);
  });

  it('says what is wrong with bad input, without calling the sidecar', async () => {
    const s = sidecar({});
    const cases: [string, unknown, RegExp][] = [
      [Tool.search, { limit: 500 }, /limit must be an integer from 1 to 50/u],
      [Tool.search, 'rounding', /the input must be an object/u],
      [Tool.timeline, {}, /anchor must be an observation id/u],
      [Tool.get, { ids: ['x'] }, /ids must be positive integers/u],
      [Tool.get, { ids: [] }, /ids must list 1 to 20/u],
      [Tool.remember, { text: '  ' }, /text is required/u],
      ['mnemo_other', {}, /Mnemo has no tool "mnemo_other"/u],
    ];
    for (const [name, input, message] of cases) {
      await assert.rejects(runTool(name, input, { request: s.request }), (e: unknown) => e instanceof ToolInputError && message.test(e.message));
    }
    assert.deepEqual(s.calls, []);
  });

  it('reads "#12" and "12" as ids, and a numeric anchor as an id', async () => {
    const s = sidecar({
      'mnemo/getObservations': [{ observations: [] }],
      'mnemo/timeline': [{ anchorId: 12, observations: [] }],
    });
    assert.equal(await runTool(Tool.get, { ids: ['#12', 13] }, { request: s.request }), 'Mnemo has no observation #12, #13.');
    await runTool(Tool.timeline, { anchor: '12' }, { request: s.request });
    const want: TimelineParams = { anchor: 12, before: 5, after: 5 };
    assert.deepEqual(s.calls[1], ['mnemo/timeline', want]);
  });
});

describe('the chat participant', () => {
  it('searches the project first, then everywhere', async () => {
    const s = sidecar({ 'mnemo/search': [{ hits: [], total: 0 }, { hits: [hit(3, 'Elsewhere', 'ledger')], total: 1 }] });
    const found = await chatSearch(s.request, 'rounding?', 'billing-api');
    assert.deepEqual(s.calls, [
      ['mnemo/search', { limit: 8, query: 'rounding?', project: 'billing-api' }],
      ['mnemo/search', { limit: 8, query: 'rounding?' }],
    ]);
    assert.equal(found.everywhere, true);
    const md = chatAnswer('rounding?', found.hits, { project: 'billing-api', everywhere: found.everywhere });
    assert.match(md, /^Mnemo remembers this \(nothing in \*\*billing-api\*\*; from every project\):$/mu);
    assert.match(md, /^- \*\*#3\*\* Elsewhere — decision · .+ · ledger · invoice\.ts$/mu);
    assert.match(md, /^ {2}> Invoices round half-even\.$/mu);
  });

  it('answers in the project, and says when nothing matches', () => {
    const md = chatAnswer('x', [hit(1, 'A'), hit(2, 'B_c')], { project: 'billing-api', everywhere: false });
    assert.match(md, /^Mnemo remembers these 2 in \*\*billing-api\*\*:$/mu);
    assert.match(md, /^- \*\*#2\*\* B\\_c — decision · [^·]+ · invoice\.ts$/mu);
    assert.equal(chatAnswer('the *moon*', [], { everywhere: true }), 'Mnemo remembers nothing that matches *the \\*moon\\**.');
  });
});

describe('tool messages', () => {
  it('say what a tool is about to do', () => {
    assert.equal(invocationMessage(Tool.search, { query: 'a\nb' }), 'Searching Mnemo\'s memory for "a b"');
    assert.equal(invocationMessage(Tool.search, {}), "Listing Mnemo's newest memories");
    assert.equal(invocationMessage(Tool.get, { ids: [1, 2] }), "Reading Mnemo's observations #1, #2");
    assert.match(indexLine({ id: 5, time: '2026-11-20T10:00:00Z', type: '', title: '', files: null }), /^#5 · .+ · observation · \(untitled\)$/u);
  });
});
