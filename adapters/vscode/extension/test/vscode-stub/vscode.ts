// A hand-written stand-in for the `vscode` module, enough to run the real extension and
// the real vscode-languageclient under plain Node (no VS Code can be downloaded here).
// register.ts makes `require('vscode')` resolve to this file.
//
// Every export is an own property of the module object: TypeScript's __importStar
// copies own keys only, so `class … extends code.CompletionItem` in the language client
// needs real classes here, not a Proxy.
//
// Besides the API, `stub` gives tests the handles of a fake editor: settings, the
// messages shown, the quick picks created, the commands run, and events to fire.

import * as fs from 'node:fs';
import * as path from 'node:path';

/* eslint-disable @typescript-eslint/no-extraneous-class, @typescript-eslint/no-explicit-any */

export const version = '1.100.3';

// ---------------------------------------------------------------- basic values

export class Disposable {
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => {
      for (const item of items) {
        item.dispose();
      }
    });
  }
  constructor(private readonly fn: () => unknown) {}
  dispose(): void {
    this.fn();
  }
}

export type Event<T> = (listener: (e: T) => unknown, thisArg?: unknown, disposables?: Disposable[]) => Disposable;

export class EventEmitter<T> {
  private listeners: ((e: T) => unknown)[] = [];
  readonly event: Event<T> = (listener, thisArg, disposables) => {
    const bound = (e: T): unknown => listener.call(thisArg, e);
    this.listeners.push(bound);
    const d = new Disposable(() => {
      this.listeners = this.listeners.filter((l) => l !== bound);
    });
    disposables?.push(d);
    return d;
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) {
      l(e);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class CancellationError extends Error {
  constructor() {
    super('Canceled');
    this.name = 'Canceled';
  }
}

export interface CancellationToken {
  isCancellationRequested: boolean;
  onCancellationRequested: Event<unknown>;
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<unknown>();
  readonly token: CancellationToken = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire(undefined);
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}

  static file(p: string): Uri {
    return new Uri('file', '', path.resolve(p).split(path.sep).join('/'), '', '');
  }

  static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme, c.authority ?? '', c.path ?? '', c.query ?? '', c.fragment ?? '');
  }

  static parse(value: string): Uri {
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/u.exec(value);
    if (m === null) {
      throw new Error(`cannot parse uri ${value}`);
    }
    const dec = (s: string | undefined): string => decodeURIComponent(s ?? '');
    return new Uri(m[1] ?? '', dec(m[2]), dec(m[3]), dec(m[4]), dec(m[5]));
  }

  static joinPath(base: Uri, ...segments: string[]): Uri {
    return base.with({ path: path.posix.join(base.path, ...segments) });
  }

  get fsPath(): string {
    return this.path.split('/').join(path.sep);
  }

  with(change: { scheme?: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(
      change.scheme ?? this.scheme,
      change.authority ?? this.authority,
      change.path ?? this.path,
      change.query ?? this.query,
      change.fragment ?? this.fragment,
    );
  }

  toString(): string {
    const enc = (s: string): string => s.split('/').map(encodeURIComponent).join('/');
    let s = `${this.scheme}:`;
    if (this.authority !== '' || this.scheme === 'file') {
      s += `//${encodeURIComponent(this.authority)}`;
    }
    s += enc(this.path);
    if (this.query !== '') {
      s += `?${encodeURIComponent(this.query)}`;
    }
    if (this.fragment !== '') {
      s += `#${encodeURIComponent(this.fragment)}`;
    }
    return s;
  }

  toJSON(): unknown {
    return { scheme: this.scheme, authority: this.authority, path: this.path, query: this.query, fragment: this.fragment };
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
  isBefore(other: Position): boolean {
    return this.line < other.line || (this.line === other.line && this.character < other.character);
  }
  isEqual(other: Position): boolean {
    return this.line === other.line && this.character === other.character;
  }
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    const start = typeof a === 'number' ? new Position(a, b as number) : a;
    const end = typeof a === 'number' ? new Position(c ?? 0, d ?? 0) : (b as Position);
    [this.start, this.end] = end.isBefore(start) ? [end, start] : [start, end];
  }
  get isEmpty(): boolean {
    return this.start.isEqual(this.end);
  }
}

export class Selection extends Range {
  constructor(
    readonly anchor: Position,
    readonly active: Position,
  ) {
    super(anchor, active);
  }
}

