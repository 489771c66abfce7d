import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  BinaryNotFoundError,
  bundledBinary,
  expandHome,
  isExecutableFile,
  mcpLaunch,
  remoteMode,
  resolveBinary,
  restoreExecutableBit,
  serverArgs,
  serverEnv,
} from '../../src/launch';

describe('resolveBinary', () => {
  interface Case {
    name: string;
    setting?: string;
    platform?: NodeJS.Platform;
    envPath?: string;
    executables: string[];
    want?: { path: string; source: string };
    wantError?: RegExp;
    wantTried?: string[];
  }
  const cases: Case[] = [
    {
      name: 'the setting wins over everything',
      setting: '/opt/mnemo/bin/mnemo',
      envPath: '/usr/bin',
      executables: ['/opt/mnemo/bin/mnemo', '/ext/bin/mnemo', '/usr/bin/mnemo'],
      want: { path: '/opt/mnemo/bin/mnemo', source: 'setting' },
    },
    {
      name: 'the setting expands ~',
      setting: '~/go/bin/mnemo',
      executables: ['/home/u/go/bin/mnemo'],
      want: { path: '/home/u/go/bin/mnemo', source: 'setting' },
    },
    {
      name: 'a command name in the setting is looked up on PATH',
      setting: 'mnemo-dev',
      envPath: '/a:/b',
      executables: ['/b/mnemo-dev', '/ext/bin/mnemo'],
      want: { path: '/b/mnemo-dev', source: 'setting' },
    },
    {
      name: 'a setting that points nowhere is an error, not a fallback',
      setting: '/nope/mnemo',
      envPath: '/usr/bin',
      executables: ['/ext/bin/mnemo', '/usr/bin/mnemo'],
      wantError: /mnemo\.path is "\/nope\/mnemo", but that is not an executable file/u,
      wantTried: ['/nope/mnemo'],
    },
    {
      name: 'a relative path in the setting is refused',
      setting: 'bin/mnemo',
      executables: ['bin/mnemo'],
      wantError: /must be an absolute path or a command name/u,
    },
    {
      name: 'a command name missing from PATH is an error',
      setting: 'mnemo-dev',
      envPath: '/a:/b',
      executables: [],
      wantError: /no such program is on PATH/u,
      wantTried: ['/a/mnemo-dev', '/b/mnemo-dev'],
    },
    {
      name: 'the bundled binary comes next',
      setting: '  ',
      envPath: '/usr/bin',
      executables: ['/ext/bin/mnemo', '/usr/bin/mnemo'],
      want: { path: '/ext/bin/mnemo', source: 'bundled' },
    },
    {
      name: 'then the first mnemo on PATH',
      envPath: '/usr/local/bin::/usr/bin:/bin',
      executables: ['/usr/bin/mnemo', '/bin/mnemo'],
      want: { path: '/usr/bin/mnemo', source: 'path' },
    },
    {
      name: 'nothing anywhere lists every place tried',
      envPath: '/usr/local/bin:/usr/bin',
      executables: [],
      wantError: /found neither in the extension nor on PATH/u,
      wantTried: ['/ext/bin/mnemo', '/usr/local/bin/mnemo', '/usr/bin/mnemo'],
    },
    {
      name: 'windows: the bundled binary is mnemo.exe',
      platform: 'win32',
      envPath: 'C:\\tools',
      executables: ['\\ext\\bin\\mnemo.exe'],
      want: { path: '\\ext\\bin\\mnemo.exe', source: 'bundled' },
    },
    {
      name: 'windows: PATH lookup uses PATHEXT',
      platform: 'win32',
      envPath: 'C:\\tools;C:\\bin',
      executables: ['C:\\bin\\mnemo.exe'],
      want: { path: 'C:\\bin\\mnemo.exe', source: 'path' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const platform = c.platform ?? 'linux';
      const run = (): ReturnType<typeof resolveBinary> =>
        resolveBinary({
          setting: c.setting,
          extensionPath: platform === 'win32' ? '\\ext' : '/ext',
          envPath: c.envPath,
          platform,
          home: '/home/u',
          isExecutable: (file) => c.executables.includes(file),
        });
      if (c.want !== undefined) {
        assert.deepEqual(run(), c.want);
        return;
      }
      assert.throws(run, (error: unknown) => {
        assert.ok(error instanceof BinaryNotFoundError);
        assert.match(error.message, c.wantError ?? /./u);
        if (c.wantTried !== undefined) {
          assert.deepEqual(error.tried, c.wantTried);
        }
        assert.equal(error.fromSetting, (c.setting ?? '').trim() !== '');
        return true;
      });
    });
  }

  it('probes the real file system', (t) => {
    if (process.platform === 'win32') {
      t.skip('POSIX permissions');
      return;
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mnemo-launch-'));
    t.after(() => {
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const ext = path.join(dir, 'ext');
    const pathDir = path.join(dir, 'path');
    fs.mkdirSync(path.join(ext, 'bin'), { recursive: true });
    fs.mkdirSync(pathDir);
    // Not executable: skipped. A directory named mnemo: skipped.
    fs.writeFileSync(path.join(ext, 'bin', 'mnemo'), '#!/bin/sh\n', { mode: 0o644 });
    fs.mkdirSync(path.join(dir, 'mnemo'));
    fs.writeFileSync(path.join(pathDir, 'mnemo'), '#!/bin/sh\n', { mode: 0o755 });
    const got = resolveBinary({ extensionPath: ext, envPath: `${dir}:${pathDir}`, platform: process.platform });
    assert.deepEqual(got, { path: path.join(pathDir, 'mnemo'), source: 'path' });
    assert.equal(isExecutableFile(path.join(dir, 'missing')), false);
  });
});

describe('restoreExecutableBit', () => {
  it('makes a bundled binary executable once', (t) => {
    if (process.platform === 'win32') {
      t.skip('POSIX permissions');
      return;
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mnemo-launch-'));
    t.after(() => {
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const file = bundledBinary(dir, process.platform);
    assert.equal(file, path.join(dir, 'bin', 'mnemo'));
    assert.equal(restoreExecutableBit(file, process.platform), false, 'nothing there');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, '#!/bin/sh\n', { mode: 0o644 });
    assert.equal(isExecutableFile(file), false);
    assert.equal(restoreExecutableBit(file, process.platform), true);
    assert.equal(isExecutableFile(file), true);
    assert.equal(fs.statSync(file).mode & 0o777, 0o755);
    assert.equal(restoreExecutableBit(file, process.platform), false, 'already executable');
  });
  it('leaves Windows alone', () => {
    assert.equal(restoreExecutableBit('C:\\ext\\bin\\mnemo.exe', 'win32'), false);
    assert.equal(bundledBinary('C:\\ext', 'win32'), 'C:\\ext\\bin\\mnemo.exe');
  });
});

describe('serverArgs', () => {
  const cases: { in: unknown; want: string[] }[] = [
    { in: 'auto', want: ['serve', '--remote=auto'] },
    { in: 'none', want: ['serve', '--remote=none'] },
    { in: undefined, want: ['serve', '--remote=auto'] },
    { in: 'bogus', want: ['serve', '--remote=auto'] },
  ];
  for (const c of cases) {
    it(`remote ${String(c.in)}`, () => {
      assert.deepEqual(serverArgs(c.in), c.want);
      assert.equal(remoteMode(c.in), c.want[1]?.slice('--remote='.length));
    });
  }
});

describe('serverEnv', () => {
  it('keeps the environment and sets MNEMO_HOME from the setting', () => {
    const env = serverEnv({ PATH: '/bin', MNEMO_HOME: '/old' }, '~/mnemo-data', '/home/u', 'linux');
    assert.deepEqual(env, { PATH: '/bin', MNEMO_HOME: '/home/u/mnemo-data' });
  });
  it('leaves MNEMO_HOME alone when the setting is empty', () => {
    const base = { PATH: '/bin', MNEMO_HOME: '/old' };
    const env = serverEnv(base, ' ', '/home/u', 'linux');
    assert.deepEqual(env, base);
    assert.notEqual(env, base, 'a copy, never the extension host environment itself');
  });
});

describe('expandHome', () => {
  const cases: { in: string; platform?: NodeJS.Platform; want: string }[] = [
    { in: '~', want: '/home/u' },
    { in: '~/x/y', want: '/home/u/x/y' },
    { in: '~bob/x', want: '~bob/x' },
    { in: '/abs/~/x', want: '/abs/~/x' },
    { in: '~\\data', platform: 'win32', want: 'C:\\Users\\u\\data' },
  ];
  for (const c of cases) {
    it(c.in, () => {
      const home = c.platform === 'win32' ? 'C:\\Users\\u' : '/home/u';
      assert.equal(expandHome(c.in, home, c.platform ?? 'linux'), c.want);
    });
  }
  it('leaves the value when there is no home', () => {
    assert.equal(expandHome('~/x', undefined, 'linux'), '~/x');
  });
});

describe('mcpLaunch', () => {
  it('runs `mcp` with the sidecar program, on its data directory only', () => {
    assert.deepEqual(mcpLaunch('/opt/mnemo/bin/mnemo', { PATH: '/usr/bin', MNEMO_HOME: '/data/mnemo', SECRET: 'x' }), {
      command: '/opt/mnemo/bin/mnemo',
      args: ['mcp'],
      env: { MNEMO_HOME: '/data/mnemo' },
    });
    assert.deepEqual(mcpLaunch('mnemo', { PATH: '/usr/bin' }).env, {});
    assert.deepEqual(mcpLaunch('mnemo', { MNEMO_HOME: '' }).env, {});
  });
});
