// Read-only documents of the `mnemo:` scheme: observations, context, and a session's
// prompts and summaries, rendered as
// markdown. Commands put the text they fetched; a document opened otherwise (a tab
// restored after a reload) is fetched from the sidecar on demand.

import * as vscode from 'vscode';
import {
  contextMarkdown,
  contextPath,
  observationMarkdown,
  observationPath,
  parseObservationPath,
} from './format';
import { parseRecordPath, promptMarkdown, summaryMarkdown } from './records';
import {
  type ContextParams,
  type ContextResult,
  type GetObservationsResult,
  Method,
  type Observation,
  type SessionResult,
} from './protocol';
import { type Sidecar, describe } from './sidecar';

export const SCHEME = 'mnemo';

export class MemoryDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly sidecar: Sidecar) {}

  /** The URI of an observation's document. */
  static observationUri(obs: Pick<Observation, 'id' | 'title'>): vscode.Uri {
    return vscode.Uri.from({ scheme: SCHEME, path: observationPath(obs.id, obs.title) });
  }

  /** The URI of a folder's context document; the query keeps the folder. */
  static contextUri(folder: string, name: string): vscode.Uri {
    return vscode.Uri.from({
      scheme: SCHEME,
      path: contextPath(name),
      query: new URLSearchParams({ cwd: folder }).toString(),
    });
  }

  /** Stores a document's text (and refreshes it if it is open). */
  put(uri: vscode.Uri, text: string): void {
    const key = uri.toString();
    const previous = this.texts.get(key);
    this.texts.set(key, text);
    if (previous !== undefined && previous !== text) {
      this.changed.fire(uri);
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const known = this.texts.get(uri.toString());
    if (known !== undefined) {
      return known;
    }
    try {
      const text = await this.fetch(uri, token);
      this.texts.set(uri.toString(), text);
      return text;
    } catch (error) {
      this.sidecar.output.warn(`Mnemo could not load ${uri.toString()}: ${describe(error)}`);
      return `# Not available\n\nMnemo could not load this document: ${describe(error)}\n`;
    }
  }

  dispose(): void {
    this.changed.dispose();
    this.texts.clear();
  }

  private async fetch(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const id = parseObservationPath(uri.path);
    if (id !== undefined) {
      const result = await this.sidecar.request<GetObservationsResult>(
        Method.getObservations,
        { ids: [id] },
        token,
      );
      const obs = result.observations?.[0];
      return obs !== undefined ? observationMarkdown(obs) : `# Observation #${id}\n\nMnemo has no such observation.\n`;
    }
    if (uri.path.startsWith('/context/')) {
      const fromQuery = new URLSearchParams(uri.query).get('cwd');
      const cwd = fromQuery !== null && fromQuery !== '' ? fromQuery : this.sidecar.cwd;
      const params: ContextParams = cwd !== undefined ? { cwd } : {};
      const result = await this.sidecar.request<ContextResult>(Method.context, params, token);
      return contextMarkdown(result);
    }
    const record = parseRecordPath(uri.path);
    if (record !== undefined) {
      const result = await this.sidecar.request<SessionResult>(
        Method.session,
        { contentSessionId: record.contentSessionId },
        token,
      );
      if ('prompt' in record) {
        const p = result.prompts?.find((x) => x.number === record.prompt);
        return p !== undefined ? promptMarkdown(result.session, p) : `# Prompt ${record.prompt}\n\nMnemo has no such prompt.\n`;
      }
      const s = result.summaries?.find((x) => x.id === record.summary);
      return s !== undefined ? summaryMarkdown(s) : `# Summary #${record.summary}\n\nMnemo has no such summary.\n`;
    }
    throw new Error('unknown Mnemo document');
  }
}
