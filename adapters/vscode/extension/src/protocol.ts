// The part of Mnemo's wire protocol that the extension speaks: JSON-RPC 2.0 with LSP
// framing, camelCase fields. The Go sidecar (`mnemo serve --stdio`) implements it; the
// method table lives in memory/methods.go (docs/architecture.md §3). Types only: no runtime code
// except the method names, so that pure modules and tests can import this file freely.

/** The protocol version the extension speaks; the server refuses another one. */
export const PROTOCOL_VERSION = 1;

/** Custom request names, namespaced `mnemo/`. */
export const Method = {
  stop: 'mnemo/stop',
  search: 'mnemo/search',
  getObservations: 'mnemo/getObservations',
  context: 'mnemo/context',
  save: 'mnemo/save',
  forget: 'mnemo/forget',
  status: 'mnemo/status',
  timeline: 'mnemo/timeline',
  userPromptSubmit: 'mnemo/userPromptSubmit',
  sessions: 'mnemo/sessions',
  session: 'mnemo/session',
  viewer: 'mnemo/viewer',
  /** After it, the server sends `changed` notifications until the connection closes. */
  watch: 'mnemo/watch',
} as const;

/** Notifications the server sends. */
export const Notification = {
  /** One change of the memory (a MemoryChange), after `mnemo/watch`. */
  changed: 'mnemo/changed',
} as const;

/** `initializationOptions` of the LSP `initialize` request. */
export interface InitializationOptions {
  clientKind: 'vscode';
  protocolVersion: number;
  contentSessionId: string;
  cwd?: string;
  project?: string;
  /** The server's own idle period for Stop: 0 is its default, negative turns it off. */
  idleMinutes: number;
  /**
   * How long the saves of one file are gathered into one observation of their net
   * change: 0 is the server's setting, negative remembers every save on its own.
   */
  saveWindowSeconds?: number;
}

/** A range of a file: lines and columns count from 1; a column of 0 is the whole line. */
export interface Anchor {
  file: string;
  startLine: number;
  startColumn?: number;
  endLine: number;
  endColumn?: number;
}

/** The non-standard `mnemo` member of the InitializeResult. */
export interface InitializeMnemo {
  sessionId: number;
  contentSessionId?: string;
  project: string;
  context: string;
  observationIds: number[];
}

export interface StopParams {
  contentSessionId: string;
  lastUserMessage?: string;
  lastAssistantMessage?: string;
  transcriptPath?: string;
}

export interface StopResult {
  queued: boolean;
  skipped?: string;
}

export interface SearchParams {
  query?: string;
  project?: string;
  types?: string[];
  files?: string[];
  since?: string;
  until?: string;
  limit?: number;
}

export interface Hit {
  id: number;
  title: string;
  type: string;
  /** RFC 3339. */
  time: string;
  project: string;
  files?: string[] | null;
  score: number;
  snippet?: string;
}

export interface SearchResult {
  hits: Hit[] | null;
  total: number;
}

export interface Observation {
  id: number;
  sessionId: number;
  contentSessionId: string;
  memorySessionId: string;
  promptNumber: number;
  project: string;
  type: string;
  title: string;
  subtitle?: string;
  facts?: string[] | null;
  narrative?: string;
  concepts?: string[] | null;
  filesRead?: string[] | null;
  filesModified?: string[] | null;
  tool?: string;
  request?: string;
  /** "agent", "saved" or "editor". */
  source?: string;
  /** "person" when a person saved it ("saved"). */
  savedBy?: string;
  /** Where in a file a remembered selection came from. */
  anchor?: Anchor;
  /** RFC 3339. */
  time: string;
}

export interface GetObservationsParams {
  ids: number[];
}

export interface GetObservationsResult {
  observations: Observation[] | null;
}

export interface ContextParams {
  project?: string;
  cwd?: string;
}

export interface ContextResult {
  sessionId?: number;
  project: string;
  context: string;
  observationIds: number[] | null;
  bytes: number;
}

export interface SaveParams {
  text: string;
  title?: string;
  project?: string;
  cwd?: string;
  files?: string[];
  type?: string;
  anchor?: Anchor;
  /** "person" for what a person saves; none for the agent's. */
  by?: 'person';
}

export interface SaveResult {
  id: number;
  /** The text was longer than one memory keeps (64 KB) and was cut. */
  truncated?: boolean;
}

export interface ForgetParams {
  ids: number[];
}

export interface ForgetResult {
  deleted: number[] | null;
  missing: number[] | null;
}

export interface StatusCounts {
  sessions: number;
  observations: number;
  summaries: number;
  prompts: number;
  queued: number;
}

export interface StatusResult {
  version: string;
  protocolVersion: number;
  dataDir: string;
  counts: StatusCounts;
  embedder: string;
  agent: string;
  pid: number;
  notice?: string;
}

export interface TimelineParams {
  /** An observation id, or an RFC 3339 time. */
  anchor: number | string;
  before?: number;
  after?: number;
  project?: string;
}

export interface TimelineResult {
  anchorId?: number;
  observations: Observation[] | null;
}

export interface UserPromptParams {
  contentSessionId: string;
  cwd: string;
  prompt: string;
  platform?: string;
}

export interface UserPromptResult {
  sessionId: number;
  promptNumber: number;
  private: boolean;
  context?: string;
  observationIds?: number[] | null;
}

/** "active", "completed" or "failed". */
export type SessionStatus = string;

export interface Session {
  id: number;
  contentSessionId: string;
  project: string;
  cwd?: string;
  platform: string;
  status: SessionStatus;
  promptCounter: number;
  /** RFC 3339. */
  createdAt: string;
  updatedAt: string;
  completedAt?: string;
}

export interface SessionsResult {
  sessions: Session[] | null;
}

export interface SessionParams {
  contentSessionId: string;
}

export interface Prompt {
  sessionId: number;
  number: number;
  text: string;
  time: string;
}

export interface Summary {
  id: number;
  sessionId: number;
  contentSessionId: string;
  promptNumber: number;
  project: string;
  request: string;
  investigated: string;
  learned: string;
  completed: string;
  nextSteps: string;
  notes: string;
  filesRead?: string[] | null;
  filesModified?: string[] | null;
  time: string;
}

export interface SessionHit extends Hit {
  promptNumber: number;
}

export interface SessionResult {
  session: Session;
  prompts: Prompt[] | null;
  observations: SessionHit[] | null;
  observationTotal: number;
  summaries: Summary[] | null;
}

export interface ViewerResult {
  /** Opens the viewer: it carries the user's token once. */
  url: string;
  port: number;
}

/** What changed: see memory.ChangeKind. "lost" says changes were dropped: read again. */
export type ChangeKind = 'prompt' | 'observation' | 'summary' | 'session' | 'forget' | 'lost';

/** The params of the `mnemo/changed` notification. */
export interface MemoryChange {
  kind: ChangeKind;
  /** RFC 3339. */
  time: string;
  id?: number;
  ids?: number[];
  contentSessionId?: string;
  project?: string;
  host?: string;
  promptNumber?: number;
  type?: string;
  title?: string;
  status?: SessionStatus;
}
