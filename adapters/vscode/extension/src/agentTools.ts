// Memory for the editor's agent: the language model tools (search, timeline, get,
// remember) and the answer of the `@mnemo` chat participant. Pure: the calls to the
// sidecar come in as a function, so the tools run under Node against a real sidecar;
// lm.ts registers them with VS Code.

import { formatTime, observationsMarkdown, oneLine, shortFiles } from './format';
import {
  type GetObservationsResult,
  type Hit,
  Method,
  type Observation,
  type SaveParams,
  type SaveResult,
  type SearchParams,
  type SearchResult,
  type TimelineParams,
  type TimelineResult,
} from './protocol';

/** Calls a method of the sidecar. */
export type Requester = <R>(method: string, params: unknown) => Promise<R>;

/** The tools' names (package.json `contributes.languageModelTools`). */
export const Tool = {
  search: 'mnemo_search',
  timeline: 'mnemo_timeline',
  get: 'mnemo_get_observations',
  remember: 'mnemo_remember',
} as const;

export type ToolName = (typeof Tool)[keyof typeof Tool];

/** The most observations get fetches in one call, and search lists. */
export const MAX_IDS = 20;
export const MAX_SEARCH = 50;
export const DEFAULT_SEARCH = 10;
export const MAX_SIDE = 20;
export const DEFAULT_SIDE = 5;

/** Where the tools work: the workspace folder, which names the project. */
export interface ToolContext {
  request: Requester;
  cwd?: string;
}

/** A tool's input that does not fit its schema; the model is told the message. */
export class ToolInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolInputError';
  }
}

/** Runs a tool with the model's input and returns its text for the model. */
export async function runTool(name: string, input: unknown, ctx: ToolContext): Promise<string> {
  const args = asObject(input);
  switch (name) {
    case Tool.search:
      return search(args, ctx);
    case Tool.timeline:
      return timeline(args, ctx);
    case Tool.get:
      return get(args, ctx);
    case Tool.remember:
      return remember(args, ctx);
    default:
      throw new ToolInputError(`Mnemo has no tool ${JSON.stringify(name)}`);
  }
}

/** The one-line confirmation VS Code shows before a tool runs. */
export function invocationMessage(name: string, input: unknown): string {
  const args = isObject(input) ? input : {};
  switch (name) {
    case Tool.search:
      return typeof args.query === 'string' && args.query.trim() !== ''
        ? `Searching Mnemo's memory for "${oneLine(args.query)}"`
        : "Listing Mnemo's newest memories";
    case Tool.timeline:
      return `Reading Mnemo's timeline around ${String(args.anchor)}`;
    case Tool.get:
      return `Reading Mnemo's observations ${Array.isArray(args.ids) ? args.ids.map((id) => `#${String(id)}`).join(', ') : ''}`;
    case Tool.remember:
      return 'Saving a memory in Mnemo';
    default:
      return `Running ${name}`;
  }
}

async function search(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
  const params: SearchParams = { limit: int(args.limit, 'limit', 1, MAX_SEARCH) ?? DEFAULT_SEARCH };
  const query = str(args.query, 'query');
  if (query !== undefined && query.trim() !== '') {
    params.query = query.trim();
  }
  const project = str(args.project, 'project');
  if (project !== undefined && project.trim() !== '') {
    params.project = project.trim();
  }
  const types = strings(args.types, 'types');
  if (types !== undefined) {
    params.types = types;
  }
  const files = strings(args.files, 'files');
  if (files !== undefined) {
    params.files = files;
  }
  const result = await ctx.request<SearchResult>(Method.search, params);
  const hits = result.hits ?? [];
  if (hits.length === 0) {
    return params.query !== undefined ? `Mnemo remembers nothing that matches "${params.query}".` : 'Mnemo remembers nothing yet.';
  }
  const head = `${hits.length} of ${result.total} observations (#id · time · type · title · files); read one with ${Tool.get}, its neighbours with ${Tool.timeline}:`;
  return [head, ...hits.map((h) => indexLine(h))].join('\n');
}

async function timeline(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
  const anchor = args.anchor;
  if (!(typeof anchor === 'number' && Number.isInteger(anchor) && anchor > 0) && !(typeof anchor === 'string' && anchor.trim() !== '')) {
    throw new ToolInputError('anchor must be an observation id (a positive integer) or an RFC 3339 time');
  }
  const params: TimelineParams = {
    anchor: typeof anchor === 'string' && /^\d+$/u.test(anchor.trim()) ? Number(anchor.trim()) : anchor,
    before: int(args.before, 'before', 0, MAX_SIDE) ?? DEFAULT_SIDE,
    after: int(args.after, 'after', 0, MAX_SIDE) ?? DEFAULT_SIDE,
  };
  const result = await ctx.request<TimelineResult>(Method.timeline, params);
  const list = result.observations ?? [];
  if (list.length === 0) {
    return 'Mnemo has no observations around that anchor.';
  }
  return list.map((o) => `${o.id === result.anchorId ? '>' : ' '} ${indexLine(observationHit(o))}`).join('\n');
}

