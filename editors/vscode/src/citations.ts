// `file:line` citations in replies (the server's chat and answers cite
// `path:line` or `path:start-end`), and the reply as HTML with each citation a
// link. No `vscode` import: unit-tested.
import { escapeHtml } from './html';

export interface Citation {
  /** The path as written (relative to the workspace, or absolute). */
  path: string;
  /** 1-based. */
  line: number;
  endLine?: number;
  /** Offsets of the citation's text in the reply. */
  start: number;
  end: number;
}

// A path with an extension (so `12:30` or `http://x:80` is not one), then `:line` or `:a-b`.
// Allowed before it: start, space, or an opening bracket, quote or backtick.
const CITATION = /(^|[\s([`'"])((?:[A-Za-z]:)?[\w./\\-]*[\w-]\.[A-Za-z0-9]{1,8}):(\d+)(?:-(\d+))?/g;

/** Every citation in `text`, in order. */
export function findCitations(text: string): Citation[] {
  const found: Citation[] = [];
  for (const m of text.matchAll(CITATION)) {
    const start = (m.index ?? 0) + m[1].length;
    const line = Number(m[3]);
    if (line < 1 || m[2].includes('://')) {
      continue;
    }
    const citation: Citation = { path: m[2], line, start, end: start + m[0].length - m[1].length };
    if (m[4] !== undefined) {
      citation.endLine = Number(m[4]);
    }
    found.push(citation);
  }
  return found;
}

/**
 * `text` as HTML: escaped, newlines kept by the stylesheet (white-space: pre-wrap),
 * each citation an `<a class="citation" data-path data-line>` the webview opens.
 */
export function linkifyCitations(text: string): string {
  let html = '';
  let at = 0;
  for (const c of findCitations(text)) {
    html += escapeHtml(text.slice(at, c.start));
    html +=
      `<a href="#" class="citation" data-path="${escapeHtml(c.path)}" data-line="${c.line}">` +
      `${escapeHtml(text.slice(c.start, c.end))}</a>`;
    at = c.end;
  }
  return html + escapeHtml(text.slice(at));
}
