// The packaged extension (out/extension.js, with the real vscode-languageclient bundled
// in) activated under plain Node against a stub of the `vscode` module, and a real
// sidecar process. With MNEMO_BIN pointing at a `mnemo` binary that has `serve`, the
// whole path runs against it: initialize, didOpen/didSave, search, remember, context,
// forget, status, idle → mnemo/stop, and shutdown/exit on deactivate; recovery from a
// wrong setting and from a crash; and the shared daemon (--remote=auto).

import '../vscode-stub/register';

import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type * as vscodeTypes from 'vscode';
import type { MnemoApi } from '../../src/extension';
import type { MemoryNode } from '../../src/memoryView';
import type { GetObservationsResult, Observation, SearchResult, StatusResult } from '../../src/protocol';
import {
  CancellationTokenSource,
  Position,
  Selection,
  type ShownMessage,
  type StubQuickPick,
  type TextDocument,
  Uri,
  env,
  lm,
  stub,
  workspace,
} from '../vscode-stub/vscode';

/** The extension's folder: out/tsc/test/integration → four levels up. */
const EXT_ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const BUNDLE = path.join(EXT_ROOT, 'out', 'extension.js');

interface ExtensionModule {
  activate(context: vscodeTypes.ExtensionContext): MnemoApi;
  deactivate(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle is what ships; load it as VS Code does
const extension = require(BUNDLE) as ExtensionModule;

interface Running {
  api: MnemoApi;
  context: { subscriptions: { dispose(): unknown }[] };
}

/** Activates the extension for a folder with the given settings. */
function activate(folder: string | undefined, settings: Record<string, unknown>): Running {
  stub.reset();
  for (const [key, value] of Object.entries(settings)) {
    stub.settings.set(key, value);
  }
  if (folder !== undefined) {
    stub.workspaceFolders = [{ uri: Uri.file(folder), name: path.basename(folder), index: 0 }];
  }
  const context = {
    subscriptions: [] as { dispose(): unknown }[],
    extensionPath: EXT_ROOT,
    extensionUri: Uri.file(EXT_ROOT),
    asAbsolutePath: (p: string) => path.join(EXT_ROOT, p),
  };
  const api = extension.activate(context as unknown as vscodeTypes.ExtensionContext);
  return { api, context };
}

/** Deactivates as VS Code does: deactivate(), then the subscriptions are disposed. */
async function deactivate(running: Running): Promise<void> {
  await extension.deactivate();
  for (const d of running.context.subscriptions) {
    d.dispose();
  }
}

/** Polls until fn returns something other than undefined/false, or fails at the deadline. */
async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) {
        return v;
      }
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const suffix = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${suffix}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function channel(): (typeof stub.outputChannels)[number] {
  const c = stub.outputChannels[0];
  assert.ok(c !== undefined, 'the extension creates its output channel');
  return c;
}

function errors(): ShownMessage[] {
  return stub.messages.filter((m) => m.severity === 'error');
}

function tempDir(t: { after(fn: () => void): void }, prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  t.after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('extension without a usable sidecar', () => {
  it('a missing binary: one message whose button opens the settings, no process', async (t) => {
    const folder = tempDir(t, 'mnemo-ext-');
    const running = activate(folder, { 'mnemo.path': path.join(folder, 'no-such-mnemo') });
    t.after(() => deactivate(running));
    stub.respond = (m) => (m.items.includes('Open Settings') ? 'Open Settings' : undefined);

    assert.equal(await running.api.ready, false);
    assert.equal(running.api.sidecar.state, 'failed');
    await waitFor('the settings to open', () =>
      stub.executed.find((e) => e.command === 'workbench.action.openSettings' && e.args[0] === 'mnemo.path'),
    );
    assert.equal(errors().length, 1, JSON.stringify(stub.messages));
    assert.match(errors()[0]?.message ?? '', /mnemo\.path is ".*no-such-mnemo", but that is not an executable file/u);
    assert.equal(stub.statusBarItems[0]?.text, '$(circle-slash) Mnemo');
    assert.match(channel().text(), /Mnemo cannot start/u);

    // A command says why it cannot run, and opens no picker.
    stub.respond = () => undefined;
    await stub.commands.get('mnemo.search')?.();
    assert.deepEqual(
      stub.messages.slice(1).map((m) => [m.severity, m.message, m.items]),
      [['warning', 'Mnemo is not running.', ['Show Log', 'Restart']]],
    );
    assert.equal(stub.quickPicks.length, 0);
  });

  it('a sidecar that exits at once: one message, its stderr in the log, no restart loop', async (t) => {
    if (process.platform === 'win32') {
      t.skip('uses a shell script as the sidecar');
      return;
    }
    const dir = tempDir(t, 'mnemo-ext-');
    const calls = path.join(dir, 'calls');
    const fake = path.join(dir, 'broken-mnemo');
    fs.writeFileSync(fake, `#!/bin/sh\necho "$@" >> '${calls}'\necho 'mnemo: data directory is locked' >&2\nexit 3\n`, {
      mode: 0o755,
    });
    const running = activate(dir, { 'mnemo.path': fake, 'mnemo.remote': 'none' });
    t.after(() => deactivate(running));

    assert.equal(await running.api.ready, false);
    assert.equal(running.api.sidecar.state, 'failed');
    await waitFor('stderr in the output channel', () =>
      channel().lines.find((l) => l.text.includes('mnemo: data directory is locked')),
    );
    // Anything that would restart it has been scheduled by now; give it a moment to show.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean), ['serve --remote=none --stdio']);
    assert.equal(errors().length, 1, JSON.stringify(stub.messages));
    assert.match(errors()[0]?.message ?? '', /broken-mnemo could not start: mnemo: data directory is locked$/u);
    assert.deepEqual(errors()[0]?.items, ['Show Log', 'Open Settings']);
  });

  it('an agent API that refuses to run is left out; the extension still activates', async () => {
    const original = lm.registerMcpServerDefinitionProvider;
    lm.registerMcpServerDefinitionProvider = () => {
      throw new Error("Extension 'mnemo-dev.mnemo' CANNOT use API proposal: mcpConfigurationProvider");
    };
    try {
      const running = activate(undefined, { 'mnemo.path': '/nonexistent/mnemo' });
      try {
        assert.equal(await running.api.ready, false);
        assert.deepEqual(running.api.agent, {
          tools: ['mnemo_search', 'mnemo_timeline', 'mnemo_get_observations', 'mnemo_remember'],
          mcp: false,
          participant: true,
        });
        assert.match(channel().text(), /vscode\.lm\.registerMcpServerDefinitionProvider is not available in this VS Code: .*CANNOT use API proposal/u);
        assert.match(channel().text(), /Agent features: tools mnemo_search, .*; no MCP server provider .*; @mnemo in the chat/u);
        assert.ok(stub.commands.has('mnemo.openViewer'));
        assert.deepEqual(stub.messages, []);
      } finally {
        await deactivate(running);
      }
    } finally {
      lm.registerMcpServerDefinitionProvider = original;
    }
  });

  it('no folder open: waits without starting anything', async () => {
    const running = activate(undefined, { 'mnemo.path': '/nonexistent/mnemo' });
    try {
      assert.equal(await running.api.ready, false);
      assert.equal(running.api.sidecar.state, 'idle');
      assert.deepEqual(stub.messages, []);
      assert.equal(stub.statusBarItems[0]?.text, '$(database) Mnemo');
    } finally {
      await deactivate(running);
    }
  });
});

/** Why the real-binary test cannot run, or undefined when it can. */
function sidecarUnavailable(bin: string | undefined): string | undefined {
  if (bin === undefined || bin === '') {
    return 'MNEMO_BIN is not set (the justfile builds bin/mnemo and sets it)';
  }
  if (!fs.existsSync(bin)) {
    return `MNEMO_BIN=${bin} does not exist`;
  }
  const help = spawnSync(bin, ['serve', '--help'], { encoding: 'utf8', timeout: 10_000 });
  const text = `${help.stdout}${help.stderr}`;
  if (help.status !== 0 || !text.includes('--remote')) {
    return `${bin} has no "serve --remote" command yet`;
  }
  return undefined;
}

describe('extension with the real sidecar', () => {
  const bin = process.env.MNEMO_BIN !== undefined && process.env.MNEMO_BIN !== '' ? path.resolve(process.env.MNEMO_BIN) : undefined;
  const skip = sidecarUnavailable(bin);
  if (skip !== undefined) {
    process.stderr.write(`skipping the real-sidecar test: ${skip}\n`);
  }
  const saved: Record<string, string | undefined> = {};
  let root = '';

  before(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mnemo-ext-e2e-')));
    // The sidecar inherits the extension host's environment: keep it off the real home.
    for (const key of ['HOME', 'MNEMO_HOME', 'XDG_DATA_HOME', 'XDG_CONFIG_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME']) {
      saved[key] = process.env[key];
    }
    process.env.HOME = path.join(root, 'home');
    process.env.MNEMO_HOME = path.join(root, 'env-home-unused');
    process.env.XDG_DATA_HOME = path.join(root, 'home', '.local', 'share');
    process.env.XDG_CONFIG_HOME = path.join(root, 'home', '.config');
    process.env.XDG_STATE_HOME = path.join(root, 'home', '.local', 'state');
    process.env.XDG_CACHE_HOME = path.join(root, 'home', '.cache');
    fs.mkdirSync(process.env.HOME, { recursive: true });
  });

  after(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) {
        Reflect.deleteProperty(process.env, key);
      } else {
        process.env[key] = value;
      }
    }
    if (root !== '') {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('remembers what the editor does and puts it back in the editor', { skip: skip ?? false, timeout: 120_000 }, async () => {
    assert.ok(bin !== undefined);
    const folder = path.join(root, 'ws', 'billing-service');
    const file = path.join(folder, 'src', 'invoice.ts');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'export function total(lines: number[]): number {\n  return lines.reduce((a, b) => a + b, 0);\n}\n');
    const mnemoHome = path.join(root, 'mnemo-home');
    const running = activate(folder, {
      'mnemo.path': bin,
      'mnemo.remote': 'none',
      'mnemo.home': mnemoHome,
      'mnemo.idleMinutes': 0,
      // A second's window: the saves of a file within it are one observation.
      'mnemo.saveWindowSeconds': 1,
    });
    const { api } = running;
    let stopped = false;
    let pid: number | undefined;
    try {
      // initialize → SessionStart.
      assert.equal(await api.ready, true, channel().text());
      assert.equal(api.sidecar.state, 'running');
      pid = api.sidecar.pid;
      assert.equal(api.sidecar.initializeResult?.serverInfo?.name, 'mnemo');
      const session = api.sidecar.initialization;
      assert.ok(session !== undefined, 'the InitializeResult carries the mnemo session');
      assert.equal(session.project, 'billing-service');
      assert.ok(fs.existsSync(mnemoHome), 'mnemo.home became the sidecar MNEMO_HOME');
      assert.deepEqual(errors(), []);

      // didOpen + didSave (with the text) → PostToolUse of what the save changed; the
      // server compresses asynchronously.
      const doc = await openFile(file);
      doc.setText(doc.getText().replace('return lines.reduce(', 'return roundHalfEven(lines.reduce('));
      await doc.save();
      const touched = async (): Promise<Observation[]> => {
        const r = await api.sidecar.request<SearchResult>('mnemo/search', { files: ['invoice.ts'], limit: 50 });
        const ids = (r.hits ?? []).map((h) => h.id);
        if (ids.length === 0) {
          return [];
        }
        const got = await api.sidecar.request<GetObservationsResult>('mnemo/getObservations', { ids });
        return got.observations ?? [];
      };
      const lists = (o: Observation, key: 'filesRead' | 'filesModified'): boolean =>
        names(folder, file).some((n) => (o[key] ?? []).includes(n));
      const hit = await waitFor('the save of invoice.ts in search results', async () =>
        (await touched()).find((o) => lists(o, 'filesModified')),
      );
      assert.ok((await touched()).some((o) => lists(o, 'filesRead')), 'the open is remembered as a read');
      // It names the function the save changed, and a search for what it added finds it.
      assert.match(hit.title, /total/u, JSON.stringify(hit));
      assert.equal(hit.source, 'editor');
      const byIdentifier = await api.sidecar.request<SearchResult>('mnemo/search', { query: 'roundHalfEven', limit: 50 });
      assert.ok((byIdentifier.hits ?? []).some((h) => h.id === hit.id), JSON.stringify(byIdentifier));
      // The session is the editor's: vscode.env.sessionId is Mnemo's contentSessionId.
      assert.equal(hit.contentSessionId, env.sessionId);

      // Search Memory: a live picker; picking opens the full observation.
      const searching = stub.commands.get('mnemo.search')?.();
      const picker = await waitFor('the search picker', () => stub.quickPicks[0]);
      picker.type('invoice');
      const item = await waitFor('a result row for the saved file', () =>
        (picker as StubQuickPick<vscodeTypes.QuickPickItem & { hit: { id: number } }>).items.find((i) => i.hit.id === hit.id),
      );
      assert.match(item.description ?? '', new RegExp(`^#${hit.id} · `, 'u'));
      picker.pick([item]);
      await searching;
      const shown = stub.shownDocuments.at(-1);
      assert.ok(shown !== undefined, 'the observation was shown');
      assert.equal(shown.uri.scheme, 'mnemo');
      assert.equal(shown.languageId, 'markdown');
      assert.match(shown.getText(), /^# /u);
      assert.ok(shown.getText().includes(path.relative(folder, file)), shown.getText());

      // Remember Selection → mnemo/save; the id is reported and can be searched.
      const secret = 'Invoices are rounded half-even, per the Zanzibar tax rules.';
      const notes = path.join(folder, 'NOTES.md');
      fs.writeFileSync(notes, `# Notes\n${secret}\n`);
      const notesDoc = await openFile(notes);
      stub.edit(notesDoc, new Selection(new Position(1, 0), new Position(1, secret.length)));
      await stub.commands.get('mnemo.rememberSelection')?.();
      const remembered = stub.messages.find((m) => m.message.startsWith('Mnemo remembered this as #'));
      assert.ok(remembered !== undefined, JSON.stringify(stub.messages));
      assert.deepEqual(remembered.items, ['Open']);
      const savedId = Number(/#(\d+)/u.exec(remembered.message)?.[1]);
      const got = await api.sidecar.request<GetObservationsResult>('mnemo/getObservations', { ids: [savedId] });
      const savedObs = got.observations?.[0];
      assert.ok(savedObs !== undefined);
      assert.ok(JSON.stringify(savedObs).includes('Zanzibar'), JSON.stringify(savedObs));
      // The selection's place is its anchor: NOTES.md, line 2, columns 1 to the end.
      assert.deepEqual(savedObs.anchor, { file: 'NOTES.md', startLine: 2, endLine: 2, endColumn: secret.length });
      // A person saved it, not the agent.
      assert.equal(savedObs.savedBy, 'person');
      const savedFiles = [...(savedObs.filesRead ?? []), ...(savedObs.filesModified ?? [])];
      assert.ok(names(folder, notes).some((n) => savedFiles.includes(n)), JSON.stringify(savedObs));
      await waitFor('the remembered text in search results', async () => {
        const r = await api.sidecar.request<SearchResult>('mnemo/search', { query: 'Zanzibar tax', limit: 50 });
        return (r.hits ?? []).some((h) => h.id === savedId);
      });

      // Show Context → a markdown preview of what a new session would get.
      await stub.commands.get('mnemo.showContext')?.();
      const preview = stub.executed.find((e) => e.command === 'markdown.showPreview');
      assert.ok(preview !== undefined, 'the context opens in the markdown preview');
      const contextText = await api.documents.provideTextDocumentContent(
        preview.args[0] as vscodeTypes.Uri,
        new CancellationTokenSource().token as vscodeTypes.CancellationToken,
      );
      assert.match(contextText, /^# Mnemo context: billing-service$/mu);
      assert.doesNotMatch(contextText, /<\/?mnemo-context/u);

      // Status bar: the observation count from mnemo/status.
      await api.statusBar.refresh();
      const status = await api.sidecar.request<StatusResult>('mnemo/status', {});
      assert.ok(status.counts.observations >= 2, JSON.stringify(status));
      assert.equal(api.statusBar.text.split(' ')[1], status.counts.observations.toLocaleString('en-US'));

      // Forget… by typing the id; confirmed in a modal.
      stub.respond = (m) => (m.modal && m.items.includes('Forget') ? 'Forget' : undefined);
      const forgetting = stub.commands.get('mnemo.forget')?.();
      const forgetPicker = await waitFor('the forget picker', () => stub.quickPicks[1]);
      assert.equal(forgetPicker.canSelectMany, true);
      forgetPicker.type(`#${savedId}`);
      const forgetItem = await waitFor('the typed id as a row', () =>
        (forgetPicker as StubQuickPick<vscodeTypes.QuickPickItem & { hit: { id: number } }>).items.find(
          (i) => i.hit.id === savedId,
        ),
      );
      forgetPicker.pick([forgetItem]);
      await forgetting;
      assert.ok(
        stub.messages.some((m) => m.severity === 'info' && m.message === `Mnemo forgot #${savedId}.`),
        JSON.stringify(stub.messages),
      );
      const gone = await api.sidecar.request<GetObservationsResult>('mnemo/getObservations', { ids: [savedId] });
      assert.deepEqual(gone.observations ?? [], []);

      // Idle → mnemo/stop (the Stop stage), once.
      stub.configure({ 'mnemo.idleMinutes': 0.002 });
      await waitFor('the idle summary request', () =>
        channel().lines.find((l) => l.text.startsWith('Idle: Mnemo queued a summary')),
      );
      assert.equal(api.idle.idle, true);

      assert.deepEqual(errors(), [], 'no error popups along the way');
      assert.equal(
        channel().lines.filter((l) => l.text.includes('failed')).length,
        0,
        channel().text(),
      );

      // Deactivate → shutdown + exit: the sidecar exits 0.
      assert.ok(pid !== undefined);
      const exiting = pid;
      await deactivate(running);
      stopped = true;
      await waitFor('the sidecar process to exit', () => !alive(exiting), 10_000);
      await waitFor('the exit to be logged', () =>
        channel().lines.find((l) => l.text === 'Server process exited successfully'),
      );
    } finally {
      if (!stopped) {
        await deactivate(running);
      }
      // Never remove its data directory under a live process.
      if (pid !== undefined) {
        const last = pid;
        await waitFor('the sidecar process to exit', () => !alive(last), 10_000);
      }
    }
  });
});

describe('the Mnemo view, the viewer and the agent', () => {
  const bin = process.env.MNEMO_BIN !== undefined && process.env.MNEMO_BIN !== '' ? path.resolve(process.env.MNEMO_BIN) : undefined;
  const skip = sidecarUnavailable(bin);

  it('lists sessions and their records live, opens the viewer, gives tools, MCP and @mnemo', { skip: skip ?? false, timeout: 120_000 }, async (t) => {
    assert.ok(bin !== undefined);
    const root = tempDir(t, 'mnemo-ext-view-');
    const folder = path.join(root, 'ws', 'payroll');
    fs.mkdirSync(folder, { recursive: true });
    const mnemoHome = path.join(root, 'mnemo-home');
    const previousHome = process.env.HOME;
    process.env.HOME = path.join(root, 'home');
    fs.mkdirSync(process.env.HOME);
    t.after(() => {
      process.env.HOME = previousHome;
    });
    const running = activate(folder, { 'mnemo.path': bin, 'mnemo.remote': 'none', 'mnemo.home': mnemoHome, 'mnemo.idleMinutes': 0 });
    const { api } = running;
    const pid = await (async () => {
      assert.equal(await api.ready, true, channel().text());
      return api.sidecar.pid;
    })();
    try {
      assert.equal(await api.sidecar.watching, true, channel().text());
      assert.deepEqual(api.agent, {
        tools: ['mnemo_search', 'mnemo_timeline', 'mnemo_get_observations', 'mnemo_remember'],
        mcp: true,
        participant: true,
      });

      // The view: this window's session, marked as such.
      const tree = stub.treeViews.get('mnemo.memory') as vscodeTypes.TreeDataProvider<MemoryNode> | undefined;
      assert.ok(tree !== undefined, 'the view is registered');
      const sessions = await waitFor('this window in the view', async () => {
        const nodes = (await tree.getChildren()) ?? [];
        return nodes.some((n) => n.type === 'session' && n.row.current) ? nodes : undefined;
      });
      const mine = sessions.find((n) => n.type === 'session' && n.row.current);
      assert.ok(mine !== undefined);
      const mineItem = tree.getTreeItem(mine) as vscodeTypes.TreeItem;
      assert.match(mineItem.label as string, /^payroll · vscode \(this window\)$/u);
      assert.equal(mineItem.collapsibleState, 1);

      // A tool saves a memory; the change arrives as mnemo/changed and refreshes the view.
      const before = api.tree.refreshes;
      const remember = stub.tools.get('mnemo_remember');
      assert.ok(remember !== undefined);
      const saved = await remember.invoke({ input: { text: 'Payroll runs on the 25th; the bank cut-off is 14:00 UTC.', title: 'Payroll cut-off' } }, new CancellationTokenSource().token);
      const savedText = toolText(saved);
      const savedId = Number(/#(\d+)/u.exec(savedText)?.[1]);
      assert.ok(savedId > 0, savedText);
      await waitFor('the view to refresh after the change', () => api.tree.refreshes > before);

      // The other tools.
      const search = await waitFor('the saved memory found by mnemo_search', async () => {
        const text = toolText(await stub.tools.get('mnemo_search')?.invoke({ input: { query: 'bank cut-off' } }, new CancellationTokenSource().token));
        return text.includes(`#${savedId} · `) ? text : undefined;
      });
      assert.match(search, /Payroll cut-off/u);
      const full = toolText(await stub.tools.get('mnemo_get_observations')?.invoke({ input: { ids: [savedId, 99999] } }, new CancellationTokenSource().token));
      assert.match(full, /14:00 UTC/u);
      assert.match(full, /Mnemo has no observation #99999\./u);
      const timeline = toolText(await stub.tools.get('mnemo_timeline')?.invoke({ input: { anchor: savedId } }, new CancellationTokenSource().token));
      assert.match(timeline, new RegExp(`^> #${savedId} · `, 'mu'));
      await assert.rejects(
        async () => stub.tools.get('mnemo_get_observations')?.invoke({ input: { ids: [] } }, new CancellationTokenSource().token),
        /ids must list 1 to 20 observation ids/u,
      );

      // @mnemo: the question is a prompt of this window's session, the answer is memory.
      const participant = stub.participants.get('mnemo.chat');
      assert.ok(participant !== undefined);
      const said: string[] = [];
      const result = (await participant.handler(
        { prompt: 'when is the bank cut-off for payroll?' },
        { history: [] },
        { markdown: (text) => said.push(text), progress: () => undefined },
        new CancellationTokenSource().token,
      )) as { metadata: { recorded: boolean; promptNumber: number; ids: number[] } };
      assert.equal(result.metadata.recorded, true);
      assert.equal(result.metadata.promptNumber, 1);
      assert.ok(result.metadata.ids.includes(savedId), JSON.stringify(result));
      assert.match(said.join(''), new RegExp(`\\*\\*#${savedId}\\*\\* Payroll cut-off`, 'u'));

      // The prompt shows under the session, and opens as a document.
      const records = await waitFor('the prompt under this window\'s session', async () => {
        const nodes = (await tree.getChildren(mine)) ?? [];
        return nodes.some((n) => n.type === 'record' && n.row.kind === 'prompt') ? nodes : undefined;
      });
      const promptNode = records.find((n) => n.type === 'record' && n.row.kind === 'prompt');
      assert.ok(promptNode !== undefined);
      const promptItem = tree.getTreeItem(promptNode) as vscodeTypes.TreeItem;
      assert.equal(promptItem.label, 'when is the bank cut-off for payroll?');
      assert.equal(promptItem.command?.command, 'mnemo.openRecord');
      await stub.commands.get('mnemo.openRecord')?.(...((promptItem.command.arguments ?? []) as unknown[]));
      const shown = stub.shownDocuments.at(-1);
      assert.ok(shown !== undefined);
      assert.equal(shown.uri.scheme, 'mnemo');
      assert.match(shown.getText(), /^# Prompt 1$/mu);
      assert.match(shown.getText(), /^> when is the bank cut-off for payroll\?$/mu);

      // MCP: `mnemo mcp` with the sidecar's program and data directory.
      const mcp = stub.mcpProviders.get('mnemo')?.provideMcpServerDefinitions(new CancellationTokenSource().token);
      assert.equal(mcp?.length, 1);
      const server = mcp[0];
      assert.ok(server !== undefined);
      assert.equal(server.command, bin);
      assert.deepEqual(server.args, ['mcp']);
      assert.deepEqual(server.env, { MNEMO_HOME: mnemoHome });
      assert.equal(server.cwd?.fsPath, folder);

      // The viewer: mnemo/viewer's address, opened in the browser; it lets the token in.
      await stub.commands.get('mnemo.openViewer')?.();
      const opened = stub.opened.at(-1);
      assert.ok(opened !== undefined, JSON.stringify(stub.messages));
      assert.equal(opened.scheme, 'http');
      assert.match(opened.authority, /^127\.0\.0\.1:\d+$/u);
      const res = await fetch(`http://${opened.authority}/?${opened.query}`, { redirect: 'manual' });
      assert.equal(res.status, 303);
      assert.doesNotMatch(channel().text(), /token/u, 'the token is never logged');

      assert.deepEqual(errors(), []);
    } finally {
      await deactivate(running);
      if (pid !== undefined) {
        await waitFor('the sidecar to exit', () => !alive(pid), 10_000);
      }
    }
  });
});

/** The text of a language model tool's result. */
function toolText(result: unknown): string {
  const content = (result as { content?: { value?: string }[] } | undefined)?.content ?? [];
  return content.map((p) => p.value ?? '').join('');
}

describe('extension recovering', () => {
  const bin = process.env.MNEMO_BIN !== undefined && process.env.MNEMO_BIN !== '' ? path.resolve(process.env.MNEMO_BIN) : undefined;
  const skip = sidecarUnavailable(bin);

  it('fixing mnemo.path starts the sidecar; a crash is restarted quietly', { skip: skip ?? false, timeout: 120_000 }, async (t) => {
    assert.ok(bin !== undefined);
    const root = tempDir(t, 'mnemo-ext-recover-');
    const folder = path.join(root, 'ws', 'recover');
    fs.mkdirSync(folder, { recursive: true });
    const previousHome = process.env.HOME;
    process.env.HOME = path.join(root, 'home');
    t.after(() => {
      process.env.HOME = previousHome;
    });
    const settings = { 'mnemo.remote': 'none', 'mnemo.home': path.join(root, 'mnemo-home'), 'mnemo.idleMinutes': 0 };
    const running = activate(folder, { ...settings, 'mnemo.path': path.join(root, 'not-yet') });
    const pids: number[] = [];
    try {
      assert.equal(await running.api.ready, false);
      assert.equal(errors().length, 1);

      stub.configure({ 'mnemo.path': bin });
      await waitFor('the sidecar to run', () => running.api.sidecar.state === 'running');
      assert.equal(running.api.sidecar.initializeResult?.serverInfo?.name, 'mnemo');
      const first = running.api.sidecar.pid;
      assert.ok(first !== undefined);
      pids.push(first);

      process.kill(first, 'SIGKILL');
      const second = await waitFor('a restarted sidecar', () => {
        const pid = running.api.sidecar.pid;
        return running.api.sidecar.state === 'running' && pid !== undefined && pid !== first ? pid : undefined;
      });
      pids.push(second);
      const status = await running.api.sidecar.request<StatusResult>('mnemo/status', {});
      assert.equal(status.protocolVersion, 1);
      assert.match(channel().text(), /The Mnemo sidecar exited; restarting it\./u);
      assert.equal(errors().length, 1, 'a restart shows no message');
    } finally {
      await deactivate(running);
      for (const pid of pids) {
        await waitFor('the sidecar to exit', () => !alive(pid), 10_000);
      }
    }
  });
});

describe('extension with the shared daemon', () => {
  const bin = process.env.MNEMO_BIN !== undefined && process.env.MNEMO_BIN !== '' ? path.resolve(process.env.MNEMO_BIN) : undefined;
  const skip = sidecarUnavailable(bin);

  it('remote=auto: the sidecar forwards to a daemon that outlives the editor and tells it the changes', { skip: skip ?? false, timeout: 120_000 }, async (t) => {
    assert.ok(bin !== undefined);
    const root = tempDir(t, 'mnemo-ext-daemon-');
    const home = path.join(root, 'home');
    const mnemoHome = path.join(root, 'mnemo-home');
    fs.mkdirSync(home);
    const folder = path.join(root, 'ws', 'ledger');
    const file = path.join(folder, 'ledger.ts');
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(file, 'export const balance = 0;\n');
    // The CLI below, like the sidecar and the daemon it starts, stays off the real home.
    const env = { ...process.env, HOME: home, MNEMO_HOME: mnemoHome, XDG_DATA_HOME: path.join(home, '.local', 'share') };
    const previousHome = process.env.HOME;
    process.env.HOME = home;
    t.after(() => {
      process.env.HOME = previousHome;
    });

    const running = activate(folder, { 'mnemo.path': bin, 'mnemo.remote': 'auto', 'mnemo.home': mnemoHome, 'mnemo.idleMinutes': 0 });
    let daemonPid: number | undefined;
    try {
      assert.equal(await running.api.ready, true, channel().text());
      const sidecarPid = running.api.sidecar.pid;
      const status = await running.api.sidecar.request<StatusResult>('mnemo/status', {});
      daemonPid = status.pid;
      assert.notEqual(daemonPid, sidecarPid, 'the memory lives in the daemon, not in the sidecar');
      assert.equal(status.dataDir, mnemoHome);

      // The daemon tells the editor's connection each change, through the sidecar.
      assert.equal(await running.api.sidecar.watching, true, channel().text());
      const refreshes = running.api.tree.refreshes;
      await (await openFile(file)).save();
      await waitFor('the view to refresh on the daemon\'s mnemo/changed', () => running.api.tree.refreshes > refreshes);
      // Another client of the same daemon (the CLI) sees what the editor did.
      await waitFor('the save through the CLI', () => {
        const out = spawnSync(bin, ['search', '--json', '--file', 'ledger.ts'], { encoding: 'utf8', env, timeout: 10_000 });
        if (out.status !== 0) {
          return undefined;
        }
        const result = JSON.parse(out.stdout) as SearchResult;
        return (result.hits ?? []).some((h) => (h.files ?? []).some((f) => f.endsWith('ledger.ts')));
      });

      assert.ok(sidecarPid !== undefined);
      await deactivate(running);
      await waitFor('the sidecar to exit', () => !alive(sidecarPid), 10_000);
      assert.ok(alive(daemonPid), 'the daemon outlives the editor');
      assert.deepEqual(errors(), []);
    } finally {
      if (running.api.sidecar.state !== 'stopped') {
        await deactivate(running);
      }
      spawnSync(bin, ['daemon', 'stop'], { encoding: 'utf8', env, timeout: 20_000 });
      if (daemonPid !== undefined) {
        const pid = daemonPid;
        await waitFor('the daemon to stop', () => !alive(pid), 20_000);
      }
    }
  });
});

/** How Mnemo may name a file of the project: relative to its root, or absolute. */
function names(folder: string, file: string): string[] {
  return [path.relative(folder, file).split(path.sep).join('/'), file];
}

function openFile(file: string): Promise<TextDocument> {
  return workspace.openTextDocument(Uri.file(file));
}
