// The Mnemo view of the activity bar: the newest sessions of the memory (every host's),
// each expanding into its prompts, observations and summaries; a click opens a record's
// full text as a read-only markdown document. It follows the memory live: the sidecar's
// `mnemo/changed` notifications refresh it once a burst of them has settled.

import * as vscode from 'vscode';
import { openObservation, showMarkdown, type CommandDeps } from './commands';
import { Debouncer } from './debounce';
import { SCHEME } from './documents';
import { type RecordRow, type SessionRow, promptMarkdown, promptPath, recordRows, sessionRows, summaryMarkdown, summaryPath } from './records';
import { Method, type Session, type SessionResult, type SessionsResult } from './protocol';
import { describe } from './sidecar';

/** The view's id (package.json `contributes.views`). */
export const VIEW_ID = 'mnemo.memory';
/** The quiet time after the last change before the view reads the memory again. */
export const REFRESH_MS = 300;

export type MemoryNode =
  | { type: 'session'; row: SessionRow }
  | { type: 'record'; row: RecordRow; session: Session }
  | { type: 'moreSessions'; count: number }
  | { type: 'message'; text: string };

export class MemoryTree implements vscode.TreeDataProvider<MemoryNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<MemoryNode | undefined>();
  private readonly debounce: Debouncer;
  private readonly subscriptions: vscode.Disposable[];
  /** How many times the tree was told to read the memory again (tests watch it). */
  refreshes = 0;

  readonly onDidChangeTreeData = this.emitter.event;

  constructor(private readonly deps: CommandDeps) {
    this.debounce = new Debouncer(REFRESH_MS, () => {
      this.refresh();
    });
    this.subscriptions = [
      deps.sidecar.onDidChangeMemory(() => {
        this.debounce.trigger();
      }),
      deps.sidecar.onDidChangeState((state) => {
        if (state !== 'starting') {
          this.refresh();
        }
      }),
    ];
  }

  /** Reads the memory again now. */
  refresh(): void {
    this.refreshes++;
    this.emitter.fire(undefined);
  }

  getTreeItem(node: MemoryNode): vscode.TreeItem {
    switch (node.type) {
      case 'session': {
        const item = new vscode.TreeItem(node.row.label, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `session:${node.row.session.contentSessionId}`;
        item.description = node.row.description;
        item.tooltip = node.row.tooltip;
        item.iconPath = new vscode.ThemeIcon(node.row.current ? 'window' : 'history');
        item.contextValue = 'mnemo.session';
        return item;
      }
      case 'record': {
        const { row } = node;
        const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
        item.id = `record:${node.session.contentSessionId}:${recordKey(row)}`;
        item.description = row.description;
        item.tooltip = row.tooltip;
        item.iconPath = new vscode.ThemeIcon(recordIcon(row));
        item.contextValue = `mnemo.${row.kind}`;
        item.command =
          row.kind === 'more'
            ? { command: 'mnemo.openViewer', title: 'Open Memory Viewer' }
            : { command: 'mnemo.openRecord', title: 'Open', arguments: [node] };
        return item;
      }
      case 'moreSessions': {
        const item = new vscode.TreeItem(`${node.count} older sessions…`, vscode.TreeItemCollapsibleState.None);
        item.id = 'more-sessions';
        item.description = 'open the memory viewer';
        item.iconPath = new vscode.ThemeIcon('link-external');
        item.command = { command: 'mnemo.openViewer', title: 'Open Memory Viewer' };
        return item;
      }
      case 'message': {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.id = 'message';
        item.iconPath = new vscode.ThemeIcon('info');
        return item;
      }
    }
  }

  async getChildren(node?: MemoryNode): Promise<MemoryNode[]> {
    const { sidecar } = this.deps;
    if (sidecar.state !== 'running') {
      return node === undefined ? [{ type: 'message', text: notRunning(sidecar.state) }] : [];
    }
    try {
      if (node === undefined) {
        const result = await sidecar.request<SessionsResult>(Method.sessions, {});
        const { rows, more } = sessionRows(result.sessions, Date.now(), sidecar.contentSessionId);
        if (rows.length === 0) {
          return [{ type: 'message', text: 'Nothing remembered yet.' }];
        }
        const nodes: MemoryNode[] = rows.map((row) => ({ type: 'session', row }));
        if (more > 0) {
          nodes.push({ type: 'moreSessions', count: more });
        }
        return nodes;
      }
      if (node.type === 'session') {
        const session = node.row.session;
        const result = await sidecar.request<SessionResult>(Method.session, { contentSessionId: session.contentSessionId });
        return recordRows(result, Date.now()).map((row) => ({ type: 'record', row, session: result.session }));
      }
      return [];
    } catch (error) {
      sidecar.output.warn(`The Mnemo view could not read the memory: ${describe(error)}`);
      return node === undefined ? [{ type: 'message', text: 'Could not read the memory: see "Mnemo: Show Log".' }] : [];
    }
  }

  dispose(): void {
    this.debounce.dispose();
    for (const s of this.subscriptions) {
      s.dispose();
    }
    this.emitter.dispose();
  }
}

