// Calls that come in bursts made one: the memory tells each change, the view refreshes
// once the burst has settled. Pure: the clock is injected.

import { type Clock, type Timer, systemClock } from './clock';

export class Debouncer {
  private timer: Timer | undefined;
  private disposed = false;

  constructor(
    /** Quiet time in milliseconds after the last trigger. */
    private readonly delayMs: number,
    private readonly fn: () => void,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Runs fn once delayMs have passed without another trigger. */
  trigger(): void {
    if (this.disposed) {
      return;
    }
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
    }
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.fn();
    }, this.delayMs);
  }

  /** True while a run is scheduled. */
  get pending(): boolean {
    return this.timer !== undefined;
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
