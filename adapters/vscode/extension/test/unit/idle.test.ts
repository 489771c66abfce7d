import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_IDLE_MINUTES, IdleTracker, idleMinutesToMs, serverIdleMinutes } from '../../src/idle';
import { FakeClock } from './fakeClock';

const MIN = 60_000;

/** A tracker with a 10-minute period whose idle notifications are counted. */
function setup(idleMs = 10 * MIN): { clock: FakeClock; tracker: IdleTracker; fired: number[] } {
  const clock = new FakeClock();
  const fired: number[] = [];
  const tracker = new IdleTracker({
    idleMs,
    clock,
    onIdle: () => {
      fired.push(clock.now());
    },
  });
  return { clock, tracker, fired };
}

describe('IdleTracker', () => {
  it('fires once after the idle period that starts at creation', () => {
    const { clock, tracker, fired } = setup();
    const start = clock.now();
    clock.advance(10 * MIN - 1);
    assert.deepEqual(fired, []);
    clock.advance(1);
    assert.deepEqual(fired, [start + 10 * MIN]);
    assert.equal(tracker.idle, true);
    clock.advance(60 * MIN);
    assert.equal(fired.length, 1, 'one notification per idle period');
    assert.equal(clock.timers, 0, 'no timer while idle');
  });

  it('measures the period from the last activity', () => {
    const { clock, tracker, fired } = setup();
    const start = clock.now();
    clock.advance(4 * MIN);
    tracker.activity();
    clock.advance(9 * MIN);
    tracker.activity();
    clock.advance(9 * MIN);
    assert.deepEqual(fired, []);
    clock.advance(1 * MIN);
    assert.deepEqual(fired, [start + 23 * MIN]);
  });

  it('keeps at most one timer however much activity there is', () => {
    const { clock, tracker } = setup();
    for (let i = 0; i < 1000; i++) {
      clock.advance(100);
      tracker.activity();
    }
    assert.equal(clock.timers, 1);
  });

  it('starts a new period with the first activity after idling', () => {
    const { clock, tracker, fired } = setup();
    clock.advance(10 * MIN);
    assert.equal(fired.length, 1);
    clock.advance(5 * MIN);
    tracker.activity();
    assert.equal(tracker.idle, false);
    const resumed = clock.now();
    clock.advance(10 * MIN);
    assert.deepEqual(fired.slice(1), [resumed + 10 * MIN]);
  });

  it('counts the idle time already spent toward a changed period', () => {
    const { clock, tracker, fired } = setup();
    const start = clock.now();
    clock.advance(3 * MIN);
    tracker.setIdleMs(5 * MIN);
    clock.advance(2 * MIN - 1);
    assert.deepEqual(fired, []);
    clock.advance(1);
    assert.deepEqual(fired, [start + 5 * MIN]);
  });

  it('fires at once when the new period has already passed', () => {
    const { clock, tracker, fired } = setup();
    clock.advance(7 * MIN);
    tracker.setIdleMs(2 * MIN);
    clock.advance(0);
    assert.equal(fired.length, 1);
  });

  for (const idleMs of [0, -5, Number.NaN]) {
    it(`is disabled by a period of ${idleMs}`, () => {
      const { clock, tracker, fired } = setup(idleMs);
      tracker.activity();
      clock.advance(1000 * MIN);
      assert.deepEqual(fired, []);
      assert.equal(clock.timers, 0);
    });
  }

  it('can be enabled later', () => {
    const { clock, tracker, fired } = setup(0);
    clock.advance(MIN);
    tracker.setIdleMs(2 * MIN);
    clock.advance(MIN);
    assert.equal(fired.length, 1);
  });

  it('stops firing once disposed', () => {
    const { clock, tracker, fired } = setup();
    tracker.dispose();
    tracker.activity();
    tracker.setIdleMs(MIN);
    clock.advance(100 * MIN);
    assert.deepEqual(fired, []);
    assert.equal(clock.timers, 0);
  });
});

describe('idleMinutesToMs', () => {
  const cases: { name: string; in: unknown; want: number }[] = [
    { name: 'ten minutes', in: 10, want: 600_000 },
    { name: 'fractions', in: 0.5, want: 30_000 },
    { name: 'zero disables', in: 0, want: 0 },
    { name: 'negative disables', in: -1, want: 0 },
    { name: 'missing is the default', in: undefined, want: DEFAULT_IDLE_MINUTES * MIN },
    { name: 'a string is the default', in: '5', want: DEFAULT_IDLE_MINUTES * MIN },
    { name: 'infinity is the default', in: Number.POSITIVE_INFINITY, want: DEFAULT_IDLE_MINUTES * MIN },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(idleMinutesToMs(c.in), c.want);
    });
  }
});

describe('serverIdleMinutes', () => {
  const cases: { in: unknown; want: number }[] = [
    { in: 10, want: 10 },
    { in: 0.5, want: 0.5 },
    { in: 0, want: -1 },
    { in: -3, want: -1 },
    { in: undefined, want: DEFAULT_IDLE_MINUTES },
  ];
  for (const c of cases) {
    it(String(c.in), () => {
      assert.equal(serverIdleMinutes(c.in), c.want);
    });
  }
});
