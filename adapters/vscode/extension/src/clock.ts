// Time as a dependency: the pure modules take a Clock so that tests drive time by hand
// instead of sleeping. systemClock is the real one.

/** A timer handle returned by Clock.setTimeout (Node gives objects, fakes numbers). */
export type Timer = object | number;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): Timer;
  clearTimeout(timer: Timer): void;
}

/** The longest delay setTimeout honours (about 24.8 days); longer ones fire at once. */
export const MAX_DELAY_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.min(Math.max(ms, 0), MAX_DELAY_MS)),
  clearTimeout: (timer) => {
    clearTimeout(timer as ReturnType<typeof setTimeout>);
  },
};
