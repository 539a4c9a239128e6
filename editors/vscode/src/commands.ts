// The palette and context-menu commands: each builds its arguments (commandArgs)
// and runs the server's command; results arrive as workspace/applyEdit
// (VS Code's refactor preview), chat deltas or messages.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';
import {
  askArgs,
  cancelArgs,
  commitArgs,
  DocumentRef,
  fixArgsAt,
  jobIdOf,
  pickFixCommand,
  runArgs,
  ServerCommand,
  targetArgs,
} from './commandArgs';
import type { CodeAction, Command, Range } from './lspTypes';
import type { ChatViewProvider } from './chatView';
import { ClientCommand } from './commandIds';

export { ClientCommand };

export interface CommandContext {
  client: () => LanguageClient | undefined;
  chat: ChatViewProvider;
  /** Job ids still running (the progress tokens), oldest first. */
  runningJobs: () => string[];
}


/** A string argument given bare or as `{key: "…"}` (keybindings and scripts pass either). */
function stringArg(arg: unknown, key: string): string | undefined {
  if (typeof arg === 'string') {
    return arg;
  }
  if (typeof arg === 'object' && arg !== null && typeof (arg as Record<string, unknown>)[key] === 'string') {
    return (arg as Record<string, string>)[key];
  }
  return undefined;
}

