// The chat webview's page and the HTML of its turns. No `vscode` import: unit-tested.
import { escapeHtml } from './html';
import { markdownHtml } from './markdown';
import type { Turn } from './chatTranscript';

/** One turn as HTML: the user's words as typed; a reply as Markdown, its `file:line` citations links. */
export function turnHtml(turn: Turn): string {
  if (turn.role === 'user') {
    return `<div class="turn user"><div class="who">You</div><div class="text">${escapeHtml(turn.text)}</div></div>`;
  }
  const state = turn.error ? ' error' : turn.done ? '' : ' streaming';
  let body = `<div class="text md">${markdownHtml(turn.text)}</div>`;
  if (turn.note) {
    body += `<div class="note">${escapeHtml(turn.note)}</div>`;
  }
  if (turn.error) {
    body += `<div class="note">${escapeHtml(turn.error)}</div>`;
  }
  return `<div class="turn assistant${state}" data-request="${escapeHtml(turn.requestId)}"><div class="who">tinycoder</div>${body}</div>`;
}

/** The whole conversation as HTML. */
export function transcriptHtml(turns: ReadonlyArray<Turn>): string {
  return turns.map(turnHtml).join('');
}

export interface PageResources {
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
}

/** The page: no inline script or style; only the extension's own files may load (CSP). */
export function chatPage(r: PageResources): string {
  const csp = [
    "default-src 'none'",
    `style-src ${r.cspSource}`,
    `script-src 'nonce-${r.nonce}'`,
    `img-src ${r.cspSource}`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(r.styleUri)}">
<title>tinycoder chat</title>
</head>
<body>
<div id="transcript" aria-live="polite"></div>
<form id="composer">
<textarea id="message" rows="3" placeholder="Ask about this file or the project (Enter sends, Shift+Enter: new line)"></textarea>
<div class="buttons"><button type="submit" id="send">Send</button><button type="button" id="clear" class="secondary">New chat</button></div>
</form>
<script nonce="${escapeHtml(r.nonce)}" src="${escapeHtml(r.scriptUri)}"></script>
</body>
</html>`;
}
