import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LiveQuery } from '../../src/live';
import { FakeClock } from './fakeClock';

/** A query whose answers the test releases by hand. */
function setup(): {
  clock: FakeClock;
  live: LiveQuery<string>;
  runs: { query: string; signal: AbortSignal; resolve: (v: string) => void; reject: (e: unknown) => void }[];
  results: string[];
  errors: string[];
  busy: boolean[];
} {
  const clock = new FakeClock();
  const runs: ReturnType<typeof setup>['runs'] = [];
  const results: string[] = [];
  const errors: string[] = [];
  const busy: boolean[] = [];
  const live = new LiveQuery<string>({
    delayMs: 150,
    clock,
    run: (query, signal) =>
      new Promise<string>((resolve, reject) => {
        runs.push({ query, signal, resolve, reject });
      }),
    onResult: (query, result) => results.push(`${query}=${result}`),
    onError: (query, error) => errors.push(`${query}:${String(error)}`),
    onBusy: (b) => busy.push(b),
  });
  return { clock, live, runs, results, errors, busy };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('LiveQuery', () => {
  it('waits for typing to settle, then runs the last query only', async () => {
    const { clock, live, runs, results } = setup();
    live.update('a');
    clock.advance(100);
    live.update('au');
    clock.advance(100);
    live.update('aut');
    assert.equal(runs.length, 0);
    clock.advance(150);
    assert.deepEqual(
      runs.map((r) => r.query),
      ['aut'],
    );
    runs[0]?.resolve('3 hits');
    await tick();
    assert.deepEqual(results, ['aut=3 hits']);
  });

  it('runs the first query at once', async () => {
    const { live, runs, results, busy } = setup();
    live.now('');
    assert.equal(runs.length, 1);
    runs[0]?.resolve('newest');
    await tick();
    assert.deepEqual(results, ['=newest']);
    assert.deepEqual(busy, [true, false]);
  });

  it('aborts a superseded run and drops its late answer', async () => {
    const { clock, live, runs, results } = setup();
    live.now('old');
    live.update('new');
    clock.advance(150);
    const [first, second] = runs;
    assert.ok(first !== undefined && second !== undefined && runs.length === 2);
    assert.equal(first.signal.aborted, true);
    assert.equal(second.signal.aborted, false);
    second.resolve('fresh');
    first.resolve('stale');
    await tick();
    assert.deepEqual(results, ['new=fresh']);
  });

  it('drops an answer that arrives after a newer query was typed', async () => {
    const { clock, live, runs, results } = setup();
    live.now('a');
    live.update('ab');
    runs[0]?.resolve('late');
    await tick();
    assert.deepEqual(results, []);
    clock.advance(150);
    runs[1]?.resolve('ok');
    await tick();
    assert.deepEqual(results, ['ab=ok']);
  });

  it('reports failures of the newest query, never aborts', async () => {
    const { clock, live, runs, errors } = setup();
    live.now('a');
    live.update('b');
    clock.advance(150);
    runs[0]?.reject(new Error('cancelled'));
    runs[1]?.reject(new Error('boom'));
    await tick();
    assert.deepEqual(errors, ['b:Error: boom']);
  });

  it('does nothing once disposed', async () => {
    const { clock, live, runs, results } = setup();
    live.now('a');
    live.update('b');
    live.dispose();
    const [only] = runs;
    assert.ok(only !== undefined);
    assert.equal(only.signal.aborted, true);
    clock.advance(1000);
    live.update('c');
    clock.advance(1000);
    assert.equal(runs.length, 1);
    only.resolve('x');
    await tick();
    assert.deepEqual(results, []);
  });
});
