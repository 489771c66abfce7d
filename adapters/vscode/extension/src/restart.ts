// When a running sidecar dies, restart it, but not in a loop: at most `maxRestarts`
// restarts within `windowMs`. Pure, with an injectable clock.

import { type Clock, systemClock } from './clock';

export interface RestartPolicyOptions {
  maxRestarts?: number;
  windowMs?: number;
  clock?: Clock;
}

export class RestartPolicy {
  private readonly maxRestarts: number;
  private readonly windowMs: number;
  private readonly clock: Clock;
  private readonly restarts: number[] = [];

  constructor(options: RestartPolicyOptions = {}) {
    this.maxRestarts = options.maxRestarts ?? 3;
    this.windowMs = options.windowMs ?? 3 * 60_000;
    this.clock = options.clock ?? systemClock;
  }

  /** Records a crash and reports whether the sidecar may be restarted. */
  allowRestart(): boolean {
    const now = this.clock.now();
    while (this.restarts.length > 0 && now - (this.restarts[0] ?? now) > this.windowMs) {
      this.restarts.shift();
    }
    if (this.restarts.length >= this.maxRestarts) {
      return false;
    }
    this.restarts.push(now);
    return true;
  }

  /** Forgets past crashes (after a deliberate restart). */
  reset(): void {
    this.restarts.length = 0;
  }
}