export enum LogLevel {
  Off = 0,
  Trace = 1,
  Debug = 2,
  Info = 3,
  Warning = 4,
  Error = 5,
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}
export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
}
export enum EndOfLine {
  LF = 1,
  CRLF = 2,
}
export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}
export enum FileType {
  Unknown = 0,
  File = 1,
  Directory = 2,
  SymbolicLink = 64,
}
export enum TextDocumentSaveReason {
  Manual = 1,
  AfterDelay = 2,
  FocusOut = 3,
}
export enum UIKind {
  Desktop = 1,
  Web = 2,
}

// Placeholders for the classes the language client extends or tests with instanceof.
export class CallHierarchyItem {}
export class CodeAction {}
export class CodeActionKind {
  static readonly Empty = new CodeActionKind();
}
export class CodeLens {}
export class CompletionItem {}
export class CompletionList {}
export class Diagnostic {}
export class DocumentLink {}
export class Hover {}
export class InlayHint {}
export class Location {}
export class MarkdownString {}
export class SnippetString {}
export class SymbolInformation {}
export class TextEdit {}
export class TypeHierarchyItem {}
export class WorkspaceEdit {}
export class RelativePattern {}
export class SemanticTokens {}
export class SemanticTokensEdits {}
export class SemanticTokensLegend {}
export class NotebookCellKind {}
export class TabInputText {}
export class TabInputTextDiff {}
export class TabInputNotebook {}
export class TabInputCustom {}

// ---------------------------------------------------------------- views, chat and tools

export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}

export class ThemeIcon {
  constructor(readonly id: string) {}
}

export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: unknown;
  iconPath?: unknown;
  contextValue?: string;
  command?: { command: string; title: string; arguments?: unknown[] };
  constructor(
    readonly label: string,
    readonly collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
  ) {}
}

export interface TreeDataProvider<T> {
  onDidChangeTreeData?: Event<T | undefined>;
  getTreeItem(node: T): TreeItem;
  getChildren(node?: T): Promise<T[]> | T[];
}

export class LanguageModelTextPart {
  constructor(readonly value: string) {}
}

export class LanguageModelToolResult {
  constructor(readonly content: unknown[]) {}
}

export class McpStdioServerDefinition {
  cwd?: Uri;
  constructor(
    readonly label: string,
    readonly command: string,
    readonly args: string[] = [],
    readonly env: Record<string, string | number | null> = {},
    readonly version?: string,
  ) {}
}

export interface StubTool {
  invoke(options: { input: unknown }, token: CancellationToken): Promise<LanguageModelToolResult>;
  prepareInvocation?(options: { input: unknown }, token: CancellationToken): { invocationMessage: string };
}

export interface StubMcpProvider {
  onDidChangeMcpServerDefinitions: Event<void>;
  provideMcpServerDefinitions(token: CancellationToken): McpStdioServerDefinition[];
}

export interface StubChatStream {
  markdown(text: string): void;
  progress(text: string): void;
}

export type StubChatHandler = (
  request: { prompt: string; command?: string },
  context: { history: unknown[] },
  stream: StubChatStream,
  token: CancellationToken,
) => Promise<unknown>;

// ---------------------------------------------------------------- documents and editors

const languageOf: Record<string, string> = {
  '.ts': 'typescript',
  '.js': 'javascript',
  '.go': 'go',
  '.md': 'markdown',
  '.json': 'json',
};

export class TextDocument {
  version = 1;
  isDirty = false;
  isClosed = false;
  readonly eol = EndOfLine.LF;
  constructor(
    readonly uri: Uri,
    public languageId: string,
    private text: string,
  ) {}
  get fileName(): string {
    return this.uri.fsPath;
  }
  get isUntitled(): boolean {
    return this.uri.scheme === 'untitled';
  }
  get lineCount(): number {
    return this.text.split('\n').length;
  }
  getText(range?: Range): string {
    if (range === undefined) {
      return this.text;
    }
    return this.text.slice(this.offsetAt(range.start), this.offsetAt(range.end));
  }
  offsetAt(pos: Position): number {
    const lines = this.text.split('\n');
    let offset = 0;
    for (let i = 0; i < pos.line && i < lines.length; i++) {
      offset += (lines[i] ?? '').length + 1;
    }
    return offset + pos.character;
  }
  /** Test helper: replaces the text as an edit would. */
  setText(text: string): void {
    this.text = text;
    this.version++;
  }
  async save(): Promise<boolean> {
    if (this.uri.scheme === 'file') {
      await fs.promises.writeFile(this.uri.fsPath, this.text);
    }
    this.isDirty = false;
    stub.events.didSave.fire(this);
    return true;
  }
}

