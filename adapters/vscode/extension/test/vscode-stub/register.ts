// Makes `require('vscode')` load the stub in this process (VS Code's extension host
// provides the module; plain Node has none). Import this before the code under test.

import Module from 'node:module';

interface Resolver {
  _resolveFilename(request: string, ...rest: unknown[]): string;
}

const stubPath = require.resolve('./vscode');
const resolver = Module as unknown as Resolver;
const original = resolver._resolveFilename.bind(Module);
resolver._resolveFilename = (request: string, ...rest: unknown[]): string =>
  request === 'vscode' ? stubPath : original(request, ...rest);
