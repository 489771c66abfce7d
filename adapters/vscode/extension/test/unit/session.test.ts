import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contentSessionId } from '../../src/session';

describe('contentSessionId', () => {
  it('uses the editor session id VS Code gives', () => {
    assert.equal(contentSessionId('6f1c9a2e-1b7d-4f55-9b1a-2d3c4e5f6a7b1732280000000', () => 'x'), '6f1c9a2e-1b7d-4f55-9b1a-2d3c4e5f6a7b1732280000000');
  });
  it('replaces the placeholder of a VS Code with telemetry off', () => {
    assert.equal(contentSessionId('someValue.sessionId', () => 'abc'), 'vscode-abc');
  });
  it('gives two windows with the placeholder two sessions', () => {
    assert.notEqual(contentSessionId('someValue.sessionId'), contentSessionId('someValue.sessionId'));
  });
  it('replaces an empty id', () => {
    assert.equal(contentSessionId('  ', () => 'e'), 'vscode-e');
    assert.equal(contentSessionId(undefined, () => 'u'), 'vscode-u');
  });
});
