// Presentation of memory in the editor: quick-pick rows for search hits, markdown for
// observations and context, the status bar text and the messages of the commands.
// Pure: no `vscode`, so every string the user sees is unit-tested.

import type { Anchor, ContextResult, ForgetResult, Hit, Observation, StatusResult } from './protocol';

/** A QuickPick row (label, description, detail), shaped like vscode.QuickPickItem. */
export interface Row {
  label: string;
  description: string;
  detail?: string;
}

/** The sidecar's life as the status bar shows it. */
export type SidecarState = 'idle' | 'starting' | 'running' | 'stopped' | 'failed';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", else the date. */
export function relativeTime(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) {
    return iso;
  }
  const d = now - t;
  if (d < MINUTE) {
    return 'just now';
  }
  if (d < HOUR) {
    return `${Math.floor(d / MINUTE)} min ago`;
  }
  if (d < DAY) {
    return `${Math.floor(d / HOUR)} h ago`;
  }
  if (d < 2 * DAY) {
    return 'yesterday';
  }
  if (d < 30 * DAY) {
    return `${Math.floor(d / DAY)} days ago`;
  }
  return localDate(new Date(t));
}

/** The local date and time, "2026-11-22 14:03", or the input when it is no time. */
export function formatTime(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) {
    return iso;
  }
  const d = new Date(t);
  return `${localDate(d)} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** File base names, at most `max`, then "+N". */
export function shortFiles(files: readonly string[] | null | undefined, max = 3): string {
  const list = (files ?? []).filter((f) => f !== '');
  if (list.length === 0) {
    return '';
  }
  const names = list.slice(0, max).map(baseName);
  const rest = list.length - names.length;
  return rest > 0 ? `${names.join(', ')} +${rest}` : names.join(', ');
}

/** A search hit as a row: title; "#id · type · time · files"; the snippet. */
export function hitRow(hit: Hit, now: number): Row {
  const parts = [`#${hit.id}`, hit.type || 'observation', relativeTime(hit.time, now)];
  const files = shortFiles(hit.files);
  if (files !== '') {
    parts.push(files);
  }
  const row: Row = { label: oneLine(hit.title) || '(untitled)', description: parts.join(' · ') };
  const snippet = oneLine(hit.snippet ?? '');
  if (snippet !== '') {
    row.detail = snippet;
  }
  return row;
}

/** A full observation as a markdown document. */
export function observationMarkdown(obs: Observation): string {
  const out: string[] = [];
  out.push(`# ${escapeInline(oneLine(obs.title) || '(untitled)')}`, '');
  if (obs.subtitle) {
    out.push(`*${escapeInline(oneLine(obs.subtitle))}*`, '');
  }
  const meta = [`**${escapeInline(obs.type || 'observation')}**`, `#${obs.id}`];
  if (obs.project) {
    meta.push(`project ${escapeInline(obs.project)}`);
  }
  meta.push(formatTime(obs.time));
  const origin: string[] = [];
  if (obs.source) {
    origin.push(escapeInline(obs.source));
  }
  if (obs.tool) {
    origin.push(`tool ${escapeInline(obs.tool)}`);
  }
  if (obs.promptNumber > 0) {
    origin.push(`prompt ${obs.promptNumber}`);
  }
  out.push(meta.join(' · '));
  if (origin.length > 0) {
    out.push('', origin.join(' · '));
  }
  if (obs.anchor !== undefined) {
    out.push('', `From \`${anchorText(obs.anchor)}\``);
  }
  out.push('');
  if (obs.request) {
    out.push('## Request', '', quote(obs.request), '');
  }
  if (obs.narrative) {
    out.push('## Narrative', '', obs.narrative.trim(), '');
  }
  const facts = nonEmpty(obs.facts);
  if (facts.length > 0) {
    out.push('## Facts', '', ...facts.map((f) => `- ${oneLine(f)}`), '');
  }
  const modified = nonEmpty(obs.filesModified);
  const read = nonEmpty(obs.filesRead);
  if (modified.length > 0 || read.length > 0) {
    out.push('## Files', '');
    if (modified.length > 0) {
      out.push('Modified:', '', ...modified.map((f) => `- ${code(f)}`), '');
    }
    if (read.length > 0) {
      out.push('Read:', '', ...read.map((f) => `- ${code(f)}`), '');
    }
  }
  const concepts = nonEmpty(obs.concepts);
  if (concepts.length > 0) {
    out.push('## Concepts', '', concepts.map(code).join(' · '), '');
  }
  const ids = [`session ${obs.sessionId}`];
  if (obs.contentSessionId) {
    ids.push(`content session ${code(obs.contentSessionId)}`);
  }
  if (obs.memorySessionId) {
    ids.push(`memory session ${code(obs.memorySessionId)}`);
  }
  out.push('---', '', ids.join(' · '), '');
  return out.join('\n');
}