export function registerCommands(ctx: CommandContext): vscode.Disposable[] {
  let lastJob: string | undefined;

  const running = (): LanguageClient | undefined => {
    const client = ctx.client();
    if (!client || !client.isRunning()) {
      void vscode.window.showWarningMessage('tinycoder: the server is not running (see the tinycoder output).');
      return undefined;
    }
    return client;
  };

  const execute = async (command: string, args: unknown[]): Promise<unknown> => {
    const client = running();
    if (!client) {
      return undefined;
    }
    try {
      const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
      lastJob = jobIdOf(result) ?? lastJob;
      return result;
    } catch (e) {
      void vscode.window.showErrorMessage(`${command}: ${(e as Error).message}`);
      return undefined;
    }
  };

  const editorTarget = (): { editor: vscode.TextEditor; doc: DocumentRef; range: Range } | undefined => {
    const editor = vscode.window.activeTextEditor;
    const client = ctx.client();
    if (!editor || editor.document.uri.scheme !== 'file') {
      void vscode.window.showWarningMessage('tinycoder: open a file of the workspace first.');
      return undefined;
    }
    const doc = { uri: editor.document.uri.toString(), version: editor.document.version };
    const range = client
      ? (client.code2ProtocolConverter.asRange(editor.selection))
      : {
          start: { line: editor.selection.start.line, character: editor.selection.start.character },
          end: { line: editor.selection.end.line, character: editor.selection.end.character },
        };
    return { editor, doc, range };
  };

  const onTarget = (command: string) => async () => {
    const t = editorTarget();
    if (t) {
      await execute(command, [targetArgs(t.doc, t.range)]);
    }
  };

  const fix = async () => {
    const client = running();
    const t = editorTarget();
    if (!client || !t) {
      return;
    }
    const line = t.editor.selection.active.line;
    const diagnostics = vscode.languages.getDiagnostics(t.editor.document.uri).filter((d) => d.range.start.line <= line && d.range.end.line >= line);
    let command: Command | undefined;
    if (diagnostics.length > 0) {
      const lsp = await client.code2ProtocolConverter.asDiagnostics(diagnostics);
      const actions = await client.sendRequest<(CodeAction | Command)[] | null>('textDocument/codeAction', {
        textDocument: { uri: t.doc.uri },
        range: lsp[0].range,
        context: { diagnostics: lsp, only: ['quickfix'] },
      });
      command = pickFixCommand(actions);
    }
    await execute(ServerCommand.fix, command?.arguments ?? [fixArgsAt(t.doc, t.range)]);
  };

  const edit = async (arg?: unknown) => {
    const t = editorTarget();
    if (!t) {
      return;
    }
    let instruction = stringArg(arg, 'instruction');
    if (instruction === undefined) {
      instruction = await vscode.window.showInputBox({
        title: 'tinycoder: edit the selection',
        prompt: 'How should the selection change? (empty: choose from the presets)',
        ignoreFocusOut: true,
      });
      if (instruction === undefined) {
        return;
      }
    }
    await execute(ServerCommand.edit, [targetArgs(t.doc, t.range, instruction)]);
  };

  const explain = async () => {
    const t = editorTarget();
    if (!t) {
      return;
    }
    const where = `${vscode.workspace.asRelativePath(t.editor.document.uri)}:${t.range.start.line + 1}`;
    ctx.chat.note(`Explain ${where}`);
    await ctx.chat.reveal();
    await execute(ServerCommand.explain, [targetArgs(t.doc, t.range)]);
  };

  const ask = async (arg?: unknown) => {
    const question =
      stringArg(arg, 'question') ??
      (await vscode.window.showInputBox({ title: 'tinycoder: ask', prompt: 'A question about the project', ignoreFocusOut: true }));
    const editor = vscode.window.activeTextEditor;
    const doc = editor && editor.document.uri.scheme === 'file' ? { uri: editor.document.uri.toString() } : undefined;
    const args = askArgs(question, doc);
    if (!args) {
      return;
    }
    ctx.chat.note(args.question);
    await ctx.chat.reveal();
    await execute(ServerCommand.ask, [args]);
  };

  const run = async (arg?: unknown) => {
    const request =
      stringArg(arg, 'request') ??
      (await vscode.window.showInputBox({
        title: 'tinycoder: run a request',
        prompt: 'What should change? (it may span files)',
        ignoreFocusOut: true,
      }));
    const args = runArgs(request);
    if (args) {
      await execute(ServerCommand.run, [args]);
    }
  };

  const cancel = async (arg?: unknown) => {
    const jobs = ctx.runningJobs();
    const id = stringArg(arg, 'jobId') ?? jobs[jobs.length - 1] ?? lastJob;
    if (!id) {
      void vscode.window.showInformationMessage('tinycoder: no job to cancel.');
      return;
    }
    const result = (await execute(ServerCommand.cancel, [cancelArgs(id)])) as { cancelled?: boolean } | undefined;
    if (result) {
      void vscode.window.showInformationMessage(result.cancelled ? 'tinycoder: cancelled.' : 'tinycoder: nothing to cancel.');
    }
  };

  const undo = async () => {
    const result = (await execute(ServerCommand.undo, [])) as { undone?: boolean; message?: string } | undefined;
    if (result && result.undone === false) {
      void vscode.window.showInformationMessage(`tinycoder: ${result.message ?? 'nothing to undo'}`);
    }
  };

  const commit = async (arg?: unknown) => {
    const message =
      stringArg(arg, 'message') ??
      (await vscode.window.showInputBox({
        title: 'tinycoder: commit the last change',
        prompt: 'Commit message (empty: written from the change)',
        ignoreFocusOut: true,
      }));
    if (message === undefined) {
      return;
    }
    const result = (await execute(ServerCommand.commit, commitArgs(message))) as { commit?: string; subject?: string } | undefined;
    if (result) {
      void vscode.window.showInformationMessage(`tinycoder: committed ${String(result.commit ?? '').slice(0, 10)} ${result.subject ?? ''}`);
    }
  };

  const chat = async (arg?: unknown) => {
    await ctx.chat.reveal();
    const message = stringArg(arg, 'message');
    if (message) {
      await ctx.chat.send(message);
    }
  };

  return [
    vscode.commands.registerCommand(ClientCommand.fix, fix),
    vscode.commands.registerCommand(ClientCommand.edit, edit),
    vscode.commands.registerCommand(ClientCommand.document, onTarget(ServerCommand.document)),
    vscode.commands.registerCommand(ClientCommand.generateTests, onTarget(ServerCommand.generateTests)),
    vscode.commands.registerCommand(ClientCommand.explain, explain),
    vscode.commands.registerCommand(ClientCommand.ask, ask),
    vscode.commands.registerCommand(ClientCommand.run, run),
    vscode.commands.registerCommand(ClientCommand.runTests, () => execute(ServerCommand.runTests, [])),
    vscode.commands.registerCommand(ClientCommand.cancel, cancel),
    vscode.commands.registerCommand(ClientCommand.undo, undo),
    vscode.commands.registerCommand(ClientCommand.commit, commit),
    vscode.commands.registerCommand(ClientCommand.index, () => execute(ServerCommand.index, [])),
    vscode.commands.registerCommand(ClientCommand.chat, chat),
  ];
}
