import * as assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  anchorOf,
  anchorText,
  contextMarkdown,
  contextPath,
  forgetMessage,
  formatTime,
  hitRow,
  idList,
  observationMarkdown,
  observationPath,
  parseIds,
  parseObservationPath,
  plural,
  relativeTime,
  shortFiles,
  slug,
  statusBar,
  stripContextTags,
} from '../../src/format';
import type { Hit, Observation, StatusResult } from '../../src/protocol';

before(() => {
  process.env.TZ = 'UTC';
});

const NOW = Date.parse('2026-11-22T12:00:00Z');

describe('relativeTime', () => {
  const cases: { in: string; want: string }[] = [
    { in: '2026-11-22T11:59:30Z', want: 'just now' },
    { in: '2026-11-22T11:55:00Z', want: '5 min ago' },
    { in: '2026-11-22T09:00:00Z', want: '3 h ago' },
    { in: '2026-11-21T06:00:00Z', want: 'yesterday' },
    { in: '2026-11-18T12:00:00Z', want: '4 days ago' },
    { in: '2026-09-01T08:00:00Z', want: '2026-09-01' },
    { in: '2026-11-22T14:00:00+02:00', want: 'just now' },
    { in: 'not a time', want: 'not a time' },
  ];
  for (const c of cases) {
    it(c.in, () => {
      assert.equal(relativeTime(c.in, NOW), c.want);
    });
  }
});

describe('formatTime', () => {
  it('shows local date and minutes', () => {
    assert.equal(formatTime('2026-11-22T14:03:59+01:00'), '2026-11-22 13:03');
  });
  it('passes through what is no time', () => {
    assert.equal(formatTime(''), '');
  });
});

describe('shortFiles', () => {
  const cases: { name: string; in: string[] | null | undefined; want: string }[] = [
    { name: 'none', in: null, want: '' },
    { name: 'base names', in: ['/w/src/auth.ts', 'C:\\w\\login.go'], want: 'auth.ts, login.go' },
    { name: 'at most three, then a count', in: ['/a', '/b', '/c', '/d', '/e'], want: 'a, b, c +2' },
    { name: 'skips empty entries', in: ['', '/w/x.ts'], want: 'x.ts' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(shortFiles(c.in), c.want);
    });
  }
});

describe('hitRow', () => {
  const hit: Hit = {
    id: 42,
    title: 'Fix token\nrefresh in auth.ts',
    type: 'bugfix',
    time: '2026-11-22T11:00:00Z',
    project: 'mnemo',
    files: ['/w/src/auth.ts'],
    score: 0.8,
    snippet: '  refresh   the token  before expiry ',
  };
  it('shows title; id, type, time and files; the snippet', () => {
    assert.deepEqual(hitRow(hit, NOW), {
      label: 'Fix token refresh in auth.ts',
      description: '#42 · bugfix · 1 h ago · auth.ts',
      detail: 'refresh the token before expiry',
    });
  });
  it('copes with missing parts', () => {
    const bare: Hit = { id: 7, title: '', type: '', time: '2026-11-22T12:00:00Z', project: '', files: null, score: 0 };
    assert.deepEqual(hitRow(bare, NOW), { label: '(untitled)', description: '#7 · observation · just now' });
  });
});

