import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LastWords, type LogLine, parseServerLine } from '../../src/serverLog';

describe('parseServerLine', () => {
  const cases: { name: string; in: string; want: LogLine }[] = [
    {
      name: 'slog info with a quoted message',
      in: 'time=2026-11-22T14:03:00.123Z level=INFO msg="session started" project=billing id=12',
      want: { level: 'info', text: 'session started project=billing id=12' },
    },
    {
      name: 'slog warning with a bare message',
      in: 'time=2026-11-22T14:03:00Z level=WARN msg=slow took=3s',
      want: { level: 'warn', text: 'slow took=3s' },
    },
    {
      name: 'slog error with escapes',
      in: 'time=2026-11-22T14:03:00Z level=ERROR msg="open \\"db\\": locked" err="resource temporarily unavailable"',
      want: { level: 'error', text: 'open "db": locked err="resource temporarily unavailable"' },
    },
    {
      name: 'slog debug with an offset level',
      in: 'time=2026-11-22T14:03:00Z level=DEBUG-2 msg=frame',
      want: { level: 'debug', text: 'frame' },
    },
    {
      name: 'anything else is an error',
      in: 'Incorrect Usage: flag provided but not defined: -bogus',
      want: { level: 'error', text: 'Incorrect Usage: flag provided but not defined: -bogus' },
    },
    {
      name: 'a panic line',
      in: 'panic: runtime error: index out of range [3] with length 3',
      want: { level: 'error', text: 'panic: runtime error: index out of range [3] with length 3' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(parseServerLine(c.in), c.want);
    });
  }
});

describe('LastWords', () => {
  it('prefers the last error or warning', () => {
    const words = new LastWords();
    words.add({ level: 'warn', text: 'first warning' });
    words.add({ level: 'error', text: 'mnemo: data directory is locked ' });
    words.add({ level: 'info', text: 'bye' });
    assert.equal(words.reason(), 'mnemo: data directory is locked');
  });
  it('falls back to the last line, skipping blank ones', () => {
    const words = new LastWords();
    words.add({ level: 'info', text: 'starting' });
    words.add({ level: 'error', text: '   ' });
    assert.equal(words.reason(), 'starting');
  });
  it('is undefined for a silent process', () => {
    assert.equal(new LastWords().reason(), undefined);
  });
  it('keeps only the last lines', () => {
    const words = new LastWords(2);
    words.add({ level: 'error', text: 'old error' });
    words.add({ level: 'info', text: 'a' });
    words.add({ level: 'info', text: 'b' });
    assert.equal(words.reason(), 'b');
  });
});
