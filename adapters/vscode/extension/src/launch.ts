// How the extension launches the sidecar: which `mnemo` binary, with which arguments and
// environment. Pure apart from the file-system probe, which callers may replace.

import * as fs from 'node:fs';
import * as path from 'node:path';

/** Where the binary came from, for messages and the log. */
export type BinarySource = 'setting' | 'bundled' | 'path';

export interface Binary {
  path: string;
  source: BinarySource;
}

export interface ResolveOptions {
  /** The `mnemo.path` setting, possibly empty, `~/…`, or a bare command name. */
  setting?: string;
  /** The extension's folder; a bundled binary lives in its `bin/`. */
  extensionPath: string;
  /** The PATH to search. */
  envPath?: string;
  /** PATHEXT on Windows. */
  pathExt?: string;
  platform: NodeJS.Platform;
  /** The user's home, for `~` in the setting. */
  home?: string;
  /** Reports whether a path is an executable file; defaults to a real probe. */
  isExecutable?: (file: string) => boolean;
}

/** The binary could not be found; `tried` lists every candidate, in order. */
export class BinaryNotFoundError extends Error {
  constructor(
    message: string,
    readonly tried: readonly string[],
    readonly fromSetting: boolean,
  ) {
    super(message);
    this.name = 'BinaryNotFoundError';
  }
}

/**
 * Finds the `mnemo` binary: the `mnemo.path` setting when set (a path, or a command name
 * looked up on PATH), else `bin/mnemo` inside the extension, else `mnemo` on PATH.
 * Throws BinaryNotFoundError when nothing usable is found; a setting that points nowhere
 * is an error, not a reason to fall back silently.
 */
export function resolveBinary(options: ResolveOptions): Binary {
  const isExecutable = options.isExecutable ?? isExecutableFile;
  const win = options.platform === 'win32';
  const p = win ? path.win32 : path.posix;
  const setting = (options.setting ?? '').trim();

  if (setting !== '') {
    const expanded = expandHome(setting, options.home, options.platform);
    if (!hasSeparator(expanded, win)) {
      const found = searchPath(expanded, options, isExecutable);
      if (found.path !== undefined) {
        return { path: found.path, source: 'setting' };
      }
      throw new BinaryNotFoundError(
        `mnemo.path is "${setting}", but no such program is on PATH`,
        found.tried,
        true,
      );
    }
    if (!p.isAbsolute(expanded)) {
      throw new BinaryNotFoundError(
        `mnemo.path must be an absolute path or a command name, not "${setting}"`,
        [expanded],
        true,
      );
    }
    if (isExecutable(expanded)) {
      return { path: expanded, source: 'setting' };
    }
    throw new BinaryNotFoundError(
      `mnemo.path is "${setting}", but that is not an executable file`,
      [expanded],
      true,
    );
  }

  const bundled = bundledBinary(options.extensionPath, options.platform);
  if (isExecutable(bundled)) {
    return { path: bundled, source: 'bundled' };
  }
  const found = searchPath('mnemo', options, isExecutable);
  if (found.path !== undefined) {
    return { path: found.path, source: 'path' };
  }
  throw new BinaryNotFoundError(
    'the mnemo program was found neither in the extension nor on PATH',
    [bundled, ...found.tried],
    false,
  );
}

/** The sidecar's arguments; vscode-languageclient appends `--stdio` itself. */
export function serverArgs(remote: unknown): string[] {
  return ['serve', `--remote=${remoteMode(remote)}`];
}

/** The `mnemo.remote` setting: "none" runs in-process, anything else is "auto". */
export function remoteMode(remote: unknown): 'auto' | 'none' {
  return remote === 'none' ? 'none' : 'auto';
}

/**
 * The sidecar's environment: the extension host's, with MNEMO_HOME set from the
 * `mnemo.home` setting when that is not empty (`~` expands to the user's home).
 */
export function serverEnv(
  base: NodeJS.ProcessEnv,
  home: unknown,
  userHome: string | undefined,
  platform: NodeJS.Platform,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  if (typeof home === 'string' && home.trim() !== '') {
    env.MNEMO_HOME = expandHome(home.trim(), userHome, platform);
  }
  return env;
}

/** Expands a leading `~` (alone or followed by a separator) to the home directory. */
export function expandHome(value: string, home: string | undefined, platform: NodeJS.Platform): string {
  if (home === undefined || home === '' || !value.startsWith('~')) {
    return value;
  }
  const win = platform === 'win32';
  if (value === '~') {
    return home;
  }
  const next = value.charAt(1);
  if (next === '/' || (win && next === '\\')) {
    return (win ? path.win32 : path.posix).join(home, value.slice(2));
  }
  return value;
}

/** The binary bundled in the extension's bin/ folder, for this platform. */
export function bundledBinary(extensionPath: string, platform: NodeJS.Platform): string {
  return platform === 'win32'
    ? path.win32.join(extensionPath, 'bin', 'mnemo.exe')
    : path.posix.join(extensionPath, 'bin', 'mnemo');
}

/**
 * Gives a bundled binary back its executable bit if unpacking the VSIX lost it (best
 * effort: a read-only extension folder stays as it is). Reports whether it changed.
 */
export function restoreExecutableBit(file: string, platform: NodeJS.Platform): boolean {
  if (platform === 'win32') {
    return false;
  }
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || (st.mode & 0o111) !== 0) {
      return false;
    }
    fs.chmodSync(file, (st.mode & 0o777) | 0o755);
    return true;
  } catch {
    return false;
  }
}

/** Reports whether file is a regular file this process may execute. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    if (process.platform !== 'win32') {
      fs.accessSync(file, fs.constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

function hasSeparator(value: string, win: boolean): boolean {
  return value.includes('/') || (win && value.includes('\\'));
}

function searchPath(
  name: string,
  options: ResolveOptions,
  isExecutable: (file: string) => boolean,
): { path?: string; tried: string[] } {
  const win = options.platform === 'win32';
  const p = win ? path.win32 : path.posix;
  const dirs = (options.envPath ?? '').split(win ? ';' : ':').filter((d) => d !== '');
  let names = [name];
  if (win && p.extname(name) === '') {
    const exts = (options.pathExt ?? '.EXE;.CMD;.BAT;.COM').split(';').filter((e) => e !== '');
    names = exts.map((ext) => name + ext.toLowerCase());
  }
  const tried: string[] = [];
  for (const dir of dirs) {
    for (const n of names) {
      const candidate = p.join(dir, n);
      tried.push(candidate);
      if (isExecutable(candidate)) {
        return { path: candidate, tried };
      }
    }
  }
  return { tried };
}

/**
 * How the editor's agent runs Mnemo's MCP server: `mnemo mcp` with the program the
 * sidecar runs, on the same data directory (MNEMO_HOME, when the sidecar has one set).
 */
export function mcpLaunch(
  command: string,
  env: NodeJS.ProcessEnv,
): { command: string; args: string[]; env: Record<string, string> } {
  const out: Record<string, string> = {};
  const home = env.MNEMO_HOME;
  if (home !== undefined && home !== '') {
    out.MNEMO_HOME = home;
  }
  return { command, args: ['mcp'], env: out };
}
