// A client that no one here wrote, vscode-jsonrpc from npm, drives
// `mnemo serve --stdio` over real stdio, in-process (--remote=none) and
// forwarded to an auto-started daemon (--remote=auto): initialize →
// mnemo/userPromptSubmit → textDocument/didSave → mnemo/search →
// shutdown/exit. MNEMO_BIN names the binary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import rpc from 'vscode-jsonrpc/node';

const bin = process.env.MNEMO_BIN;

for (const remote of ['none', 'auto']) {
test(`vscode-jsonrpc drives mnemo serve --stdio --remote=${remote}`, { skip: !bin && 'MNEMO_BIN is not set' }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'mnemo-node-'));
  const project = join(root, 'billing-api');
  mkdirSync(join(project, '.git'), { recursive: true });
  const home = join(root, 'home');
  mkdirSync(home);
  const child = spawn(bin, ['serve', '--stdio', `--remote=${remote}`], {
    env: { ...process.env, MNEMO_HOME: join(root, 'mnemo'), HOME: home, XDG_DATA_HOME: join(home, '.local', 'share') },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const conn = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin));
  conn.listen();
  try {
    const init = await conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri: `file://${project}`,
      capabilities: {},
      initializationOptions: { clientKind: 'node-test', protocolVersion: 1, contentSessionId: 'node-session-1', cwd: project, saveWindowSeconds: -1 },
    });
    assert.equal(init.serverInfo.name, 'mnemo');
    assert.equal(init.capabilities.textDocumentSync.save.includeText, true);
    assert.equal(init.mnemo.project, 'billing-api');
    assert.match(init.mnemo.context, /<mnemo-context/);
    await conn.sendNotification('initialized', {});

    const prompt = await conn.sendRequest('mnemo/userPromptSubmit', {
      contentSessionId: 'node-session-1', cwd: project, prompt: 'tidy up the invoice PDF layout',
    });
    assert.equal(prompt.promptNumber, 1);
    assert.equal(prompt.private, false);

    // Every save on its own (no save window), with the text the server asks for.
    await conn.sendNotification('textDocument/didSave', {
      textDocument: { uri: `file://${project}/billing/pdf_layout.go` },
      text: 'package billing\n\nfunc pageMargins() (top, bottom int) { return 36, 48 }\n',
    });

    // The memory agent works in the background: poll with a deadline.
    let hits = [];
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const res = await conn.sendRequest('mnemo/search', { files: ['pdf_layout.go'] });
      hits = res.hits;
      if (hits.length > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(hits.length, 1, 'the save was not found');
    assert.equal(hits[0].project, 'billing-api');
    assert.deepEqual(hits[0].files, ['billing/pdf_layout.go']);

    await assert.rejects(conn.sendRequest('mnemo/search', { limit: 'many' }), (err) => {
      assert.equal(err.code, -32602);
      assert.match(err.message, /limit/);
      return true;
    });

    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
    assert.equal(await exited, 0, `mnemo exited non-zero; stderr:\n${stderr}`);
  } finally {
    conn.dispose();
    child.kill();
    if (remote === 'auto') {
      // The forwarder started a daemon for this home: stop it.
      const stop = spawn(bin, ['daemon', 'stop'], { env: { ...process.env, MNEMO_HOME: join(root, 'mnemo'), HOME: home }, stdio: 'ignore' });
      await new Promise((resolve) => stop.on('exit', resolve));
    }
    rmSync(root, { recursive: true, force: true });
  }
});
}