/** Several observations, separated by rules. */
export function observationsMarkdown(list: readonly Observation[]): string {
  return list.map(observationMarkdown).join('\n---\n\n');
}

/** Removes the `<mnemo-context>` wrapper that keeps Mnemo from re-ingesting its output. */
export function stripContextTags(context: string): string {
  return context
    .replace(/^\s*<mnemo-context[^>]*>\s*/u, '')
    .replace(/\s*<\/mnemo-context>\s*$/u, '')
    .trim();
}

/** What a new session would be given, as a markdown document. */
export function contextMarkdown(result: ContextResult): string {
  const project = result.project || 'this workspace';
  const ids = result.observationIds ?? [];
  const body = stripContextTags(result.context);
  const out = [`# Mnemo context: ${escapeInline(project)}`, ''];
  out.push(
    `What a new session in ${escapeInline(project)} starts with: ` +
      `${plural(ids.length, 'observation')} cited, ${plural(result.bytes, 'byte')}.`,
    '',
    '---',
    '',
  );
  out.push(body !== '' ? body : '*Nothing is remembered for this project yet.*', '');
  return out.join('\n');
}

/** The status bar item's text and tooltip. */
export function statusBar(state: SidecarState, status: StatusResult | undefined): { text: string; tooltip: string } {
  switch (state) {
    case 'idle':
      return { text: '$(database) Mnemo', tooltip: 'Mnemo starts when a folder is open.' };
    case 'starting':
      return { text: '$(sync~spin) Mnemo', tooltip: 'Mnemo is starting…' };
    case 'stopped':
    case 'failed':
      return {
        text: '$(circle-slash) Mnemo',
        tooltip: 'Mnemo is not running. Run "Mnemo: Show Log" to see why.',
      };
    case 'running':
      break;
  }
  if (status === undefined) {
    return { text: '$(database) Mnemo', tooltip: 'Mnemo is running. Click to search memory.' };
  }
  const c = status.counts;
  const lines = [
    `Mnemo ${status.version}: ${plural(c.observations, 'observation')}, ` +
      `${plural(c.sessions, 'session')}, ${plural(c.summaries, 'summary', 'summaries')}`,
  ];
  if (c.queued > 0) {
    lines.push(`${plural(c.queued, 'event')} waiting to be compressed`);
  }
  lines.push(`Daemon pid ${status.pid}, data in ${status.dataDir}`);
  lines.push(`Embedder ${status.embedder}, agent ${status.agent}`);
  if (status.notice) {
    lines.push(`Notice: ${status.notice}`);
  }
  lines.push('Click to search memory.');
  let text = `$(database) ${c.observations.toLocaleString('en-US')}`;
  if (c.queued > 0) {
    text += ` $(sync) ${c.queued.toLocaleString('en-US')}`;
  }
  if (status.notice) {
    text += ' $(warning)';
  }
  return { text, tooltip: lines.join('\n') };
}

/** What Forget did, in one sentence or two. */
export function forgetMessage(result: ForgetResult): string {
  const deleted = result.deleted ?? [];
  const missing = result.missing ?? [];
  const parts: string[] = [];
  if (deleted.length > 0) {
    parts.push(`Mnemo forgot ${idList(deleted)}.`);
  } else {
    parts.push('Mnemo forgot nothing.');
  }
  if (missing.length > 0) {
    parts.push(`Not found: ${idList(missing)}.`);
  }
  return parts.join(' ');
}

