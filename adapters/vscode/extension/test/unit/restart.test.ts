import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RestartPolicy } from '../../src/restart';
import { FakeClock } from './fakeClock';

describe('RestartPolicy', () => {
  it('allows three restarts in three minutes, then refuses', () => {
    const clock = new FakeClock();
    const policy = new RestartPolicy({ clock });
    const answers = [0, 1, 2, 3].map(() => {
      clock.advance(10_000);
      return policy.allowRestart();
    });
    assert.deepEqual(answers, [true, true, true, false]);
  });

  it('forgets crashes older than the window', () => {
    const clock = new FakeClock();
    const policy = new RestartPolicy({ clock, maxRestarts: 2, windowMs: 60_000 });
    assert.equal(policy.allowRestart(), true);
    assert.equal(policy.allowRestart(), true);
    assert.equal(policy.allowRestart(), false);
    clock.advance(60_001);
    assert.equal(policy.allowRestart(), true);
  });

  it('starts over after reset', () => {
    const policy = new RestartPolicy({ clock: new FakeClock(), maxRestarts: 1 });
    assert.equal(policy.allowRestart(), true);
    assert.equal(policy.allowRestart(), false);
    policy.reset();
    assert.equal(policy.allowRestart(), true);
  });
});