export interface TextEditor {
  document: TextDocument;
  selection: Selection;
  selections: Selection[];
}

// ---------------------------------------------------------------- the fake editor's state

export interface ShownMessage {
  severity: 'error' | 'warning' | 'info';
  message: string;
  items: string[];
  modal: boolean;
}

export interface LoggedLine {
  level: string;
  text: string;
}

export class StubOutputChannel {
  readonly lines: LoggedLine[] = [];
  logLevel = LogLevel.Info;
  shown = 0;
  private readonly levelEmitter = new EventEmitter<LogLevel>();
  readonly onDidChangeLogLevel = this.levelEmitter.event;
  constructor(readonly name: string) {}
  private add(level: string, text: string): void {
    this.lines.push({ level, text });
    if (process.env.MNEMO_TEST_VERBOSE === '1') {
      process.stderr.write(`[${this.name} ${level}] ${text}\n`);
    }
  }
  trace(text: string): void {
    this.add('trace', text);
  }
  debug(text: string): void {
    this.add('debug', text);
  }
  info(text: string): void {
    this.add('info', text);
  }
  warn(text: string): void {
    this.add('warn', text);
  }
  error(text: string | Error): void {
    this.add('error', String(text));
  }
  append(text: string): void {
    this.add('raw', text);
  }
  appendLine(text: string): void {
    this.add('raw', text);
  }
  replace(text: string): void {
    this.lines.length = 0;
    this.add('raw', text);
  }
  clear(): void {
    this.lines.length = 0;
  }
  show(): void {
    this.shown++;
  }
  hide(): void {
    // Nothing to hide.
  }
  dispose(): void {
    this.levelEmitter.dispose();
  }
  /** All the text logged, one entry a line. */
  text(): string {
    return this.lines.map((l) => `${l.level}: ${l.text}`).join('\n');
  }
}

export class StubStatusBarItem {
  text = '';
  tooltip: unknown = '';
  name = '';
  command: unknown;
  visible = false;
  disposed = false;
  constructor(
    readonly id: string,
    readonly alignment: StatusBarAlignment,
    readonly priority: number,
  ) {}
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {
    this.disposed = true;
  }
}

export class StubQuickPick<T extends { label: string }> {
  items: readonly T[] = [];
  selectedItems: readonly T[] = [];
  activeItems: readonly T[] = [];
  private currentValue = '';
  title: string | undefined;
  placeholder: string | undefined;
  busy = false;
  canSelectMany = false;
  matchOnDescription = false;
  matchOnDetail = false;
  visible = false;
  disposed = false;
  private readonly valueEmitter = new EventEmitter<string>();
  private readonly acceptEmitter = new EventEmitter<undefined>();
  private readonly hideEmitter = new EventEmitter<undefined>();
  private readonly selectionEmitter = new EventEmitter<readonly T[]>();
  private readonly activeEmitter = new EventEmitter<readonly T[]>();
  readonly onDidChangeValue = this.valueEmitter.event;
  readonly onDidAccept = this.acceptEmitter.event;
  readonly onDidHide = this.hideEmitter.event;
  readonly onDidChangeSelection = this.selectionEmitter.event;
  readonly onDidChangeActive = this.activeEmitter.event;

  get value(): string {
    return this.currentValue;
  }
  set value(v: string) {
    this.currentValue = v;
  }
  show(): void {
    this.visible = true;
  }
  hide(): void {
    if (this.visible) {
      this.visible = false;
      this.hideEmitter.fire(undefined);
    }
  }
  dispose(): void {
    this.hide();
    this.disposed = true;
  }
  /** Test helper: the user types. */
  type(value: string): void {
    this.currentValue = value;
    this.valueEmitter.fire(value);
  }
  /** Test helper: the user picks items and presses Enter. */
  pick(items: readonly T[]): void {
    this.selectedItems = items;
    this.activeItems = items.slice(0, 1);
    this.selectionEmitter.fire(items);
    this.acceptEmitter.fire(undefined);
  }
}

type Responder = (message: ShownMessage) => string | undefined;

interface ContentProvider {
  provideTextDocumentContent(uri: Uri, token: CancellationToken): string | Promise<string> | undefined;
  onDidChange?: Event<Uri>;
}

