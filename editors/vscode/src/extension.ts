// tinycoder for VS Code: starts `tinycoder lsp` over stdio for Rust and Python files.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from 'vscode-languageclient/node';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration('tinycoder');
  const command = config.get<string>('serverPath', 'tinycoder');
  const serverOptions: ServerOptions = { command, args: ['lsp'], transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ language: 'rust' }, { language: 'python' }],
    initializationOptions: config.get<object>('settings', {}),
    synchronize: { configurationSection: 'tinycoder' },
  };
  client = new LanguageClient('tinycoder', 'tinycoder', serverOptions, clientOptions);
  // The server asks for a line of text (a hint after failed attempts) through tinycoder/inputText.
  client.registerFeature({
    fillClientCapabilities(capabilities) {
      capabilities.experimental = { ...(capabilities.experimental ?? {}), tinycoderInputText: true };
    },
    initialize() {},
    getState() { return { kind: 'static' }; },
    clear() {},
  });
  client.onRequest('tinycoder/inputText', async (p: { prompt: string }) =>
    (await vscode.window.showInputBox({ prompt: p.prompt, ignoreFocusOut: true })) || null);
  await client.start();

  const output = vscode.window.createOutputChannel('tinycoder chat');
  context.subscriptions.push(
    output,
    client.onNotification('tinycoder/chatDelta', (p: { delta: string }) => output.append(p.delta)),
    vscode.commands.registerCommand('tinycoder.chat', async () => {
      const message = await vscode.window.showInputBox({ prompt: 'Ask tinycoder about this file' });
      const editor = vscode.window.activeTextEditor;
      if (!message || !client) { return; }
      output.show(true);
      output.appendLine(`\n> ${message}`);
      const params: Record<string, unknown> = { message };
      if (editor) {
        params.textDocument = { uri: editor.document.uri.toString() };
        if (!editor.selection.isEmpty) { params.range = client.code2ProtocolConverter.asRange(editor.selection); }
      }
      try {
        await client.sendRequest('tinycoder/chat', params);
      } catch (e) {
        vscode.window.showErrorMessage(`tinycoder: ${(e as Error).message}`);
      }
    }),
  );
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
