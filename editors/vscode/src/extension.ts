// tinycoder for VS Code: starts `tinycoder lsp` over stdio for Rust and Python
// files and puts its flows in the palette, the editor menu, a chat view and the
// status bar, and the model's suggestions as ghost text (inline completion).
// Every change to files arrives from the server as workspace/applyEdit.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, StaticFeature, TransportKind } from 'vscode-languageclient/node';
import type { ChatDeltaParams } from './chatTranscript';
import { ChatViewProvider } from './chatView';
import { ClientCommand, registerCommands } from './commands';
import { ConfigurationEntry, summaryFromEntries, summaryFromSettings } from './configurationSummary';
import { trackProgress } from './progress';
import { ProgressTracker } from './progressTracker';
import { resolveServerPath } from './serverPath';
import { mergeSettings, TomlTable } from './settings';
import { StatusBar } from './statusBar';
import { SuggestionSetting, suggestionsOn, toggled, toggleLabel } from './suggestions';

let client: LanguageClient | undefined;
const MENU_COMMAND = ClientCommand.menu;
const RESTART_COMMAND = ClientCommand.restart;

/** The server's settings: `tinycoder.settings` with the typed settings over it. */
function effectiveSettings(): TomlTable {
  const config = vscode.workspace.getConfiguration('tinycoder');
  return mergeSettings(config.get('settings', {}), {
    backendKind: config.get<string>('backend.kind'),
    backendUrl: config.get<string>('backend.url'),
    coderModel: config.get<string>('models.coder.name'),
  });
}

/** `tinycoder.suggestions.enabled` for `document`'s language (or in general). */
function suggestionSetting(document?: vscode.TextDocument): SuggestionSetting {
  const config = vscode.workspace.getConfiguration('tinycoder', document);
  const inspected = config.inspect<boolean>('suggestions.enabled');
  return {
    effective: config.get<boolean>('suggestions.enabled'),
    global: inspected?.globalValue,
    language: inspected?.globalLanguageValue,
  };
}

/** Flips ghost text for every language, or for the active editor's language. */
async function toggleSuggestions(forLanguage: boolean): Promise<void> {
  const document = vscode.window.activeTextEditor?.document;
  if (forLanguage && !document) {
    void vscode.window.showInformationMessage('tinycoder: open a file to toggle suggestions for its language.');
    return;
  }
  const change = toggled(suggestionSetting(document), forLanguage);
  const config = vscode.workspace.getConfiguration('tinycoder', forLanguage ? document : undefined);
  await config.update('suggestions.enabled', change.value, vscode.ConfigurationTarget.Global, change.forLanguage);
  const where = change.forLanguage ? ` in ${document?.languageId}` : '';
  void vscode.window.setStatusBarMessage(`tinycoder: suggestions ${change.value ? 'on' : 'off'}${where}`, 3000);
}