interface ConfigurationChange {
  affectsConfiguration(section: string): boolean;
}

/** The fake editor: what tests set up, fire and inspect. */
export const stub = {
  settings: new Map<string, unknown>(),
  messages: [] as ShownMessage[],
  respond: (() => undefined) as Responder,
  statusMessages: [] as string[],
  quickPicks: [] as StubQuickPick<any>[],
  statusBarItems: [] as StubStatusBarItem[],
  outputChannels: [] as StubOutputChannel[],
  executed: [] as { command: string; args: unknown[] }[],
  shownDocuments: [] as TextDocument[],
  commands: new Map<string, (...args: any[]) => unknown>(),
  treeViews: new Map<string, TreeDataProvider<any>>(),
  opened: [] as Uri[],
  tools: new Map<string, StubTool>(),
  mcpProviders: new Map<string, StubMcpProvider>(),
  participants: new Map<string, { handler: StubChatHandler; iconPath?: unknown }>(),
  providers: new Map<string, ContentProvider>(),
  textDocuments: [] as TextDocument[],
  workspaceFolders: undefined as { uri: Uri; name: string; index: number }[] | undefined,
  activeTextEditor: undefined as TextEditor | undefined,
  events: {
    didOpen: new EventEmitter<TextDocument>(),
    didClose: new EventEmitter<TextDocument>(),
    didSave: new EventEmitter<TextDocument>(),
    willSave: new EventEmitter<unknown>(),
    didChange: new EventEmitter<unknown>(),
    didChangeConfiguration: new EventEmitter<ConfigurationChange>(),
    didChangeWorkspaceFolders: new EventEmitter<unknown>(),
    didChangeWindowState: new EventEmitter<{ focused: boolean }>(),
    didChangeActiveTextEditor: new EventEmitter<TextEditor | undefined>(),
    didChangeSelection: new EventEmitter<unknown>(),
    didChangeVisibleEditors: new EventEmitter<unknown>(),
    didChangeTabs: new EventEmitter<unknown>(),
    any: new EventEmitter<unknown>(),
  },

  /** Forgets everything from a previous test. */
  reset(): void {
    this.settings.clear();
    this.messages.length = 0;
    this.respond = () => undefined;
    this.statusMessages.length = 0;
    this.quickPicks.length = 0;
    this.statusBarItems.length = 0;
    this.outputChannels.length = 0;
    this.executed.length = 0;
    this.shownDocuments.length = 0;
    this.commands.clear();
    this.treeViews.clear();
    this.opened.length = 0;
    this.tools.clear();
    this.mcpProviders.clear();
    this.participants.clear();
    this.providers.clear();
    this.textDocuments.length = 0;
    this.workspaceFolders = undefined;
    this.activeTextEditor = undefined;
  },

  /** Changes settings ("mnemo.path" style keys) and tells listeners. */
  configure(values: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(values)) {
      this.settings.set(key, value);
    }
    const keys = Object.keys(values);
    this.events.didChangeConfiguration.fire({
      affectsConfiguration: (section) => keys.some((k) => k === section || k.startsWith(`${section}.`)),
    });
  },

  /** An editor on a document with a selection, made the active one. */
  edit(document: TextDocument, selection: Selection): TextEditor {
    const editor: TextEditor = { document, selection, selections: [selection] };
    this.activeTextEditor = editor;
    this.events.didChangeActiveTextEditor.fire(editor);
    return editor;
  },
};

// ---------------------------------------------------------------- namespaces

export const env = {
  appName: 'Visual Studio Code (stub)',
  appRoot: '',
  language: 'en',
  machineId: 'stub-machine',
  sessionId: `stub-session-${process.pid}-${Date.now()}`,
  uiKind: UIKind.Desktop,
  remoteName: undefined,
  openExternal: (uri: Uri): Promise<boolean> => {
    stub.opened.push(uri);
    return Promise.resolve(true);
  },
};

function getConfiguration(section?: string): {
  get<T>(key: string, defaultValue?: T): T | undefined;
  has(key: string): boolean;
  inspect(key: string): undefined;
  update(): Promise<void>;
} {
  const full = (key: string): string => (section !== undefined && section !== '' ? `${section}.${key}` : key);
  return {
    get<T>(key: string, defaultValue?: T): T | undefined {
      const k = full(key);
      return stub.settings.has(k) ? (stub.settings.get(k) as T) : defaultValue;
    },
    has: (key) => stub.settings.has(full(key)),
    inspect: () => undefined,
    update: () => Promise.resolve(),
  };
}

