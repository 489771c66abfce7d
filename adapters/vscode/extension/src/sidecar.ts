// The sidecar: `mnemo serve --stdio`, run through vscode-languageclient. It owns the
// client's life (start, restart on a crash within limits, stop), keeps routine failures
// in the output channel, and shows a message only when the sidecar cannot run at all.

import * as os from 'node:os';
import * as readline from 'node:readline';
import type { Readable } from 'node:stream';
import * as vscode from 'vscode';
import {
  CloseAction,
  type CloseHandlerResult,
  ErrorAction,
  type ErrorHandlerResult,
  type InitializeResult,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import type { SidecarState } from './format';
import { saveWindowSeconds, serverIdleMinutes } from './idle';
import {
  type Binary,
  BinaryNotFoundError,
  bundledBinary,
  resolveBinary,
  restoreExecutableBit,
  serverArgs,
  serverEnv,
} from './launch';
import {
  type InitializationOptions,
  type InitializeMnemo,
  type MemoryChange,
  Method,
  Notification,
  PROTOCOL_VERSION,
} from './protocol';
import { RestartPolicy } from './restart';
import { LastWords, parseServerLine } from './serverLog';

/** A language client that never pops up a message of its own: the log gets everything. */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, _showNotification?: boolean | 'force'): void {
    super.error(message, data, false);
  }
}

/** What is known about one client's life. */
interface Run {
  /** It reached Running once: later exits are crashes, worth a restart. */
  everRan: boolean;
  /** The user was told it is gone; once is enough. */
  told: boolean;
}

/** The stderr of the newest process of a client. */
class Stderr {
  words = new LastWords();
  private closed: Promise<void> = Promise.resolve();

  constructor(private readonly output: vscode.LogOutputChannel) {}

  /** Reads a new process's stderr into the output channel, line by line. */
  attach(input: Readable): void {
    const words = new LastWords();
    this.words = words;
    this.closed = new Promise((resolve) => {
      input.once('close', resolve);
      input.once('end', resolve);
    });
    readline
      .createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 })
      .on('line', (raw: string) => {
        const line = parseServerLine(raw);
        words.add(line);
        this.output[line.level](line.text);
      });
  }

  /** Resolves once the stream is read to its end, or after timeoutMs. */
  async drained(timeoutMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.closed,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }
}

/** A request was made while the sidecar is not running. */
export class NotRunningError extends Error {
  constructor() {
    super('Mnemo is not running');
    this.name = 'NotRunningError';
  }
}

export class Sidecar implements vscode.Disposable {
  private client: QuietLanguageClient | undefined;
  private clientListener: { dispose(): void } | undefined;
  private run: Run | undefined;
  private currentState: SidecarState = 'idle';
  private session: InitializeMnemo | undefined;
  private folder: string | undefined;
  private readonly restarts = new RestartPolicy();
  private readonly stateEmitter = new vscode.EventEmitter<SidecarState>();
  private readonly changeEmitter = new vscode.EventEmitter<MemoryChange>();
  private launched: { command: string; env: NodeJS.ProcessEnv } | undefined;
  private watched: Promise<boolean> = Promise.resolve(false);
  /** Start and stop run one at a time, in call order. */
  private queue: Promise<unknown> = Promise.resolve();

  /** Fires on every change of state. */
  readonly onDidChangeState = this.stateEmitter.event;

  /**
   * Fires on every change of the memory the server tells (`mnemo/changed`, asked for
   * with `mnemo/watch` each time the sidecar starts); a "lost" change says some were
   * dropped and what is shown should be read again.
   */
  readonly onDidChangeMemory = this.changeEmitter.event;

  constructor(
    private readonly extensionPath: string,
    readonly output: vscode.LogOutputChannel,
    /** The editor's session id (vscode.env.sessionId): Mnemo's contentSessionId. */
    readonly contentSessionId: string,
  ) {}

  get state(): SidecarState {
    return this.currentState;
  }

  /** The workspace folder the sidecar was started for. */
  get cwd(): string | undefined {
    return this.folder;
  }

  /** What the server said about the session at initialize. */
  get initialization(): InitializeMnemo | undefined {
    return this.session;
  }

  /** The whole InitializeResult of the running client. */
  get initializeResult(): InitializeResult | undefined {
    return this.client?.initializeResult;
  }

  /** The program the sidecar was started with and its environment: what `mnemo mcp` runs with. */
  get launch(): { command: string; env: NodeJS.ProcessEnv } | undefined {
    return this.launched;
  }

  /**
   * Settles when the newest start's `mnemo/watch` was answered: true when changes are
   * told from then on, false when the server cannot tell them (logged).
   */
  get watching(): Promise<boolean> {
    return this.watched;
  }

