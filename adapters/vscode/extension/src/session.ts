// The editor's session id, which becomes Mnemo's contentSessionId.

import { randomUUID } from 'node:crypto';

/**
 * contentSessionId returns the id Mnemo files this window's work under:
 * vscode.env.sessionId, unless VS Code gives the placeholder it uses when
 * telemetry is off ("someValue.sessionId" in code-server, VSCodium and any
 * VS Code with telemetry disabled) — the same value in every window, which
 * would merge unrelated windows into one session. Then a fresh id of our
 * own, one per activation.
 */
export function contentSessionId(envSessionId: string | undefined, newId: () => string = randomUUID): string {
  const id = (envSessionId ?? '').trim();
  if (id === '' || id.startsWith('someValue.')) {
    return `vscode-${newId()}`;
  }
  return id;
}