async function openTextDocument(arg: Uri | string): Promise<TextDocument> {
  const uri = typeof arg === 'string' ? Uri.file(arg) : arg;
  const existing = stub.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (existing !== undefined) {
    return existing;
  }
  let text: string;
  if (uri.scheme === 'file') {
    text = await fs.promises.readFile(uri.fsPath, 'utf8');
  } else {
    const provider = stub.providers.get(uri.scheme);
    if (provider === undefined) {
      throw new Error(`no content provider for ${uri.scheme}`);
    }
    text = (await provider.provideTextDocumentContent(uri, new CancellationTokenSource().token)) ?? '';
  }
  const doc = new TextDocument(uri, languageOf[path.extname(uri.path)] ?? 'plaintext', text);
  stub.textDocuments.push(doc);
  stub.events.didOpen.fire(doc);
  return doc;
}

export const workspace = {
  get workspaceFolders() {
    return stub.workspaceFolders;
  },
  get textDocuments() {
    return stub.textDocuments;
  },
  notebookDocuments: [] as unknown[],
  name: 'stub',
  getConfiguration,
  getWorkspaceFolder(uri: Uri) {
    return stub.workspaceFolders?.find((f) => uri.path === f.uri.path || uri.path.startsWith(`${f.uri.path}/`));
  },
  openTextDocument,
  registerTextDocumentContentProvider(scheme: string, provider: ContentProvider): Disposable {
    stub.providers.set(scheme, provider);
    return new Disposable(() => stub.providers.delete(scheme));
  },
  createFileSystemWatcher() {
    const e = new EventEmitter<Uri>();
    return { onDidCreate: e.event, onDidChange: e.event, onDidDelete: e.event, dispose: () => undefined };
  },
  applyEdit: (): Promise<boolean> => Promise.resolve(true),
  onDidOpenTextDocument: stub.events.didOpen.event,
  onDidCloseTextDocument: stub.events.didClose.event,
  onDidSaveTextDocument: stub.events.didSave.event,
  onWillSaveTextDocument: stub.events.willSave.event,
  onDidChangeTextDocument: stub.events.didChange.event,
  onDidChangeConfiguration: stub.events.didChangeConfiguration.event,
  onDidChangeWorkspaceFolders: stub.events.didChangeWorkspaceFolders.event,
  onDidOpenNotebookDocument: stub.events.any.event,
  onDidCloseNotebookDocument: stub.events.any.event,
  onDidSaveNotebookDocument: stub.events.any.event,
  onDidChangeNotebookDocument: stub.events.any.event,
  onDidCreateFiles: stub.events.any.event,
  onDidRenameFiles: stub.events.any.event,
  onDidDeleteFiles: stub.events.any.event,
  onWillCreateFiles: stub.events.any.event,
  onWillRenameFiles: stub.events.any.event,
  onWillDeleteFiles: stub.events.any.event,
};

function show(severity: ShownMessage['severity']) {
  return (message: string, ...rest: unknown[]): Promise<string | undefined> => {
    let modal = false;
    const items: string[] = [];
    for (const r of rest) {
      if (typeof r === 'string') {
        items.push(r);
      } else if (r !== null && typeof r === 'object' && 'title' in r) {
        items.push(String(r.title));
      } else if (r !== null && typeof r === 'object' && 'modal' in r) {
        modal = r.modal === true;
      }
    }
    const shown: ShownMessage = { severity, message, items, modal };
    stub.messages.push(shown);
    return Promise.resolve(stub.respond(shown));
  };
}