  /** The sidecar's process id while it runs. */
  get pid(): number | undefined {
    return this.client?.serverProcess?.pid;
  }

  /**
   * Starts the sidecar for a workspace folder, stopping a running one first. Resolves
   * true once the handshake is done; false when it cannot start (the user was told).
   */
  start(folder: string): Promise<boolean> {
    return this.enqueue(() => this.doStart(folder));
  }

  /** Stops the sidecar: shutdown and exit (SessionEnd on the server). */
  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  /** Sends a request to the running sidecar; rejects with NotRunningError otherwise. */
  async request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    const client = this.client;
    if (client === undefined || this.currentState !== 'running') {
      throw new NotRunningError();
    }
    return token === undefined
      ? client.sendRequest<R>(method, params)
      : client.sendRequest<R>(method, params, token);
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
    this.changeEmitter.dispose();
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const next = this.queue.then(job, job);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private setState(state: SidecarState): void {
    if (state !== this.currentState) {
      this.currentState = state;
      this.stateEmitter.fire(state);
    }
  }

  private async doStart(folder: string): Promise<boolean> {
    await this.doStop();
    this.folder = folder;
    this.restarts.reset();
    const config = vscode.workspace.getConfiguration('mnemo');

    const bundled = bundledBinary(this.extensionPath, process.platform);
    if (restoreExecutableBit(bundled, process.platform)) {
      this.output.info(`Made ${bundled} executable again`);
    }
    let binary: Binary;
    try {
      binary = resolveBinary({
        setting: config.get<string>('path'),
        extensionPath: this.extensionPath,
        envPath: process.env.PATH,
        pathExt: process.env.PATHEXT,
        platform: process.platform,
        home: os.homedir(),
      });
    } catch (error) {
      this.setState('failed');
      if (!(error instanceof BinaryNotFoundError)) {
        throw error;
      }
      this.output.error(`Mnemo cannot start: ${error.message}. Tried: ${error.tried.join(', ')}`);
      void this.tellMissing(error);
      return false;
    }

    const args = serverArgs(config.get('remote'));
    const env = serverEnv(process.env, config.get('home'), os.homedir(), process.platform);
    this.launched = { command: binary.path, env };
    const serverOptions: ServerOptions = {
      command: binary.path,
      args,
      transport: TransportKind.stdio,
      options: { cwd: folder, env },
    };
    const initializationOptions: InitializationOptions = {
      clientKind: 'vscode',
      protocolVersion: PROTOCOL_VERSION,
      contentSessionId: this.contentSessionId,
      cwd: folder,
      idleMinutes: serverIdleMinutes(config.get('idleMinutes')),
      saveWindowSeconds: saveWindowSeconds(config.get('saveWindowSeconds')),
    };
    const stderr = new Stderr(this.output);
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      stdioOptions: {
        // With the stdio transport stdout carries the protocol; this is never called.
        stdout: () => undefined,
        stderr: (input) => {
          stderr.attach(input);
        },
      },
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions,
      initializationFailedHandler: (error) => {
        this.output.error(`Mnemo initialize failed: ${describe(error)}`);
        return false;
      },
      errorHandler: {
        error: (_error, _message, count): ErrorHandlerResult => ({
          action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
          handled: true,
        }),
        closed: (): CloseHandlerResult => this.closed(),
      },
    };

