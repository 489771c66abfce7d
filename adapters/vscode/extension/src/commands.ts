// The commands of the Command Palette: search memory, show context, remember the
// selection, forget, show the log, restart. Routine failures go to the output channel
// and a transient status bar message; a command that cannot run says why.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { MemoryDocuments } from './documents';
import { anchorOf, contextMarkdown, forgetMessage, hitRow, idList, observationMarkdown, parseIds, plural } from './format';
import { LiveQuery } from './live';
import {
  type Anchor,
  type ContextResult,
  type ForgetResult,
  type GetObservationsResult,
  type Hit,
  Method,
  type Observation,
  type SaveParams,
  type SaveResult,
  type SearchParams,
  type SearchResult,
  type ViewerResult,
} from './protocol';
import { type Sidecar, describe } from './sidecar';
import type { StatusBar } from './statusBar';

/** How many hits a picker asks for. */
const PICK_LIMIT = 50;
/** Typing pause before a picker searches. */
const DEBOUNCE_MS = 150;

interface HitItem extends vscode.QuickPickItem {
  hit: Hit;
}

export interface CommandDeps {
  sidecar: Sidecar;
  documents: MemoryDocuments;
  statusBar: StatusBar;
  /** Starts (or restarts) the sidecar for the current workspace. */
  restart: () => Promise<boolean>;
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { sidecar } = deps;
  const guarded = (name: string, fn: () => Promise<void>) => async (): Promise<void> => {
    if (!(await ensureRunning(deps))) {
      return;
    }
    try {
      await fn();
    } catch (error) {
      failed(sidecar, name, error);
    }
  };
  return [
    vscode.commands.registerCommand('mnemo.search', guarded('search', () => searchMemory(deps))),
    vscode.commands.registerCommand('mnemo.showContext', guarded('show context', () => showContext(deps))),
    vscode.commands.registerCommand('mnemo.rememberSelection', guarded('remember', () => rememberSelection(deps))),
    vscode.commands.registerCommand('mnemo.forget', guarded('forget', () => forget(deps))),
    vscode.commands.registerCommand('mnemo.openViewer', guarded('open the memory viewer', () => openViewer(deps))),
    vscode.commands.registerCommand('mnemo.showLog', () => {
      sidecar.output.show(true);
    }),
    vscode.commands.registerCommand('mnemo.restart', async () => {
      await deps.restart();
    }),
  ];
}

/** Opens one observation as a read-only markdown document. */
export async function openObservation(deps: CommandDeps, id: number): Promise<vscode.TextEditor | undefined> {
  const result = await deps.sidecar.request<GetObservationsResult>(Method.getObservations, { ids: [id] });
  const obs = result.observations?.find((o) => o.id === id);
  if (obs === undefined) {
    vscode.window.setStatusBarMessage(`$(info) Mnemo has no observation #${id}`, 5000);
    return undefined;
  }
  const uri = MemoryDocuments.observationUri(obs);
  deps.documents.put(uri, observationMarkdown(obs));
  return showMarkdown(uri);
}

async function searchMemory(deps: CommandDeps): Promise<void> {
  const picked = await pickHits(deps.sidecar, {
    title: 'Mnemo: Search Memory',
    placeholder: 'Search what Mnemo remembers (keywords or a question); empty shows the newest',
    many: false,
  });
  const hit = picked?.[0];
  if (hit !== undefined) {
    await openObservation(deps, hit.id);
  }
}

/** Asks the daemon for its memory viewer (started if need be) and opens it in the browser. */
async function openViewer(deps: CommandDeps): Promise<void> {
  const { sidecar } = deps;
  const result = await sidecar.request<ViewerResult>(Method.viewer, {});
  const opened = await vscode.env.openExternal(vscode.Uri.parse(result.url));
  // The address carries the token: it is never logged.
  sidecar.output.info(`Memory viewer on 127.0.0.1:${result.port}${opened ? ' opened' : ' (the editor did not open it)'}`);
  if (!opened) {
    await vscode.window.showInformationMessage(`Mnemo: the memory viewer runs on port ${result.port}; run "mnemo ui" to open it.`);
  }
}