export const window = {
  get activeTextEditor() {
    return stub.activeTextEditor;
  },
  get visibleTextEditors() {
    return stub.activeTextEditor !== undefined ? [stub.activeTextEditor] : [];
  },
  tabGroups: { all: [] as unknown[], onDidChangeTabs: stub.events.didChangeTabs.event },
  state: { focused: true },
  showErrorMessage: show('error'),
  showWarningMessage: show('warning'),
  showInformationMessage: show('info'),
  setStatusBarMessage(text: string): Disposable {
    stub.statusMessages.push(text);
    return new Disposable(() => undefined);
  },
  createOutputChannel(name: string): StubOutputChannel {
    const channel = new StubOutputChannel(name);
    stub.outputChannels.push(channel);
    return channel;
  },
  createStatusBarItem(id: string, alignment: StatusBarAlignment, priority: number): StubStatusBarItem {
    const item = new StubStatusBarItem(id, alignment, priority);
    stub.statusBarItems.push(item);
    return item;
  },
  createTreeView<T>(id: string, options: { treeDataProvider: TreeDataProvider<T> }) {
    stub.treeViews.set(id, options.treeDataProvider);
    return { visible: true, dispose: () => stub.treeViews.delete(id) };
  },
  createQuickPick<T extends { label: string }>(): StubQuickPick<T> {
    const qp = new StubQuickPick<T>();
    stub.quickPicks.push(qp);
    return qp;
  },
  showTextDocument(doc: TextDocument): Promise<TextEditor> {
    stub.shownDocuments.push(doc);
    const pos = new Position(0, 0);
    return Promise.resolve(stub.edit(doc, new Selection(pos, pos)));
  },
  withProgress<R>(_options: unknown, task: (progress: { report(): void }, token: CancellationToken) => Promise<R>): Promise<R> {
    return task({ report: () => undefined }, new CancellationTokenSource().token);
  },
  onDidChangeWindowState: stub.events.didChangeWindowState.event,
  onDidChangeActiveTextEditor: stub.events.didChangeActiveTextEditor.event,
  onDidChangeTextEditorSelection: stub.events.didChangeSelection.event,
  onDidChangeVisibleTextEditors: stub.events.didChangeVisibleEditors.event,
};

interface DocumentFilter {
  scheme?: string;
  language?: string;
  pattern?: string;
}

export const languages = {
  /** Scheme and language filters only; enough for `[{scheme: 'file'}]`. */
  match(selector: DocumentFilter | string | readonly (DocumentFilter | string)[], doc: TextDocument): number {
    const filters = Array.isArray(selector) ? selector : [selector];
    for (const f of filters as (DocumentFilter | string)[]) {
      if (typeof f === 'string') {
        if (f === '*' || f === doc.languageId) {
          return 10;
        }
        continue;
      }
      if (f.scheme !== undefined && f.scheme !== '*' && f.scheme !== doc.uri.scheme) {
        continue;
      }
      if (f.language !== undefined && f.language !== '*' && f.language !== doc.languageId) {
        continue;
      }
      return 5;
    }
    return 0;
  },
  setTextDocumentLanguage(doc: TextDocument, languageId: string): Promise<TextDocument> {
    doc.languageId = languageId;
    return Promise.resolve(doc);
  },
  createDiagnosticCollection(name?: string) {
    return {
      name,
      set: () => undefined,
      delete: () => undefined,
      clear: () => undefined,
      forEach: () => undefined,
      get: () => undefined,
      has: () => false,
      dispose: () => undefined,
    };
  },
};

export const commands = {
  registerCommand(id: string, fn: (...args: any[]) => unknown): Disposable {
    if (stub.commands.has(id)) {
      throw new Error(`command '${id}' already exists`);
    }
    stub.commands.set(id, fn);
    return new Disposable(() => stub.commands.delete(id));
  },
  async executeCommand<T>(id: string, ...args: unknown[]): Promise<T | undefined> {
    stub.executed.push({ command: id, args });
    const fn = stub.commands.get(id);
    return fn !== undefined ? ((await fn(...args)) as T) : undefined;
  },
  getCommands: (): Promise<string[]> => Promise.resolve([...stub.commands.keys()]),
};

export const extensions = {
  all: [] as unknown[],
  getExtension: (): undefined => undefined,
  onDidChange: stub.events.any.event,
};

// The APIs newer than the extension's engine, as VS Code 1.101 has them.
// Arrow functions: a test may swap one out (an API that refuses to run).
export const lm = {
  registerTool: (name: string, tool: StubTool): Disposable => {
    stub.tools.set(name, tool);
    return new Disposable(() => stub.tools.delete(name));
  },
  registerMcpServerDefinitionProvider: (id: string, provider: StubMcpProvider): Disposable => {
    stub.mcpProviders.set(id, provider);
    return new Disposable(() => stub.mcpProviders.delete(id));
  },
};

export const chat = {
  createChatParticipant(id: string, handler: StubChatHandler) {
    const entry: { handler: StubChatHandler; iconPath?: unknown } = { handler };
    stub.participants.set(id, entry);
    return {
      id,
      set iconPath(v: unknown) {
        entry.iconPath = v;
      },
      get iconPath(): unknown {
        return entry.iconPath;
      },
      dispose: () => stub.participants.delete(id),
    };
  },
};
