// The status bar item: the sidecar's state and the number of observations, refreshed
// from `mnemo/status` every 30 s, when the state changes and shortly after saves.
// Clicking it opens the memory search.

import * as vscode from 'vscode';
import { statusBar } from './format';
import { Method, type StatusResult } from './protocol';
import { type Sidecar, describe } from './sidecar';

const REFRESH_MS = 30_000;
/** After a save the server compresses asynchronously: look again a little later. */
const AFTER_SAVE_MS = 2_000;

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly interval: ReturnType<typeof setInterval>;
  private readonly listener: vscode.Disposable;
  private soon: ReturnType<typeof setTimeout> | undefined;
  private status: StatusResult | undefined;
  private lastError = '';
  private inFlight = false;

  constructor(private readonly sidecar: Sidecar) {
    this.item = vscode.window.createStatusBarItem('mnemo.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Mnemo';
    this.item.command = 'mnemo.search';
    this.render();
    this.item.show();
    this.interval = setInterval(() => void this.refresh(), REFRESH_MS);
    this.listener = sidecar.onDidChangeState((state) => {
      if (state !== 'running') {
        this.status = undefined;
      }
      this.render();
      if (state === 'running') {
        void this.refresh();
      }
    });
  }

  /** The text shown now (for tests and the log). */
  get text(): string {
    return this.item.text;
  }

  /** Asks the sidecar for its status now. */
  async refresh(): Promise<void> {
    if (this.sidecar.state !== 'running' || this.inFlight) {
      return;
    }
    this.inFlight = true;
    try {
      this.status = await this.sidecar.request<StatusResult>(Method.status, {});
      this.lastError = '';
    } catch (error) {
      // Routine: log each distinct failure once, keep the last good numbers.
      const message = describe(error);
      if (message !== this.lastError) {
        this.lastError = message;
        this.sidecar.output.warn(`Mnemo status: ${message}`);
      }
    } finally {
      this.inFlight = false;
    }
    this.render();
  }

  /** Refreshes shortly, coalescing bursts (after saves). */
  refreshSoon(delayMs = AFTER_SAVE_MS): void {
    if (this.soon !== undefined) {
      clearTimeout(this.soon);
    }
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.refresh();
    }, delayMs);
  }

  /**
   * Refreshes once the save window has passed (the sidecar gathers a file's saves for
   * windowSeconds before it remembers them), coalescing bursts. A window the server
   * chooses (0) is left to the periodic refresh.
   */
  refreshAfterSave(windowSeconds: number): void {
    this.refreshSoon(AFTER_SAVE_MS + (windowSeconds > 0 ? windowSeconds * 1000 : 0));
  }

  dispose(): void {
    clearInterval(this.interval);
    if (this.soon !== undefined) {
      clearTimeout(this.soon);
    }
    this.listener.dispose();
    this.item.dispose();
  }

  private render(): void {
    const { text, tooltip } = statusBar(this.sidecar.state, this.status);
    this.item.text = text;
    this.item.tooltip = tooltip;
  }
}