async function get(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
  const raw: unknown = args.ids;
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_IDS) {
    throw new ToolInputError(`ids must list 1 to ${MAX_IDS} observation ids`);
  }
  const ids = (raw as unknown[]).map((v): unknown => (typeof v === 'string' && /^#?\d+$/u.test(v.trim()) ? Number(v.trim().replace('#', '')) : v));
  if (!ids.every((v): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0)) {
    throw new ToolInputError('ids must be positive integers');
  }
  const result = await ctx.request<GetObservationsResult>(Method.getObservations, { ids });
  const found = result.observations ?? [];
  const missing = ids.filter((id) => !found.some((o) => o.id === id));
  const parts: string[] = [];
  if (found.length > 0) {
    parts.push(observationsMarkdown(found));
  }
  if (missing.length > 0) {
    parts.push(`Mnemo has no observation ${missing.map((id) => `#${id}`).join(', ')}.`);
  }
  return parts.join('\n');
}

async function remember(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
  const text = str(args.text, 'text');
  if (text === undefined || text.trim() === '') {
    throw new ToolInputError('text is required: what to remember');
  }
  const params: SaveParams = { text: text.trim() };
  const title = str(args.title, 'title');
  if (title !== undefined && title.trim() !== '') {
    params.title = title.trim();
  }
  const files = strings(args.files, 'files');
  if (files !== undefined) {
    params.files = files;
  }
  if (ctx.cwd !== undefined) {
    params.cwd = ctx.cwd;
  }
  const result = await ctx.request<SaveResult>(Method.save, params);
  return `Mnemo saved this as #${result.id}; later sessions find it by search.`;
}

/** One line of the compact index: #id · time · type · title · files. */
export function indexLine(h: Pick<Hit, 'id' | 'time' | 'type' | 'title' | 'files'>): string {
  const parts = [`#${h.id}`, formatTime(h.time), h.type || 'observation', oneLine(h.title) || '(untitled)'];
  const files = shortFiles(h.files);
  if (files !== '') {
    parts.push(files);
  }
  return parts.join(' · ');
}

function observationHit(o: Observation): Hit {
  return {
    id: o.id,
    title: o.title,
    type: o.type,
    time: o.time,
    project: o.project,
    files: [...(o.filesModified ?? []), ...(o.filesRead ?? [])],
    score: 0,
  };
}

/**
 * The `@mnemo` participant's answer to a question: what memory has that matches it,
 * as markdown, each hit with its id (to open, or to hand to an agent's tools).
 */
export function chatAnswer(question: string, hits: readonly Hit[], scope: { project?: string; everywhere: boolean }): string {
  const q = oneLine(question);
  if (hits.length === 0) {
    return q === ''
      ? 'Mnemo remembers nothing yet.'
      : `Mnemo remembers nothing that matches *${escapeMarkdown(q)}*.`;
  }
  const where =
    scope.project !== undefined && !scope.everywhere
      ? ` in **${escapeMarkdown(scope.project)}**`
      : scope.project !== undefined
        ? ` (nothing in **${escapeMarkdown(scope.project)}**; from every project)`
        : '';
  const out = [`Mnemo remembers ${hits.length === 1 ? 'this' : `these ${hits.length}`}${where}:`, ''];
  for (const h of hits) {
    const meta = [h.type || 'observation', formatTime(h.time)];
    if (scope.everywhere || scope.project === undefined) {
      meta.push(h.project);
    }
    const files = shortFiles(h.files);
    if (files !== '') {
      meta.push(files);
    }
    out.push(`- **#${h.id}** ${escapeMarkdown(oneLine(h.title) || '(untitled)')} — ${escapeMarkdown(meta.join(' · '))}`);
    const snippet = oneLine(h.snippet ?? '');
    if (snippet !== '') {
      out.push(`  > ${escapeMarkdown(snippet.length > 240 ? `${snippet.slice(0, 240)}…` : snippet)}`);
    }
  }
  out.push('', 'Open one with **Mnemo: Search Memory** (type its id), or in the Mnemo view.');
  return out.join('\n');
}

/** How many hits the participant shows. */
export const CHAT_HITS = 8;

/**
 * The participant's search: the workspace's project first, and every project when that
 * has nothing.
 */
export async function chatSearch(
  request: Requester,
  question: string,
  project: string | undefined,
): Promise<{ hits: Hit[]; everywhere: boolean }> {
  const base: SearchParams = { limit: CHAT_HITS };
  if (question.trim() !== '') {
    base.query = question.trim();
  }
  if (project !== undefined && project !== '') {
    const scoped = await request<SearchResult>(Method.search, { ...base, project });
    if ((scoped.hits ?? []).length > 0) {
      return { hits: scoped.hits ?? [], everywhere: false };
    }
  }
  const all = await request<SearchResult>(Method.search, base);
  return { hits: all.hits ?? [], everywhere: true };
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_[\]<>#|]/gu, (c) => `\\${c}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function asObject(v: unknown): Record<string, unknown> {
  if (v === undefined || v === null) {
    return {};
  }
  if (!isObject(v)) {
    throw new ToolInputError('the input must be an object');
  }
  return v;
}

function str(v: unknown, name: string): string | undefined {
  if (v === undefined || v === null) {
    return undefined;
  }
  if (typeof v !== 'string') {
    throw new ToolInputError(`${name} must be a string`);
  }
  return v;
}

function strings(v: unknown, name: string): string[] | undefined {
  if (v === undefined || v === null) {
    return undefined;
  }
  if (!Array.isArray(v) || !v.every((s): s is string => typeof s === 'string')) {
    throw new ToolInputError(`${name} must be a list of strings`);
  }
  const list = v.map((s) => s.trim()).filter((s) => s !== '');
  return list.length > 0 ? list : undefined;
}

function int(v: unknown, name: string, min: number, max: number): number | undefined {
  if (v === undefined || v === null) {
    return undefined;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new ToolInputError(`${name} must be an integer from ${min} to ${max}`);
  }
  return v;
}
