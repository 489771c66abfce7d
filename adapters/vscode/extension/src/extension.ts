// Mnemo for VS Code: persistent memory for the editor. The extension spawns the Go
// sidecar (`mnemo serve --stdio`) through vscode-languageclient and maps the editor's
// life onto Mnemo's five stages: activation → initialize → SessionStart; file open and
// save → didOpen/didSave → PostToolUse; an idle period → mnemo/stop → Stop; deactivation
// → shutdown/exit → SessionEnd. The mapping itself lives in the sidecar. The extension
// also puts memory in the editor: search, context, remember, forget, a status bar item,
// the Mnemo view (sessions and their records, live), the memory viewer; and gives it to
// the editor's agent where VS Code can: tools, the MCP server, `@mnemo` in the chat.

import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { MemoryDocuments, SCHEME } from './documents';
import { IdleTracker, idleMinutesToMs, saveWindowSeconds } from './idle';
import { type AgentFeatures, registerAgentFeatures } from './lm';
import { type MemoryTree, registerMemoryView } from './memoryView';
import { Method, type StopParams, type StopResult } from './protocol';
import { contentSessionId } from './session';
import { Sidecar, describe } from './sidecar';
import { StatusBar } from './statusBar';

/** What activate returns: the extension's parts, for tests and other extensions. */
export interface MnemoApi {
  readonly sidecar: Sidecar;
  readonly statusBar: StatusBar;
  readonly documents: MemoryDocuments;
  readonly idle: IdleTracker;
  readonly tree: MemoryTree;
  /** What this VS Code lets the extension give its agent. */
  readonly agent: AgentFeatures;
  /** Settles when the first start attempt is over: true when the sidecar runs. */
  readonly ready: Promise<boolean>;
}

let current: Sidecar | undefined;

export function activate(context: vscode.ExtensionContext): MnemoApi {
  const output = vscode.window.createOutputChannel('Mnemo', { log: true });
  const sidecar = new Sidecar(context.extensionPath, output, contentSessionId(vscode.env.sessionId));
  current = sidecar;
  const documents = new MemoryDocuments(sidecar);
  const statusBar = new StatusBar(sidecar);
  const idle = new IdleTracker({
    idleMs: idleMinutesToMs(vscode.workspace.getConfiguration('mnemo').get('idleMinutes')),
    onIdle: () => {
      void summarize(sidecar, idle);
    },
  });

  const restart = async (): Promise<boolean> => {
    const folder = workspaceFolder();
    if (folder === undefined) {
      await sidecar.stop();
      output.info('No folder is open: Mnemo waits for one.');
      return false;
    }
    return sidecar.start(folder);
  };

  const activity = (): void => {
    idle.activity();
  };
  const deps = { sidecar, documents, statusBar, restart };
  const view = registerMemoryView(deps);
  const version = (context.extension as vscode.Extension<unknown> | undefined)?.packageJSON as { version?: string } | undefined;
  const agent = registerAgentFeatures(sidecar, context.extensionPath, version?.version ?? '0.0.0');
  // Disposed in this order after deactivate(): the output channel goes last.
  context.subscriptions.push(
    sidecar,
    documents,
    statusBar,
    {
      dispose: () => {
        idle.dispose();
      },
    },
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, documents),
    ...registerCommands(deps),
    ...view.disposables,
    ...agent.disposables,
    vscode.window.onDidChangeWindowState((state) => {
      if (state.focused) {
        activity();
      }
    }),
    vscode.window.onDidChangeActiveTextEditor(activity),
    vscode.window.onDidChangeTextEditorSelection(activity),
    vscode.workspace.onDidChangeTextDocument((event) => {
      if (event.document.uri.scheme === 'file' && event.contentChanges.length > 0) {
        activity();
      }
    }),
    vscode.workspace.onDidSaveTextDocument((doc) => {
      activity();
      if (doc.uri.scheme === 'file') {
        statusBar.refreshAfterSave(saveWindowSeconds(vscode.workspace.getConfiguration('mnemo').get('saveWindowSeconds')));
      }
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('mnemo.idleMinutes')) {
        idle.setIdleMs(idleMinutesToMs(vscode.workspace.getConfiguration('mnemo').get('idleMinutes')));
      }
      if (
        event.affectsConfiguration('mnemo.path') ||
        event.affectsConfiguration('mnemo.remote') ||
        event.affectsConfiguration('mnemo.home')
      ) {
        output.info('Mnemo settings changed: restarting the sidecar.');
        void restart();
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      if (workspaceFolder() !== sidecar.cwd) {
        void restart();
      }
    }),
    output,
  );

  const ready = restart().catch((error: unknown) => {
    output.error(`Mnemo failed to start: ${describe(error)}`);
    return false;
  });
  return { sidecar, statusBar, documents, idle, tree: view.tree, agent: agent.features, ready };
}

/** Stops the sidecar: shutdown then exit, which ends the session (SessionEnd). */
export async function deactivate(): Promise<void> {
  const sidecar = current;
  current = undefined;
  await sidecar?.stop();
}

/** The folder Mnemo works for: the first workspace folder on disk. */
function workspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
}

/** The editor went idle: ask Mnemo to summarize the session (the Stop stage). */
async function summarize(sidecar: Sidecar, idle: IdleTracker): Promise<void> {
  if (sidecar.state !== 'running' || !idle.idle) {
    return;
  }
  const params: StopParams = { contentSessionId: sidecar.contentSessionId };
  try {
    const result = await sidecar.request<StopResult>(Method.stop, params);
    sidecar.output.info(
      result.queued
        ? 'Idle: Mnemo queued a summary of this session.'
        : `Idle: Mnemo skipped the summary (${result.skipped ?? 'no reason given'}).`,
    );
  } catch (error) {
    sidecar.output.warn(`Idle: mnemo/stop failed: ${describe(error)}`);
  }
}
