// A clock driven by hand: advance(ms) moves time and fires the timers that fall due, in
// order, each seeing the time it was due at.

import type { Clock, Timer } from '../../src/clock';

interface Pending {
  id: number;
  at: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  private time: number;
  private nextId = 1;
  private pending: Pending[] = [];

  constructor(start = Date.UTC(2026, 10, 22, 12, 0, 0)) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const id = this.nextId++;
    this.pending.push({ id, at: this.time + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(timer: Timer): void {
    this.pending = this.pending.filter((p) => p.id !== timer);
  }

  /** How many timers are waiting. */
  get timers(): number {
    return this.pending.length;
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      this.pending.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.pending[0];
      if (next === undefined || next.at > end) {
        break;
      }
      this.pending.shift();
      this.time = next.at;
      next.fn();
    }
    this.time = end;
  }
}