async function showContext(deps: CommandDeps): Promise<void> {
  const { sidecar } = deps;
  const cwd = sidecar.cwd;
  const result = await sidecar.request<ContextResult>(Method.context, cwd !== undefined ? { cwd } : {});
  const name = result.project || (cwd !== undefined ? path.basename(cwd) : 'workspace');
  const uri = MemoryDocuments.contextUri(cwd ?? '', name);
  deps.documents.put(uri, contextMarkdown(result));
  try {
    await vscode.commands.executeCommand('markdown.showPreview', uri);
  } catch (error) {
    sidecar.output.warn(`Markdown preview unavailable (${describe(error)}); opening the text`);
    await showMarkdown(uri);
  }
}

async function rememberSelection(deps: CommandDeps): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const text =
    editor?.selections
      .filter((s) => !s.isEmpty)
      .map((s) => editor.document.getText(s))
      .join('\n\n')
      .trim() ?? '';
  if (editor === undefined || text === '') {
    await vscode.window.showInformationMessage('Mnemo: select the text to remember first.');
    return;
  }
  const doc = editor.document;
  const folder = vscode.workspace.getWorkspaceFolder(doc.uri)?.uri.fsPath ?? deps.sidecar.cwd;
  const params: SaveParams = { text, by: 'person' };
  if (folder !== undefined) {
    params.cwd = folder;
  }
  if (doc.uri.scheme === 'file') {
    params.files = [doc.uri.fsPath];
    params.anchor = selectionAnchor(
      doc.uri.fsPath,
      editor.selections.filter((s) => !s.isEmpty),
    );
  }
  const result = await deps.sidecar.request<SaveResult>(Method.save, params);
  deps.sidecar.output.info(`Remembered the selection of ${doc.uri.toString()} as #${result.id}`);
  deps.statusBar.refreshSoon();
  const choice = await vscode.window.showInformationMessage(`Mnemo remembered this as #${result.id}.`, 'Open');
  if (choice === 'Open') {
    await openObservation(deps, result.id);
  }
}

/** The anchor of the selected text: from the first selection's start to the last one's end. */
function selectionAnchor(file: string, selections: readonly vscode.Selection[]): Anchor | undefined {
  if (selections.length === 0) {
    return undefined;
  }
  const start = selections.map((s) => s.start).reduce((a, b) => (b.isBefore(a) ? b : a));
  const end = selections.map((s) => s.end).reduce((a, b) => (a.isBefore(b) ? b : a));
  return anchorOf(file, start, end);
}

async function forget(deps: CommandDeps): Promise<void> {
  const { sidecar } = deps;
  const picked = await pickHits(sidecar, {
    title: 'Mnemo: Forget…',
    placeholder: 'Pick what to forget: search, or type ids such as 12, 15',
    many: true,
  });
  if (picked === undefined || picked.length === 0) {
    return;
  }
  const ids = picked.map((h) => h.id);
  const detail = picked.map((h) => `#${h.id} ${h.title}`).join('\n');
  const answer = await vscode.window.showWarningMessage(
    `Forget ${plural(ids.length, 'observation')}? This cannot be undone.`,
    { modal: true, detail },
    'Forget',
  );
  if (answer !== 'Forget') {
    return;
  }
  const result = await sidecar.request<ForgetResult>(Method.forget, { ids });
  sidecar.output.info(
    `Forgot ${idList(result.deleted ?? []) || 'nothing'}` +
      ((result.missing ?? []).length > 0 ? `; not found ${idList(result.missing ?? [])}` : ''),
  );
  deps.statusBar.refreshSoon();
  await vscode.window.showInformationMessage(forgetMessage(result));
}

interface PickOptions {
  title: string;
  placeholder: string;
  many: boolean;
}

/**
 * A QuickPick with live results as the user types. Typed ids ("12, 15") show those
 * observations. Resolves with the chosen hits, or undefined when dismissed.
 */
