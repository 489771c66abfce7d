// Idle detection for the editor's Stop stage: after `idleMs` without user activity the
// tracker calls onIdle once; the next activity starts a new period. Pure: no `vscode`,
// time comes from an injectable Clock.
//
// One timer at most is pending. Activity only records its time, so a burst of keystrokes
// costs no timer churn: when the timer fires early (activity happened meanwhile) it is
// re-armed for the remainder.

import { type Clock, MAX_DELAY_MS, type Timer, systemClock } from './clock';

export interface IdleOptions {
  /** Idle period in milliseconds; 0 or less disables the tracker. */
  idleMs: number;
  onIdle: () => void;
  clock?: Clock;
}

export class IdleTracker {
  private readonly clock: Clock;
  private readonly onIdle: () => void;
  private idleMs: number;
  private lastActivity: number;
  private timer: Timer | undefined;
  private idleNow = false;
  private disposed = false;

  /** Starting counts as activity: the first idle period begins now. */
  constructor(options: IdleOptions) {
    this.clock = options.clock ?? systemClock;
    this.onIdle = options.onIdle;
    this.idleMs = sanitize(options.idleMs);
    this.lastActivity = this.clock.now();
    this.arm(this.idleMs);
  }

  /** True between an idle notification and the next activity. */
  get idle(): boolean {
    return this.idleNow;
  }

  /** Records user activity (an edit, a selection change, the window gaining focus). */
  activity(): void {
    if (this.disposed) {
      return;
    }
    this.lastActivity = this.clock.now();
    this.idleNow = false;
    if (this.timer === undefined) {
      this.arm(this.idleMs);
    }
  }

  /** Changes the idle period; the time already spent idle counts toward the new one. */
  setIdleMs(idleMs: number): void {
    if (this.disposed) {
      return;
    }
    this.idleMs = sanitize(idleMs);
    this.cancel();
    if (!this.idleNow) {
      this.arm(this.idleMs - (this.clock.now() - this.lastActivity));
    }
  }

  dispose(): void {
    this.disposed = true;
    this.cancel();
  }

  private arm(delay: number): void {
    if (this.idleMs <= 0 || this.disposed) {
      return;
    }
    this.timer = this.clock.setTimeout(() => {
      this.fire();
    }, Math.max(0, Math.min(delay, MAX_DELAY_MS)));
  }

  private cancel(): void {
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private fire(): void {
    this.timer = undefined;
    if (this.disposed || this.idleNow) {
      return;
    }
    const elapsed = this.clock.now() - this.lastActivity;
    if (elapsed < this.idleMs) {
      this.arm(this.idleMs - elapsed);
      return;
    }
    this.idleNow = true;
    this.onIdle();
  }
}

/** The default of the `mnemo.idleMinutes` setting. */
export const DEFAULT_IDLE_MINUTES = 10;

/**
 * Converts the `mnemo.idleMinutes` setting to milliseconds: 0 or less disables idle
 * detection, a value that is not a number falls back to the default.
 */
export function idleMinutesToMs(minutes: unknown): number {
  if (typeof minutes !== 'number' || !Number.isFinite(minutes)) {
    return DEFAULT_IDLE_MINUTES * 60_000;
  }
  return minutes <= 0 ? 0 : Math.round(minutes * 60_000);
}

/**
 * The `idleMinutes` of initializationOptions: the server runs its own idle timer too
 * (for clients that never send mnemo/stop), where 0 means its default and a negative
 * number turns it off. So a disabled setting is sent as -1.
 */
export function serverIdleMinutes(setting: unknown): number {
  const ms = idleMinutesToMs(setting);
  return ms > 0 ? ms / 60_000 : -1;
}

function sanitize(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/**
 * The `saveWindowSeconds` of initializationOptions from the `mnemo.saveWindowSeconds`
 * setting: a positive number of seconds, 0 (or anything that is not a number) for the
 * server's own setting, a negative number to remember every save on its own.
 */
export function saveWindowSeconds(setting: unknown): number {
  return typeof setting === 'number' && Number.isFinite(setting) ? setting : 0;
}