/**
 * Observation ids typed by the user: "42", "#42", "12, 15 #16". Undefined when the text
 * is anything else (then it is a search query).
 */
export function parseIds(text: string): number[] | undefined {
  const tokens = text.split(/[\s,;]+/u).filter((t) => t !== '');
  if (tokens.length === 0) {
    return undefined;
  }
  const ids: number[] = [];
  for (const token of tokens) {
    const m = /^#?(\d{1,15})$/u.exec(token);
    if (m === null) {
      return undefined;
    }
    const id = Number(m[1]);
    if (id <= 0) {
      return undefined;
    }
    if (!ids.includes(id)) {
      ids.push(id);
    }
  }
  return ids;
}

/** The path of a `mnemo:` URI for an observation: /observation/42/<title slug>.md */
export function observationPath(id: number, title: string): string {
  return `/observation/${id}/${slug(title) || 'observation'}.md`;
}

/** The path of a `mnemo:` URI for a folder's context: /context/<folder name>.md */
export function contextPath(folderName: string): string {
  return `/context/${slug(folderName) || 'workspace'}.md`;
}

/** Parses a `mnemo:` URI path made by observationPath; undefined for anything else. */
export function parseObservationPath(p: string): number | undefined {
  const m = /^\/observation\/(\d{1,15})\//u.exec(p);
  return m === null ? undefined : Number(m[1]);
}

/** A file-name-safe, lower-case form of a title, at most 60 characters. */
export function slug(title: string): string {
  return title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/gu, '')
    .slice(0, 60)
    .replace(/-+$/u, '');
}

/** "#1, #2 and #3". */
export function idList(ids: readonly number[]): string {
  const tags = ids.map((id) => `#${id}`);
  if (tags.length <= 1) {
    return tags.join('');
  }
  return `${tags.slice(0, -1).join(', ')} and ${tags[tags.length - 1] ?? ''}`;
}

/** "1 observation", "2 observations". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

function localDate(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function baseName(file: string): string {
  const trimmed = file.replace(/[/\\]+$/u, '');
  const i = Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\'));
  return i >= 0 ? trimmed.slice(i + 1) : trimmed;
}

export function oneLine(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

export function nonEmpty(list: readonly string[] | null | undefined): string[] {
  return (list ?? []).map((s) => s.trim()).filter((s) => s !== '');
}

export function quote(text: string): string {
  return text
    .trim()
    .split(/\r?\n/u)
    .map((line) => (line === '' ? '>' : `> ${line}`))
    .join('\n');
}

/** A markdown code span that survives backticks in its content. */
export function code(text: string): string {
  const runs = text.match(/`+/gu) ?? [];
  const longest = runs.reduce((n, r) => Math.max(n, r.length), 0);
  const fence = '`'.repeat(longest + 1);
  const pad = longest > 0 ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** Escapes the characters that would turn plain text into markup on one line. */
export function escapeInline(text: string): string {
  return text.replace(/[\\`*_[\]<>#|]/gu, (c) => `\\${c}`);
}

/**
 * The anchor of a range given as VS Code positions (lines and characters from 0, the
 * end exclusive): lines and columns from 1, the end column the last one selected; a
 * range that ends at the start of a line ends on the line before, whole.
 */
export function anchorOf(
  file: string,
  start: { line: number; character: number },
  end: { line: number; character: number },
): Anchor {
  const endsAtLineStart = end.character === 0 && end.line > start.line;
  const anchor: Anchor = {
    file,
    startLine: start.line + 1,
    endLine: endsAtLineStart ? end.line : end.line + 1,
  };
  if (start.character > 0) {
    anchor.startColumn = start.character + 1;
  }
  if (!endsAtLineStart && end.character > 0) {
    anchor.endColumn = end.character; // the last selected column: the end is exclusive
  }
  return anchor;
}

/** An anchor as editors print places: file:12-18, or file:12:5 within one line. */
export function anchorText(a: Anchor): string {
  if (a.startLine === a.endLine) {
    return a.startColumn !== undefined && a.startColumn > 0 ? `${a.file}:${a.startLine}:${a.startColumn}` : `${a.file}:${a.startLine}`;
  }
  return `${a.file}:${a.startLine}-${a.endLine}`;
}