describe('observationMarkdown', () => {
  const obs: Observation = {
    id: 42,
    sessionId: 12,
    contentSessionId: 'c-1',
    memorySessionId: 'm-1',
    promptNumber: 3,
    project: 'mnemo',
    type: 'bugfix',
    title: 'Fix <token> refresh',
    subtitle: 'auth.ts refreshed too late',
    facts: ['expiry was checked after use', ' '],
    narrative: 'The token expired mid-request.\n\nNow it is refreshed first.',
    concepts: ['auth', 'tokens'],
    filesRead: ['/w/src/clock.ts'],
    filesModified: ['/w/src/auth.ts'],
    tool: 'Save',
    request: 'why do requests fail?\nafter an hour',
    source: 'editor',
    time: '2026-11-22T11:00:00Z',
  };
  it('renders every part', () => {
    const want = [
      '# Fix \\<token\\> refresh',
      '',
      '*auth.ts refreshed too late*',
      '',
      '**bugfix** · #42 · project mnemo · 2026-11-22 11:00',
      '',
      'editor · tool Save · prompt 3',
      '',
      '## Request',
      '',
      '> why do requests fail?',
      '> after an hour',
      '',
      '## Narrative',
      '',
      'The token expired mid-request.',
      '',
      'Now it is refreshed first.',
      '',
      '## Facts',
      '',
      '- expiry was checked after use',
      '',
      '## Files',
      '',
      'Modified:',
      '',
      '- `/w/src/auth.ts`',
      '',
      'Read:',
      '',
      '- `/w/src/clock.ts`',
      '',
      '## Concepts',
      '',
      '`auth` · `tokens`',
      '',
      '---',
      '',
      'session 12 · content session `c-1` · memory session `m-1`',
      '',
    ].join('\n');
    assert.equal(observationMarkdown(obs), want);
  });
  it('leaves out what is empty', () => {
    const md = observationMarkdown({
      ...obs,
      subtitle: '',
      facts: null,
      narrative: '',
      concepts: [],
      filesRead: null,
      filesModified: null,
      request: '',
      tool: '',
      source: '',
      promptNumber: 0,
      memorySessionId: '',
    });
    assert.equal(
      md,
      '# Fix \\<token\\> refresh\n\n**bugfix** · #42 · project mnemo · 2026-11-22 11:00\n\n---\n\nsession 12 · content session `c-1`\n',
    );
  });
  it('fences file names that hold backticks', () => {
    const md = observationMarkdown({ ...obs, filesModified: ['/w/a`b.ts'], filesRead: [] });
    assert.match(md, /^- `` \/w\/a`b\.ts ``$/mu);
  });
});

describe('anchor', () => {
  it('counts lines and columns from 1 and ends on the last selected column', () => {
    assert.deepEqual(anchorOf('a.ts', { line: 1, character: 0 }, { line: 1, character: 12 }), {
      file: 'a.ts',
      startLine: 2,
      endLine: 2,
      endColumn: 12,
    });
    assert.deepEqual(anchorOf('a.ts', { line: 3, character: 4 }, { line: 7, character: 2 }), {
      file: 'a.ts',
      startLine: 4,
      startColumn: 5,
      endLine: 8,
      endColumn: 2,
    });
  });
  it('ends a selection that stops at the start of a line on the line before', () => {
    assert.deepEqual(anchorOf('a.ts', { line: 0, character: 0 }, { line: 3, character: 0 }), {
      file: 'a.ts',
      startLine: 1,
      endLine: 3,
    });
  });
  it('prints like a compiler message', () => {
    assert.equal(anchorText({ file: 'a.ts', startLine: 4, endLine: 8 }), 'a.ts:4-8');
    assert.equal(anchorText({ file: 'a.ts', startLine: 4, startColumn: 5, endLine: 4, endColumn: 9 }), 'a.ts:4:5');
    assert.equal(anchorText({ file: 'a.ts', startLine: 4, endLine: 4 }), 'a.ts:4');
  });
});

describe('context', () => {
  it('strips the wrapper tags', () => {
    assert.equal(stripContextTags('<mnemo-context project="x">\n# Recent\n- a\n</mnemo-context>\n'), '# Recent\n- a');
  });
  it('renders the context with a header', () => {
    const md = contextMarkdown({
      project: 'mnemo',
      context: '<mnemo-context>\n## Recent\n- #1 fix\n</mnemo-context>',
      observationIds: [1],
      bytes: 40,
    });
    assert.equal(
      md,
      '# Mnemo context: mnemo\n\nWhat a new session in mnemo starts with: 1 observation cited, 40 bytes.\n\n---\n\n## Recent\n- #1 fix\n',
    );
  });
  it('says when nothing is remembered', () => {
    const md = contextMarkdown({ project: '', context: '', observationIds: null, bytes: 0 });
    assert.match(md, /^# Mnemo context: this workspace$/mu);
    assert.match(md, /0 observations cited, 0 bytes/u);
    assert.match(md, /Nothing is remembered for this project yet/u);
  });
});

describe('statusBar', () => {
  const status: StatusResult = {
    version: '0.1.0',
    protocolVersion: 1,
    dataDir: '/d',
    counts: { sessions: 3, observations: 1234, summaries: 1, prompts: 9, queued: 0 },
    embedder: 'use-lite',
    agent: 'local',
    pid: 77,
  };
  it('shows the observation count when running', () => {
    const got = statusBar('running', status);
    assert.equal(got.text, '$(database) 1,234');
    assert.equal(
      got.tooltip,
      'Mnemo 0.1.0: 1,234 observations, 3 sessions, 1 summary\nDaemon pid 77, data in /d\nEmbedder use-lite, agent local\nClick to search memory.',
    );
  });
  it('shows the queue and a notice', () => {
    const got = statusBar('running', { ...status, counts: { ...status.counts, queued: 5 }, notice: 'hashing embedder' });
    assert.equal(got.text, '$(database) 1,234 $(sync) 5 $(warning)');
    assert.match(got.tooltip, /5 events waiting to be compressed/u);
    assert.match(got.tooltip, /Notice: hashing embedder/u);
  });
  const states: { state: Parameters<typeof statusBar>[0]; text: string }[] = [
    { state: 'idle', text: '$(database) Mnemo' },
    { state: 'starting', text: '$(sync~spin) Mnemo' },
    { state: 'stopped', text: '$(circle-slash) Mnemo' },
    { state: 'failed', text: '$(circle-slash) Mnemo' },
    { state: 'running', text: '$(database) Mnemo' },
  ];
  for (const s of states) {
    it(`without status, ${s.state}`, () => {
      assert.equal(statusBar(s.state, undefined).text, s.text);
    });
  }
});

describe('forgetMessage', () => {
  const cases: { name: string; deleted: number[] | null; missing: number[] | null; want: string }[] = [
    { name: 'one', deleted: [4], missing: [], want: 'Mnemo forgot #4.' },
    { name: 'several', deleted: [1, 2, 3], missing: null, want: 'Mnemo forgot #1, #2 and #3.' },
    { name: 'some missing', deleted: [1], missing: [9], want: 'Mnemo forgot #1. Not found: #9.' },
    { name: 'nothing', deleted: null, missing: [9, 10], want: 'Mnemo forgot nothing. Not found: #9 and #10.' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(forgetMessage({ deleted: c.deleted, missing: c.missing }), c.want);
    });
  }
});

describe('parseIds', () => {
  const cases: { in: string; want: number[] | undefined }[] = [
    { in: '42', want: [42] },
    { in: '#42', want: [42] },
    { in: ' 12, 15 #16;12 ', want: [12, 15, 16] },
    { in: '', want: undefined },
    { in: 'auth 12', want: undefined },
    { in: '0', want: undefined },
    { in: '1.5', want: undefined },
    { in: '#', want: undefined },
  ];
  for (const c of cases) {
    it(JSON.stringify(c.in), () => {
      assert.deepEqual(parseIds(c.in), c.want);
    });
  }
});

describe('document paths', () => {
  it('round-trips observation ids', () => {
    const p = observationPath(42, 'Fix: token refresh (auth.ts)!');
    assert.equal(p, '/observation/42/fix-token-refresh-auth-ts.md');
    assert.equal(parseObservationPath(p), 42);
  });
  it('names untitled observations', () => {
    assert.equal(observationPath(7, '***'), '/observation/7/observation.md');
  });
  it('refuses other paths', () => {
    assert.equal(parseObservationPath('/context/x.md'), undefined);
    assert.equal(parseObservationPath('/observation/x/y.md'), undefined);
  });
  it('names context documents after the folder', () => {
    assert.equal(contextPath('My Project'), '/context/my-project.md');
    assert.equal(contextPath(''), '/context/workspace.md');
  });
  it('slugs keep letters of any script and stay short', () => {
    assert.equal(slug('Ünïcode — Straße 東京'), 'unicode-straße-東京');
    assert.equal(slug('a'.repeat(100)).length, 60);
  });
});

describe('small words', () => {
  it('idList', () => {
    assert.equal(idList([]), '');
    assert.equal(idList([1]), '#1');
    assert.equal(idList([1, 2]), '#1 and #2');
  });
  it('plural', () => {
    assert.equal(plural(1, 'summary', 'summaries'), '1 summary');
    assert.equal(plural(2, 'summary', 'summaries'), '2 summaries');
    assert.equal(plural(1000, 'byte'), '1,000 bytes');
  });
});
