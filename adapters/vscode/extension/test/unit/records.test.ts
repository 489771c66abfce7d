import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Session, SessionResult } from '../../src/protocol';
import {
  SESSION_PAGE,
  parseRecordPath,
  promptMarkdown,
  promptPath,
  recordRows,
  sessionRows,
  summaryMarkdown,
  summaryPath,
} from '../../src/records';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

function session(id: number, minutesAgo: number, extra: Partial<Session> = {}): Session {
  const t = new Date(NOW - minutesAgo * 60_000).toISOString();
  return {
    id,
    contentSessionId: `s-${id}`,
    project: 'billing-api',
    platform: 'claude-code',
    status: 'completed',
    promptCounter: 2,
    createdAt: t,
    updatedAt: t,
    ...extra,
  };
}

describe('sessionRows', () => {
  it('lists the newest first, marks this window, and says what else there is', () => {
    const list = [session(1, 300), session(3, 5, { platform: 'vscode', status: 'active', promptCounter: 1 }), session(2, 60)];
    const { rows, more } = sessionRows(list, NOW, 's-3');
    assert.deepEqual(
      rows.map((r) => [r.label, r.description, r.current]),
      [
        ['billing-api · vscode (this window)', '5 min ago · 1 prompt · active', true],
        ['billing-api · claude-code', '1 h ago · 2 prompts', false],
        ['billing-api · claude-code', '5 h ago · 2 prompts', false],
      ],
    );
    assert.equal(more, 0);
    assert.match(rows[0]?.tooltip ?? '', /^Session 3 \(s-3\)$/mu);
  });

  it(`pages at ${SESSION_PAGE}`, () => {
    const list = Array.from({ length: 73 }, (_, i) => session(i + 1, i));
    const { rows, more } = sessionRows(list, NOW);
    assert.equal(rows.length, SESSION_PAGE);
    assert.equal(more, 23);
    assert.equal(rows[0]?.session.id, 1);
    assert.deepEqual(sessionRows(null, NOW), { rows: [], more: 0 });
  });
});

describe('recordRows', () => {
  const result: SessionResult = {
    session: session(7, 30),
    prompts: [
      { sessionId: 7, number: 2, text: 'now  the taxes', time: new Date(NOW - 10 * 60_000).toISOString() },
      { sessionId: 7, number: 1, text: 'fix the rounding\nof invoices', time: new Date(NOW - 20 * 60_000).toISOString() },
    ],
    observations: [
      { id: 12, title: 'Taxes use banker rounding', type: 'decision', time: new Date(NOW - 9 * 60_000).toISOString(), project: 'billing-api', files: ['src/tax.ts'], score: 0, promptNumber: 2 },
      { id: 10, title: 'Rounding fixed', type: 'bugfix', time: new Date(NOW - 19 * 60_000).toISOString(), project: 'billing-api', score: 0, snippet: 'half-even', promptNumber: 1 },
    ],
    observationTotal: 5,
    summaries: [
      {
        id: 3,
        sessionId: 7,
        contentSessionId: 's-7',
        promptNumber: 1,
        project: 'billing-api',
        request: 'Fix the rounding',
        investigated: '',
        learned: 'Invoices round half-even.',
        completed: 'Rounding fixed in invoice.ts',
        nextSteps: '',
        notes: '',
        filesModified: ['src/invoice.ts'],
        time: new Date(NOW - 15 * 60_000).toISOString(),
      },
    ],
  };

  it('orders each turn: its prompt, its observations, its summary; then what was left out', () => {
    const rows = recordRows(result, NOW);
    assert.deepEqual(
      rows.map((r) => [r.kind, r.label, r.description]),
      [
        ['prompt', 'fix the rounding of invoices', 'prompt 1 · 20 min ago'],
        ['observation', 'Rounding fixed', '#10 · bugfix · 19 min ago'],
        ['summary', 'Summary: Fix the rounding', '#3 · 15 min ago'],
        ['prompt', 'now the taxes', 'prompt 2 · 10 min ago'],
        ['observation', 'Taxes use banker rounding', '#12 · decision · 9 min ago · tax.ts'],
        ['more', '3 more observations', 'open the memory viewer for all'],
      ],
    );
    assert.equal(rows[1]?.tooltip, 'half-even');
  });

  it('renders a prompt and a summary as markdown, at paths that name them', () => {
    const prompt = result.prompts?.[1];
    assert.ok(prompt !== undefined);
    const md = promptMarkdown(result.session, prompt);
    assert.match(md, /^# Prompt 1\n\nbilling-api · claude-code · /u);
    assert.match(md, /^> fix the rounding\n> of invoices$/mu);
    const summary = result.summaries?.[0];
    assert.ok(summary !== undefined);
    const smd = summaryMarkdown(summary);
    assert.match(smd, /^# Summary #3$/mu);
    assert.match(smd, /^## Learned\n\nInvoices round half-even\.$/mu);
    assert.doesNotMatch(smd, /## Investigated/u, 'empty sections are left out');
    assert.match(smd, /^- `src\/invoice\.ts`$/mu);

    assert.equal(promptPath('a/b c', 4), '/sessions/a%2Fb%20c/prompt-4.md');
    assert.deepEqual(parseRecordPath(promptPath('a/b c', 4)), { contentSessionId: 'a/b c', prompt: 4 });
    assert.deepEqual(parseRecordPath(summaryPath(summary)), { contentSessionId: 's-7', summary: 3 });
    assert.equal(parseRecordPath('/observations/12-x.md'), undefined);
  });
});
