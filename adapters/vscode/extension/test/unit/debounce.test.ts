import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Debouncer } from '../../src/debounce';
import { FakeClock } from './fakeClock';

describe('Debouncer', () => {
  it('runs once after a burst has been quiet for the delay', () => {
    const clock = new FakeClock();
    let runs = 0;
    const d = new Debouncer(300, () => runs++, clock);
    d.trigger();
    clock.advance(200);
    d.trigger();
    clock.advance(200);
    d.trigger();
    assert.equal(runs, 0);
    assert.equal(d.pending, true);
    clock.advance(299);
    assert.equal(runs, 0);
    clock.advance(1);
    assert.equal(runs, 1);
    assert.equal(d.pending, false);
    clock.advance(1000);
    assert.equal(runs, 1, 'nothing more without a trigger');
    d.trigger();
    clock.advance(300);
    assert.equal(runs, 2);
  });

  it('runs nothing after dispose', () => {
    const clock = new FakeClock();
    let runs = 0;
    const d = new Debouncer(300, () => runs++, clock);
    d.trigger();
    d.dispose();
    d.trigger();
    clock.advance(1000);
    assert.equal(runs, 0);
    assert.equal(clock.timers, 0);
  });
});
