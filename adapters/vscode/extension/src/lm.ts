// Mnemo for the editor's agent, where the editor has the APIs (each one is looked for
// before it is used, so that the extension runs on every VS Code its engine allows):
// the language model tools (vscode.lm.registerTool, VS Code 1.95), Mnemo's MCP server
// (vscode.lm.registerMcpServerDefinitionProvider, 1.101: `mnemo mcp` with the program
// the sidecar runs) and the `@mnemo` chat participant (vscode.chat).

import * as path from 'node:path';
import * as vscode from 'vscode';
import { Tool, chatAnswer, chatSearch, invocationMessage, runTool } from './agentTools';
import { mcpLaunch } from './launch';
import { Method, type UserPromptParams, type UserPromptResult } from './protocol';
import { type Sidecar, describe } from './sidecar';

/** The MCP provider's id (package.json `contributes.mcpServerDefinitionProviders`). */
export const MCP_PROVIDER_ID = 'mnemo';
/** The chat participant's id (package.json `contributes.chatParticipants`). */
export const PARTICIPANT_ID = 'mnemo.chat';

// The parts of the API newer than the engine this extension declares (@types/vscode
// follows the engine): typed here as VS Code documents them.

interface ToolInvocationOptions {
  input: unknown;
}

interface LanguageModelTool {
  invoke(options: ToolInvocationOptions, token: vscode.CancellationToken): Promise<unknown>;
  prepareInvocation?(options: ToolInvocationOptions, token: vscode.CancellationToken): { invocationMessage: string };
}

interface McpServerDefinitionProvider {
  onDidChangeMcpServerDefinitions: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): unknown[];
}

interface NewApi {
  lm?: {
    registerTool?: (name: string, tool: LanguageModelTool) => vscode.Disposable;
    registerMcpServerDefinitionProvider?: (id: string, provider: McpServerDefinitionProvider) => vscode.Disposable;
  };
  chat?: {
    createChatParticipant?: typeof vscode.chat.createChatParticipant;
  };
  LanguageModelToolResult?: new (content: unknown[]) => unknown;
  LanguageModelTextPart?: new (value: string) => unknown;
  McpStdioServerDefinition?: new (
    label: string,
    command: string,
    args?: string[],
    env?: Record<string, string | number | null>,
    version?: string,
  ) => { cwd?: vscode.Uri };
}

/** What was registered, for the log and the tests. */
export interface AgentFeatures {
  tools: string[];
  mcp: boolean;
  participant: boolean;
}

