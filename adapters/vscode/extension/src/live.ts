// Live results for a query that changes as the user types: each change waits `delayMs`
// for the typing to settle, runs the query, aborts the run it supersedes, and delivers
// only the newest answer. Pure: the query function and the clock are injected.

import { type Clock, type Timer, systemClock } from './clock';

export interface LiveQueryOptions<T> {
  /** Debounce delay in milliseconds. */
  delayMs: number;
  /** Runs one query; it should stop early when signal aborts. */
  run: (query: string, signal: AbortSignal) => Promise<T>;
  /** Receives the answer to the newest query only. */
  onResult: (query: string, result: T) => void;
  /** Receives the failure of the newest query only (never an abort). */
  onError: (query: string, error: unknown) => void;
  /** Told when a query starts and when the newest one has settled. */
  onBusy?: (busy: boolean) => void;
  clock?: Clock;
}

export class LiveQuery<T> {
  private readonly options: LiveQueryOptions<T>;
  private readonly clock: Clock;
  private timer: Timer | undefined;
  private running: AbortController | undefined;
  private generation = 0;
  private disposed = false;

  constructor(options: LiveQueryOptions<T>) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
  }

  /** The query changed: run it after the debounce delay. */
  update(query: string): void {
    this.schedule(query, this.options.delayMs);
  }

  /** Runs the query at once (the first query, or Enter). */
  now(query: string): void {
    this.schedule(query, 0);
  }

  dispose(): void {
    this.disposed = true;
    this.generation++;
    this.cancelTimer();
    this.running?.abort();
    this.running = undefined;
  }

  private schedule(query: string, delay: number): void {
    if (this.disposed) {
      return;
    }
    this.cancelTimer();
    const generation = ++this.generation;
    if (delay <= 0) {
      void this.execute(query, generation);
      return;
    }
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      void this.execute(query, generation);
    }, delay);
  }

  private async execute(query: string, generation: number): Promise<void> {
    if (generation !== this.generation) {
      return;
    }
    this.running?.abort();
    const controller = new AbortController();
    this.running = controller;
    this.options.onBusy?.(true);
    try {
      const result = await this.options.run(query, controller.signal);
      if (generation === this.generation && !controller.signal.aborted) {
        this.options.onResult(query, result);
      }
    } catch (error) {
      if (generation === this.generation && !controller.signal.aborted) {
        this.options.onError(query, error);
      }
    } finally {
      if (this.running === controller) {
        this.running = undefined;
        this.options.onBusy?.(false);
      }
    }
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