/** Registers the view and the command that opens a record of it. */
export function registerMemoryView(deps: CommandDeps): { tree: MemoryTree; disposables: { dispose(): unknown }[] } {
  const tree = new MemoryTree(deps);
  const view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: tree, showCollapseAll: true });
  return {
    tree,
    disposables: [
      tree,
      view,
      vscode.commands.registerCommand('mnemo.refreshView', () => {
        tree.refresh();
      }),
      vscode.commands.registerCommand('mnemo.openRecord', async (node: MemoryNode) => {
        try {
          await openRecord(deps, node);
        } catch (error) {
          deps.sidecar.output.error(`Mnemo could not open the record: ${describe(error)}`);
          vscode.window.setStatusBarMessage('$(warning) Mnemo: could not open the record, see "Mnemo: Show Log"', 5000);
        }
      }),
    ],
  };
}

/** Opens a record of the view as a read-only markdown document. */
export async function openRecord(deps: CommandDeps, node: MemoryNode): Promise<vscode.TextEditor | undefined> {
  if (node.type !== 'record') {
    return undefined;
  }
  const { row, session } = node;
  switch (row.kind) {
    case 'observation':
      return openObservation(deps, row.id);
    case 'prompt': {
      const uri = vscode.Uri.from({ scheme: SCHEME, path: promptPath(session.contentSessionId, row.prompt.number) });
      deps.documents.put(uri, promptMarkdown(session, row.prompt));
      return showMarkdown(uri);
    }
    case 'summary': {
      const uri = vscode.Uri.from({ scheme: SCHEME, path: summaryPath(row.summary) });
      deps.documents.put(uri, summaryMarkdown(row.summary));
      return showMarkdown(uri);
    }
    case 'more':
      await vscode.commands.executeCommand('mnemo.openViewer');
      return undefined;
  }
}

function recordKey(row: RecordRow): string {
  switch (row.kind) {
    case 'prompt':
      return `prompt:${row.prompt.number}`;
    case 'observation':
      return `observation:${row.id}`;
    case 'summary':
      return `summary:${row.summary.id}`;
    case 'more':
      return 'more';
  }
}

function recordIcon(row: RecordRow): string {
  switch (row.kind) {
    case 'prompt':
      return 'comment';
    case 'observation':
      return 'note';
    case 'summary':
      return 'checklist';
    case 'more':
      return 'ellipsis';
  }
}

function notRunning(state: string): string {
  switch (state) {
    case 'idle':
      return 'Mnemo starts when a folder is open.';
    case 'starting':
      return 'Mnemo is starting…';
    default:
      return 'Mnemo is not running.';
  }
}
