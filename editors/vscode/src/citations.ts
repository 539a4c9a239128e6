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
  /** The text shown for a Markdown link (`[calc.py:1](file:///w/calc.py#L1)`); else the citation's own text. */
  label?: string;
}

// A path with an extension (so `12:30` or `http://x:80` is not one), then `:line` or `:a-b`.
// Allowed before it: start, space, or an opening bracket, quote or backtick.
const CITATION = /(^|[\s([`'"])((?:[A-Za-z]:)?[\w./\\-]*[\w-]\.[A-Za-z0-9]{1,8}):(\d+)(?:-(\d+))?/g;

// A Markdown link to a file: URI with a `#L12` or `#L12-L20` line anchor (the server's "Sources").
const FILE_LINK = /\[([^\]\n]+)\]\((file:\/\/[^)\s#]+)#L(\d+)(?:-L?(\d+))?\)/g;

/** The path of a file: URI (`file:///C:/x` → `C:/x` on Windows-style paths). */
function uriPath(uri: string): string {
  let p = decodeURIComponent(uri.slice('file://'.length));
  if (/^\/[A-Za-z]:\//.test(p)) {
    p = p.slice(1);
  }
  return p;
}

/** Every citation in `text`, in order: Markdown file links first claim their text, then `path:line`. */
export function findCitations(text: string): Citation[] {
  const found: Citation[] = [];
  for (const m of text.matchAll(FILE_LINK)) {
    const start = m.index ?? 0;
    const citation: Citation = { path: uriPath(m[2]), line: Number(m[3]), start, end: start + m[0].length, label: m[1] };
    if (m[4] !== undefined) {
      citation.endLine = Number(m[4]);
    }
    found.push(citation);
  }
  const inLink = (at: number) => found.some((c) => c.label !== undefined && at >= c.start && at < c.end);
  for (const m of text.matchAll(CITATION)) {
    const start = (m.index ?? 0) + m[1].length;
    const line = Number(m[3]);
    if (line < 1 || m[2].includes('://') || inLink(start)) {
      continue;
    }
    const citation: Citation = { path: m[2], line, start, end: start + m[0].length - m[1].length };
    if (m[4] !== undefined) {
      citation.endLine = Number(m[4]);
    }
    found.push(citation);
  }
  return found.sort((a, b) => a.start - b.start);
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
      `${escapeHtml(c.label ?? text.slice(c.start, c.end))}</a>`;
    at = c.end;
  }
  return html + escapeHtml(text.slice(at));
}