/** Announces that this client answers `tinycoder/inputText` (the agent's free-text questions). */
const inputTextFeature: StaticFeature = {
  fillClientCapabilities(capabilities) {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, tinycoderInputText: true };
  },
  initialize() {},
  getState() {
    return { kind: 'static' };
  },
  clear() {},
};

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('tinycoder');
  const tracker = new ProgressTracker();
  const status = new StatusBar(MENU_COMMAND);
  const chat = new ChatViewProvider(context.extensionUri, () => client);
  context.subscriptions.push(
    output,
    status,
    vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    ...registerCommands({ client: () => client, chat, runningJobs: () => tracker.running() }),
    vscode.commands.registerCommand(MENU_COMMAND, () => showMenu(output)),
    vscode.commands.registerCommand(ClientCommand.toggleSuggestions, () => toggleSuggestions(false)),
    vscode.commands.registerCommand(ClientCommand.toggleSuggestionsForLanguage, () => toggleSuggestions(true)),
    vscode.commands.registerCommand(RESTART_COMMAND, () => start()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('tinycoder')) {
        return;
      }
      if (e.affectsConfiguration('tinycoder.serverPath') || !client?.isRunning()) {
        void start();
        return;
      }
      // The server reloads its configuration from these (bare, tinycoder.toml-shaped) settings.
      void client.sendNotification('workspace/didChangeConfiguration', { settings: effectiveSettings() }).then(() => refreshSummary());
    }),
  );

  async function refreshSummary(): Promise<void> {
    try {
      const result = await client?.sendRequest<{ entries: ConfigurationEntry[] }>('tinycoder/configuration', {});
      status.setSummary(result ? summaryFromEntries(result.entries) : summaryFromSettings(effectiveSettings()));
    } catch {
      status.setSummary(summaryFromSettings(effectiveSettings()));
    }
  }

  async function start(): Promise<void> {
    if (client) {
      const old = client;
      client = undefined;
      await old.stop().catch(() => undefined);
    }
    const config = vscode.workspace.getConfiguration('tinycoder');
    const configured = config.get<string>('serverPath', 'tinycoder');
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const resolved = resolveServerPath(configured, process.env, root);
    if (!resolved.found) {
      const problem = `tinycoder: the server binary was not found: ${resolved.reason}. Build it (cargo build --release) or set tinycoder.serverPath.`;
      status.setProblem(problem);
      output.appendLine(problem);
      void offerFixes(problem);
      return;
    }
    const serverOptions: ServerOptions = { command: resolved.path, args: ['lsp'], transport: TransportKind.stdio };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'rust' },
        { scheme: 'file', language: 'python' },
      ],
      initializationOptions: effectiveSettings(),
      outputChannel: output,
      middleware: {
        // Switched off (in general or for the language): the model is not asked.
        provideInlineCompletionItems: (document, position, context, token, next) =>
          suggestionsOn(suggestionSetting(document)) ? next(document, position, context, token) : null,
      },
    };
    const next = new LanguageClient('tinycoder', 'tinycoder', serverOptions, clientOptions);
    next.registerFeature(inputTextFeature);
    // Inline completion (LSP 3.18) is a proposed feature of this client library.
    next.registerProposedFeatures();
    // The agent asks for a line of text (a hint after failed attempts); null when dismissed.
    next.onRequest('tinycoder/inputText', async (p: { prompt: string }) => {
      const text = await vscode.window.showInputBox({ title: 'tinycoder', prompt: p.prompt, ignoreFocusOut: true });
      return text === undefined ? null : text;
    });
    next.onNotification('tinycoder/chatDelta', (p: ChatDeltaParams) => chat.onDelta(p));
    try {
      await next.start();
    } catch (e) {
      const problem = `tinycoder: the server (${resolved.path} lsp) failed to start: ${(e as Error).message}`;
      status.setProblem(problem);
      output.appendLine(problem);
      void offerFixes(problem);
      return;
    }
    client = next;
    context.subscriptions.push(trackProgress(next, tracker, (label) => status.setProgress(label)));
    await refreshSummary();
  }

  async function offerFixes(problem: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(problem, 'Open settings', 'Show output', 'Retry');
    if (choice === 'Open settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'tinycoder.serverPath');
    } else if (choice === 'Show output') {
      output.show();
    } else if (choice === 'Retry') {
      await start();
    }
  }

  await start();
}

async function showMenu(output: vscode.OutputChannel): Promise<void> {
  const document = vscode.window.activeTextEditor?.document;
  const items: (vscode.QuickPickItem & { run: () => unknown })[] = [
    { label: toggleLabel(suggestionsOn(suggestionSetting()), undefined), run: () => toggleSuggestions(false) },
    { label: '$(comment-discussion) Open chat', run: () => vscode.commands.executeCommand(ClientCommand.chat) },
    { label: '$(output) Show output', run: () => output.show() },
    { label: '$(debug-stop) Cancel the running job', run: () => vscode.commands.executeCommand(ClientCommand.cancel) },
    { label: '$(discard) Undo the last change', run: () => vscode.commands.executeCommand(ClientCommand.undo) },
    { label: '$(debug-restart) Restart the server', run: () => vscode.commands.executeCommand(RESTART_COMMAND) },
    ...(document
      ? [{ label: toggleLabel(suggestionsOn(suggestionSetting(document)), document.languageId), run: () => toggleSuggestions(true) }]
      : []),
    { label: '$(settings-gear) Settings', run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'tinycoder') },
  ];
  const picked = await vscode.window.showQuickPick(items, { title: 'tinycoder' });
  await picked?.run();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