function pickHits(sidecar: Sidecar, options: PickOptions): Promise<Hit[] | undefined> {
  return new Promise((resolve) => {
    const qp = vscode.window.createQuickPick<HitItem>();
    qp.title = options.title;
    qp.placeholder = options.placeholder;
    qp.canSelectMany = options.many;
    qp.matchOnDescription = true;
    qp.matchOnDetail = true;
    let settled = false;
    const live = new LiveQuery<Hit[]>({
      delayMs: DEBOUNCE_MS,
      run: (query, signal) => findHits(sidecar, query, signal),
      onResult: (_query, hits) => {
        const now = Date.now();
        const selected = new Set(qp.selectedItems.map((i) => i.hit.id));
        const items = hits.map((hit): HitItem => ({ ...hitRow(hit, now), hit, alwaysShow: true }));
        qp.items = items;
        if (options.many) {
          qp.selectedItems = items.filter((i) => selected.has(i.hit.id));
        }
      },
      onError: (query, error) => {
        sidecar.output.warn(`Mnemo search for "${query}" failed: ${describe(error)}`);
        qp.items = [];
        qp.placeholder = 'Search failed: see "Mnemo: Show Log"';
      },
      onBusy: (busy) => {
        qp.busy = busy;
      },
    });
    const finish = (hits: Hit[] | undefined): void => {
      if (settled) {
        return;
      }
      settled = true;
      live.dispose();
      resolve(hits);
      qp.dispose();
    };
    qp.onDidChangeValue((value) => {
      live.update(value);
    });
    qp.onDidAccept(() => {
      const chosen = options.many ? qp.selectedItems : qp.selectedItems.length > 0 ? qp.selectedItems : qp.activeItems;
      if (chosen.length > 0) {
        finish(chosen.map((i) => i.hit));
      }
    });
    qp.onDidHide(() => {
      finish(undefined);
    });
    qp.show();
    live.now('');
  });
}

/** The hits for what the user typed: ids when it is a list of ids, else a search. */
async function findHits(sidecar: Sidecar, query: string, signal: AbortSignal): Promise<Hit[]> {
  const cts = new vscode.CancellationTokenSource();
  const onAbort = (): void => {
    cts.cancel();
  };
  signal.addEventListener('abort', onAbort);
  try {
    const ids = parseIds(query);
    if (ids !== undefined) {
      const result = await sidecar.request<GetObservationsResult>(Method.getObservations, { ids }, cts.token);
      return (result.observations ?? []).map(observationHit);
    }
    const params: SearchParams = { limit: PICK_LIMIT };
    if (query.trim() !== '') {
      params.query = query.trim();
    }
    const result = await sidecar.request<SearchResult>(Method.search, params, cts.token);
    return result.hits ?? [];
  } finally {
    signal.removeEventListener('abort', onAbort);
    cts.dispose();
  }
}

function observationHit(obs: Observation): Hit {
  return {
    id: obs.id,
    title: obs.title,
    type: obs.type,
    time: obs.time,
    project: obs.project,
    files: [...(obs.filesModified ?? []), ...(obs.filesRead ?? [])],
    score: 0,
    snippet: obs.subtitle ?? obs.narrative ?? '',
  };
}

/** Opens a `mnemo:` document as markdown, in a preview tab. */
export async function showMarkdown(uri: vscode.Uri): Promise<vscode.TextEditor> {
  let doc = await vscode.workspace.openTextDocument(uri);
  if (doc.languageId !== 'markdown') {
    doc = await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
  }
  return vscode.window.showTextDocument(doc, { preview: true });
}

/** Says why a command cannot run now; true when the sidecar is running. */
async function ensureRunning(deps: CommandDeps): Promise<boolean> {
  switch (deps.sidecar.state) {
    case 'running':
      return true;
    case 'starting':
      vscode.window.setStatusBarMessage('$(sync~spin) Mnemo is still starting…', 3000);
      return false;
    case 'idle':
      await vscode.window.showInformationMessage('Mnemo starts when a folder is open.');
      return false;
    case 'stopped':
    case 'failed': {
      const choice = await vscode.window.showWarningMessage('Mnemo is not running.', 'Show Log', 'Restart');
      if (choice === 'Show Log') {
        deps.sidecar.output.show(true);
      } else if (choice === 'Restart') {
        await deps.restart();
      }
      return false;
    }
  }
}

function failed(sidecar: Sidecar, what: string, error: unknown): void {
  sidecar.output.error(`Mnemo ${what} failed: ${describe(error)}`);
  vscode.window.setStatusBarMessage(`$(warning) Mnemo: ${what} failed, see "Mnemo: Show Log"`, 5000);
}
