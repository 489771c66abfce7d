// What the Mnemo view shows: sessions (newest first, a page of them) and, under each,
// its records in the order they were made (each prompt, then the observations of its
// turn, then the summary that closed it), and the markdown of a prompt or a summary.
// Pure: no `vscode`, so every row is unit-tested.

import {
  code,
  escapeInline,
  formatTime,
  nonEmpty,
  oneLine,
  plural,
  quote,
  relativeTime,
  shortFiles,
  slug,
} from './format';
import type { Prompt, Session, SessionHit, SessionResult, Summary } from './protocol';

/** How many sessions the view lists; the viewer has them all. */
export const SESSION_PAGE = 50;

/** A row of the tree, shaped like the parts of a vscode.TreeItem it sets. */
export interface TreeRow {
  label: string;
  description: string;
  tooltip: string;
}

export interface SessionRow extends TreeRow {
  session: Session;
  /** The window's own session (the editor's contentSessionId). */
  current: boolean;
}

/** The newest sessions, at most limit of them, and how many more there are. */
export function sessionRows(
  sessions: readonly Session[] | null | undefined,
  now: number,
  currentId?: string,
  limit = SESSION_PAGE,
): { rows: SessionRow[]; more: number } {
  const sorted = [...(sessions ?? [])].sort((a, b) => time(b.createdAt) - time(a.createdAt) || b.id - a.id);
  const rows = sorted.slice(0, limit).map((s): SessionRow => {
    const current = s.contentSessionId === currentId;
    const parts = [relativeTime(s.createdAt, now), plural(s.promptCounter, 'prompt')];
    if (s.status !== '' && s.status !== 'completed') {
      parts.push(s.status);
    }
    return {
      session: s,
      current,
      label: `${s.project || '(no project)'} · ${s.platform || 'unknown'}${current ? ' (this window)' : ''}`,
      description: parts.join(' · '),
      tooltip: [
        `Session ${s.id} (${s.contentSessionId})`,
        `${s.platform || 'unknown host'} in ${s.cwd ?? s.project}`,
        `started ${formatTime(s.createdAt)}${s.completedAt !== undefined ? `, ended ${formatTime(s.completedAt)}` : ''}`,
        `status ${s.status}`,
      ].join('\n'),
    };
  });
  return { rows, more: Math.max(0, sorted.length - rows.length) };
}

/** One record of a session, as a row of the tree. */
export type RecordRow = TreeRow &
  (
    | { kind: 'prompt'; prompt: Prompt }
    | { kind: 'observation'; id: number }
    | { kind: 'summary'; summary: Summary }
    | { kind: 'more'; count: number }
  );

/**
 * A session's records in the order they were made: by prompt, each prompt before the
 * observations of its turn and the summary after them; a row saying how many
 * observations the answer left out, if any.
 */
export function recordRows(result: SessionResult, now: number): RecordRow[] {
  const entries: { turn: number; order: number; time: number; row: RecordRow }[] = [];
  for (const p of result.prompts ?? []) {
    entries.push({ turn: p.number, order: 0, time: time(p.time), row: promptRow(p, now) });
  }
  for (const h of result.observations ?? []) {
    entries.push({ turn: h.promptNumber, order: 1, time: time(h.time), row: observationRow(h, now) });
  }
  for (const s of result.summaries ?? []) {
    entries.push({ turn: s.promptNumber, order: 2, time: time(s.time), row: summaryRow(s, now) });
  }
  entries.sort((a, b) => a.turn - b.turn || a.order - b.order || a.time - b.time);
  const rows = entries.map((e) => e.row);
  const shown = result.observations?.length ?? 0;
  if (result.observationTotal > shown) {
    const count = result.observationTotal - shown;
    rows.push({
      kind: 'more',
      count,
      label: plural(count, 'more observation'),
      description: 'open the memory viewer for all',
      tooltip: `This session has ${plural(result.observationTotal, 'observation')}; the view lists ${shown}.`,
    });
  }
  return rows;
}

