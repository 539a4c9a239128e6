// The chat view (activity bar): sends `tinycoder/chat` turns about the active
// editor, streams `tinycoder/chatDelta` into the conversation, opens citations.
import * as crypto from 'crypto';
import * as path from 'path';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { ChatDeltaParams, ChatResult, ChatTranscript } from './chatTranscript';
import { chatPage, transcriptHtml, turnHtml } from './chatHtml';

export class ChatViewProvider implements vscode.WebviewViewProvider {
  static readonly viewId = 'tinycoder.chatView';
  readonly transcript = new ChatTranscript();
  private view: vscode.WebviewView | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly client: () => LanguageClient | undefined,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = chatPage({
      cspSource: view.webview.cspSource,
      nonce: crypto.randomBytes(16).toString('base64'),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css')).toString(),
    });
    view.webview.onDidReceiveMessage((msg: { type: string; text?: string; path?: string; line?: number }) => {
      if (msg.type === 'ready') {
        this.postAll();
      } else if (msg.type === 'send' && msg.text) {
        void this.send(msg.text);
      } else if (msg.type === 'clear') {
        this.transcript.clear();
        this.postAll();
      } else if (msg.type === 'open' && msg.path) {
        void openCitation(msg.path, msg.line ?? 1);
      }
    });
  }

  /** Shows the view and puts the cursor in its input. */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
    void this.view?.webview.postMessage({ type: 'focus' });
  }

  /** Shows what the user asked for through a command (explain, ask); the answer streams in by itself. */
  note(text: string): void {
    this.transcript.note(text);
    this.postAll();
  }

  /** The `tinycoder/chatDelta` handler: chat turns and explain/ask answers alike. */
  onDelta(params: ChatDeltaParams): void {
    this.postTurn(this.transcript.applyDelta(params));
  }

  /** Sends `message` about the active editor (its selection, else the cursor). */
  async send(message: string): Promise<void> {
    const client = this.client();
    if (!client) {
      void vscode.window.showWarningMessage('tinycoder: the server is not running.');
      return;
    }
    const requestId = this.transcript.nextRequestId();
    this.transcript.ask(message, requestId);
    this.postAll();
    const params: Record<string, unknown> = { requestId, message };
    if (this.transcript.sessionId) {
      params.sessionId = this.transcript.sessionId;
    }
    const editor = vscode.window.activeTextEditor;
    if (editor && editor.document.uri.scheme === 'file') {
      params.textDocument = { uri: editor.document.uri.toString() };
      params.position = client.code2ProtocolConverter.asPosition(editor.selection.active);
      if (!editor.selection.isEmpty) {
        params.range = client.code2ProtocolConverter.asRange(editor.selection);
      }
    }
    try {
      const result = await client.sendRequest<ChatResult>('tinycoder/chat', params);
      this.postTurn(this.transcript.complete(result));
    } catch (e) {
      this.postTurn(this.transcript.fail(requestId, (e as Error).message));
    }
  }

  private postAll(): void {
    void this.view?.webview.postMessage({ type: 'transcript', html: transcriptHtml(this.transcript.turns) });
  }

  private postTurn(turn: Parameters<typeof turnHtml>[0]): void {
    if (turn.role === 'assistant') {
      void this.view?.webview.postMessage({ type: 'turn', requestId: turn.requestId, html: turnHtml(turn) });
    }
  }
}

/** Opens `file` (relative to a workspace folder, or absolute) at 1-based `line`. */
export async function openCitation(file: string, line: number): Promise<void> {
  const candidates: vscode.Uri[] = [];
  if (path.isAbsolute(file)) {
    candidates.push(vscode.Uri.file(file));
  } else {
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      candidates.push(vscode.Uri.joinPath(folder.uri, file));
    }
  }
  for (const uri of candidates) {
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      continue;
    }
    const at = new vscode.Position(Math.max(0, line - 1), 0);
    await vscode.window.showTextDocument(uri, { selection: new vscode.Range(at, at), preview: true });
    return;
  }
  void vscode.window.showWarningMessage(`tinycoder: ${file} is not in the workspace.`);
}
