// The sidecar's stderr, as the output channel shows it. The Go side logs with slog's
// text handler ("time=… level=WARN msg=… key=value"); the channel has its own time and
// level, so a line keeps only its message and attributes, at the level it was logged.
// Other lines (a crash, a usage error) are errors. Pure.

export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface LogLine {
  level: Level;
  text: string;
}

const SLOG = /^time=\S+ level=(DEBUG|INFO|WARN|ERROR)(?:[+-]\d+)? (.*)$/u;
const QUOTED_MSG = /^msg=("(?:[^"\\]|\\.)*")(.*)$/u;

/** Parses one line of the sidecar's stderr. */
export function parseServerLine(line: string): LogLine {
  const m = SLOG.exec(line);
  if (m === null) {
    return { level: 'error', text: line };
  }
  const levels: Record<string, Level> = { DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };
  return { level: levels[m[1] ?? ''] ?? 'error', text: stripMsgKey(m[2] ?? '') };
}

function stripMsgKey(rest: string): string {
  const quoted = QUOTED_MSG.exec(rest);
  if (quoted !== null) {
    try {
      return `${JSON.parse(quoted[1] ?? '""') as string}${quoted[2] ?? ''}`;
    } catch {
      return rest;
    }
  }
  return rest.startsWith('msg=') ? rest.slice('msg='.length) : rest;
}

/** The last lines a sidecar said, to explain why it would not start. */
export class LastWords {
  private readonly lines: LogLine[] = [];

  constructor(private readonly max = 20) {}

  add(line: LogLine): void {
    if (line.text.trim() === '') {
      return;
    }
    this.lines.push(line);
    if (this.lines.length > this.max) {
      this.lines.shift();
    }
  }

  /** The last error or warning, else the last line; undefined when it said nothing. */
  reason(): string | undefined {
    for (let i = this.lines.length - 1; i >= 0; i--) {
      const line = this.lines[i];
      if (line !== undefined && (line.level === 'error' || line.level === 'warn')) {
        return line.text.trim();
      }
    }
    return this.lines.at(-1)?.text.trim();
  }
}