/** Registers what this VS Code supports; the rest is said once in the log. */
export function registerAgentFeatures(
  sidecar: Sidecar,
  extensionPath: string,
  version: string,
): { features: AgentFeatures; disposables: { dispose(): unknown }[] } {
  const api = vscode as unknown as NewApi;
  const disposables: { dispose(): unknown }[] = [];
  const features: AgentFeatures = { tools: [], mcp: false, participant: false };

  // A function that is there may still refuse to run: a proposed API this extension may
  // not use throws when called. Either way the feature is left out and the rest goes on.
  const attempt = (what: string, register: () => void): boolean => {
    try {
      register();
      return true;
    } catch (error) {
      sidecar.output.info(`${what} is not available in this VS Code: ${describe(error)}`);
      return false;
    }
  };

  const { lm, chat, LanguageModelToolResult, LanguageModelTextPart, McpStdioServerDefinition } = api;
  if (lm?.registerTool !== undefined && LanguageModelToolResult !== undefined && LanguageModelTextPart !== undefined) {
    const registerTool = lm.registerTool.bind(lm);
    attempt('vscode.lm.registerTool', () => {
      for (const name of Object.values(Tool)) {
        disposables.push(
          registerTool(name, {
            prepareInvocation: (options) => ({ invocationMessage: invocationMessage(name, options.input) }),
            invoke: async (options) => {
              const text = await runTool(name, options.input, {
                request: (method, params) => sidecar.request(method, params),
                cwd: sidecar.cwd,
              });
              return new LanguageModelToolResult([new LanguageModelTextPart(text)]);
            },
          }),
        );
        features.tools.push(name);
      }
    });
  }

  if (lm?.registerMcpServerDefinitionProvider !== undefined && McpStdioServerDefinition !== undefined) {
    const registerMcp = lm.registerMcpServerDefinitionProvider.bind(lm);
    const changed = new vscode.EventEmitter<void>();
    features.mcp = attempt('vscode.lm.registerMcpServerDefinitionProvider', () => {
      disposables.push(
        registerMcp(MCP_PROVIDER_ID, {
          onDidChangeMcpServerDefinitions: changed.event,
          provideMcpServerDefinitions: () => {
            const launch = sidecar.launch;
            if (launch === undefined) {
              return [];
            }
            const mcp = mcpLaunch(launch.command, launch.env);
            const server = new McpStdioServerDefinition('Mnemo', mcp.command, mcp.args, mcp.env, version);
            if (sidecar.cwd !== undefined) {
              server.cwd = vscode.Uri.file(sidecar.cwd);
            }
            return [server];
          },
        }),
      );
    });
    disposables.push(
      changed,
      sidecar.onDidChangeState((state) => {
        if (state === 'running') {
          changed.fire();
        }
      }),
    );
  }

  if (chat?.createChatParticipant !== undefined) {
    const createChatParticipant = chat.createChatParticipant.bind(chat);
    features.participant = attempt('vscode.chat.createChatParticipant', () => {
      const participant = createChatParticipant(PARTICIPANT_ID, (request, _context, stream) =>
        answer(sidecar, request.prompt, stream),
      );
      participant.iconPath = vscode.Uri.file(path.join(extensionPath, 'media', 'mnemo.svg'));
      disposables.push(participant);
    });
  }

  const said = [
    features.tools.length > 0 ? `tools ${features.tools.join(', ')}` : 'no language model tools (this VS Code has no vscode.lm.registerTool)',
    features.mcp ? 'the MCP server' : 'no MCP server provider (VS Code 1.101 or later has it)',
    features.participant ? '@mnemo in the chat' : 'no chat participant (this VS Code has no vscode.chat)',
  ];
  sidecar.output.info(`Agent features: ${said.join('; ')}`);
  return { features, disposables };
}

/**
 * The `@mnemo` participant: the question is a prompt of this window's session (the
 * UserPromptSubmit stage, so that its summary knows of it), and the answer is what
 * memory has that matches it. No model is asked.
 */
export async function answer(sidecar: Sidecar, prompt: string, stream: Pick<vscode.ChatResponseStream, 'markdown' | 'progress'>): Promise<vscode.ChatResult> {
  if (sidecar.state !== 'running' || sidecar.cwd === undefined) {
    stream.markdown('Mnemo is not running: open a folder, or run **Mnemo: Restart**.');
    return { metadata: { recorded: false } };
  }
  stream.progress('Searching memory…');
  let recorded: UserPromptResult | undefined;
  try {
    const params: UserPromptParams = {
      contentSessionId: sidecar.contentSessionId,
      cwd: sidecar.cwd,
      prompt,
      platform: 'vscode',
    };
    recorded = await sidecar.request<UserPromptResult>(Method.userPromptSubmit, params);
  } catch (error) {
    sidecar.output.warn(`@mnemo: the prompt was not recorded: ${describe(error)}`);
  }
  try {
    const project = sidecar.initialization?.project;
    const { hits, everywhere } = await chatSearch((method, params) => sidecar.request(method, params), prompt, project);
    stream.markdown(chatAnswer(prompt, hits, { project, everywhere }));
    return { metadata: { recorded: recorded !== undefined, promptNumber: recorded?.promptNumber, ids: hits.map((h) => h.id) } };
  } catch (error) {
    sidecar.output.error(`@mnemo: search failed: ${describe(error)}`);
    stream.markdown(`Mnemo could not search its memory: ${describe(error)}`);
    return { errorDetails: { message: describe(error) }, metadata: { recorded: recorded !== undefined } };
  }
}