function promptRow(p: Prompt, now: number): RecordRow {
  return {
    kind: 'prompt',
    prompt: p,
    label: oneLine(p.text) || '(empty prompt)',
    description: `prompt ${p.number} · ${relativeTime(p.time, now)}`,
    tooltip: p.text.length > 500 ? `${p.text.slice(0, 500)}…` : p.text,
  };
}

function observationRow(h: SessionHit, now: number): RecordRow {
  const parts = [`#${h.id}`, h.type || 'observation', relativeTime(h.time, now)];
  const files = shortFiles(h.files);
  if (files !== '') {
    parts.push(files);
  }
  return {
    kind: 'observation',
    id: h.id,
    label: oneLine(h.title) || '(untitled)',
    description: parts.join(' · '),
    tooltip: oneLine(h.snippet ?? '') || oneLine(h.title),
  };
}

function summaryRow(s: Summary, now: number): RecordRow {
  return {
    kind: 'summary',
    summary: s,
    label: `Summary: ${oneLine(s.request) || oneLine(s.completed) || '(no request)'}`,
    description: `#${s.id} · ${relativeTime(s.time, now)}`,
    tooltip: oneLine(s.completed) || oneLine(s.learned) || oneLine(s.request),
  };
}

/** A prompt of a session as a markdown document. */
export function promptMarkdown(session: Pick<Session, 'project' | 'platform' | 'contentSessionId'>, p: Prompt): string {
  return [
    `# Prompt ${p.number}`,
    '',
    `${escapeInline(session.project || '(no project)')} · ${escapeInline(session.platform || 'unknown')} · ${formatTime(p.time)}`,
    '',
    quote(p.text) || '> (empty)',
    '',
    '---',
    '',
    `content session ${code(session.contentSessionId)}`,
    '',
  ].join('\n');
}

/** A session summary as a markdown document. */
export function summaryMarkdown(s: Summary): string {
  const out = [`# Summary #${s.id}`, '', `${escapeInline(s.project || '(no project)')} · prompt ${s.promptNumber} · ${formatTime(s.time)}`, ''];
  const sections: [string, string][] = [
    ['Request', s.request],
    ['Investigated', s.investigated],
    ['Learned', s.learned],
    ['Completed', s.completed],
    ['Next steps', s.nextSteps],
    ['Notes', s.notes],
  ];
  for (const [title, text] of sections) {
    if (text.trim() !== '') {
      out.push(`## ${title}`, '', text.trim(), '');
    }
  }
  const modified = nonEmpty(s.filesModified);
  const read = nonEmpty(s.filesRead);
  if (modified.length > 0) {
    out.push('## Files modified', '', ...modified.map((f) => `- ${code(f)}`), '');
  }
  if (read.length > 0) {
    out.push('## Files read', '', ...read.map((f) => `- ${code(f)}`), '');
  }
  out.push('---', '', `content session ${code(s.contentSessionId)}`, '');
  return out.join('\n');
}

/** The path of a prompt's document: /sessions/<session>/prompt-<n>.md. */
export function promptPath(contentSessionId: string, n: number): string {
  return `/sessions/${encodeURIComponent(contentSessionId)}/prompt-${n}.md`;
}

/** The path of a summary's document: /sessions/<session>/summary-<id>-<slug>.md. */
export function summaryPath(s: Pick<Summary, 'contentSessionId' | 'id' | 'request'>): string {
  return `/sessions/${encodeURIComponent(s.contentSessionId)}/summary-${s.id}-${slug(s.request)}.md`;
}

/** What a session record's document path names, or undefined. */
export function parseRecordPath(
  p: string,
): { contentSessionId: string; prompt: number } | { contentSessionId: string; summary: number } | undefined {
  const m = /^\/sessions\/([^/]+)\/(prompt|summary)-(\d+)(?:-[^/]*)?\.md$/u.exec(p);
  if (m === null) {
    return undefined;
  }
  const contentSessionId = decodeURIComponent(m[1] ?? '');
  const n = Number(m[3]);
  return m[2] === 'prompt' ? { contentSessionId, prompt: n } : { contentSessionId, summary: n };
}

function time(iso: string): number {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? 0 : t;
}