    this.output.info(
      `Starting ${binary.path} ${args.join(' ')} --stdio (binary from ${binary.source}) in ${folder}`,
    );
    const client = new QuietLanguageClient('mnemo', 'Mnemo', serverOptions, clientOptions);
    this.client = client;
    // Kept by the client across its restarts; each new connection asks for the
    // changes again (State.Running below).
    client.onNotification(Notification.changed, (change: MemoryChange) => {
      if (this.client === client) {
        this.changeEmitter.fire(change);
      }
    });
    this.run = { everRan: false, told: false };
    const run = this.run;
    this.clientListener = client.onDidChangeState((event) => {
      if (this.client !== client) {
        return;
      }
      switch (event.newState) {
        case State.Running:
          run.everRan = true;
          this.session = mnemoOf(client.initializeResult);
          this.watched = this.watch(client);
          this.setState('running');
          break;
        case State.Starting:
          this.setState('starting');
          break;
        case State.StartFailed:
          this.setState('failed');
          // The first start reports its own failure; this is a restart after a crash.
          if (run.everRan) {
            this.tellOnce(run, 'The Mnemo sidecar stopped and could not be restarted.', ['Show Log', 'Restart']);
          }
          break;
        default:
          if (this.currentState !== 'failed') {
            this.setState('stopped');
          }
      }
    });
    this.setState('starting');
    const started = Date.now();
    try {
      await client.start();
    } catch (error) {
      this.output.error(`Mnemo could not start ${binary.path}: ${describe(error)}`);
      this.setState('failed');
      await this.discard(client);
      // What the process said on its way out explains more than a broken pipe.
      await stderr.drained(1500);
      void this.tellStartFailed(binary, stderr.words.reason() ?? describe(error));
      return false;
    }
    this.session = mnemoOf(client.initializeResult);
    const server = client.initializeResult?.serverInfo;
    this.output.info(
      `Mnemo ${server?.name ?? '?'} ${server?.version ?? ''} ready in ${Date.now() - started} ms: ` +
        (this.session !== undefined
          ? `session ${this.session.sessionId}, project ${this.session.project}, ` +
            `${this.session.observationIds.length} observations in context`
          : 'no session information'),
    );
    this.setState('running');
    return true;
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    if (client === undefined) {
      return;
    }
    this.client = undefined;
    this.run = undefined;
    this.session = undefined;
    this.clientListener?.dispose();
    this.clientListener = undefined;
    try {
      if (client.state !== State.Stopped) {
        await client.stop();
      }
    } catch (error) {
      this.output.warn(`Stopping Mnemo: ${describe(error)}`);
    } finally {
      if (this.currentState !== 'failed') {
        this.setState('stopped');
      }
    }
  }

  /** Asks the server to tell this connection the memory's changes (mnemo/watch). */
  private async watch(client: QuietLanguageClient): Promise<boolean> {
    try {
      await client.sendRequest(Method.watch, {});
      return true;
    } catch (error) {
      if (this.client === client) {
        this.output.warn(`Mnemo cannot tell changes as they happen (mnemo/watch: ${describe(error)}); the Mnemo view refreshes when opened`);
      }
      return false;
    }
  }

  /** Drops a client whose start failed, releasing its process if it has one. */
  private async discard(client: QuietLanguageClient): Promise<void> {
    if (this.client === client) {
      this.client = undefined;
      this.clientListener?.dispose();
      this.clientListener = undefined;
    }
    try {
      await client.dispose(1000);
    } catch {
      // A client that never ran has nothing to shut down.
    }
  }

  /** The connection closed without stop(): the sidecar died. */
  private closed(): CloseHandlerResult {
    const run = this.run;
    if (!run?.everRan) {
      // It died during its first start: doStart reports that, no restart loop.
      return { action: CloseAction.DoNotRestart, handled: true, message: 'The Mnemo sidecar exited while starting.' };
    }
    if (this.restarts.allowRestart()) {
      this.output.warn('The Mnemo sidecar exited; restarting it.');
      return { action: CloseAction.Restart, handled: true };
    }
    const message = 'The Mnemo sidecar exited 4 times in 3 minutes and will not be restarted.';
    this.setState('failed');
    this.tellOnce(run, message, ['Show Log', 'Restart']);
    return { action: CloseAction.DoNotRestart, handled: true, message };
  }

  private tellOnce(run: Run, message: string, actions: string[]): void {
    if (!run.told) {
      run.told = true;
      void this.tell(message, actions);
    }
  }

  private async tellMissing(error: BinaryNotFoundError): Promise<void> {
    const hint = error.fromSetting
      ? 'Fix the "mnemo.path" setting.'
      : 'Install mnemo, or set "mnemo.path" to where it is.';
    await this.tell(`Mnemo: ${error.message}. ${hint}`, ['Open Settings', 'Show Log']);
  }

  private async tellStartFailed(binary: Binary, reason: string): Promise<void> {
    await this.tell(`Mnemo: ${binary.path} could not start: ${firstLine(reason)}`, ['Show Log', 'Open Settings']);
  }

  private async tell(message: string, actions: string[]): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, ...actions);
    switch (choice) {
      case 'Open Settings':
        await vscode.commands.executeCommand('workbench.action.openSettings', 'mnemo.path');
        break;
      case 'Show Log':
        this.output.show(true);
        break;
      case 'Restart':
        await vscode.commands.executeCommand('mnemo.restart');
        break;
      default:
        break;
    }
  }
}

/** The non-standard `mnemo` member of an InitializeResult. */
function mnemoOf(result: InitializeResult | undefined): InitializeMnemo | undefined {
  return (result as (InitializeResult & { mnemo?: InitializeMnemo }) | undefined)?.mnemo;
}

/** A readable line for an error of any shape. */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  return typeof error === 'string' ? error : JSON.stringify(error);
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
