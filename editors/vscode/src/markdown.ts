// A reply's Markdown as HTML for the chat webview: fenced code blocks,
// headings, lists, paragraphs, inline code and bold, with `file:line`
// citations as links. Everything the model wrote is escaped first: no HTML
// of its own reaches the page. A fence still open while the reply streams
// shows as code up to the end. No `vscode` import: unit-tested.
import { linkifyCitations } from './citations';
import { escapeHtml } from './html';

const FENCE = /^\s*(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d{1,3}[.)]\s+(.*)$/;

/** Inline Markdown of one line: code spans (citations inside stay links), then bold, over escaped text. */
export function inlineHtml(text: string): string {
  let html = '';
  let at = 0;
  for (const m of text.matchAll(/(`+)([^`]|[^`].*?[^`])\1(?!`)/g)) {
    const start = m.index ?? 0;
    html += emphasis(linkifyCitations(text.slice(at, start)));
    html += `<code>${linkifyCitations(m[2])}</code>`;
    at = start + m[0].length;
  }
  return html + emphasis(linkifyCitations(text.slice(at)));
}

/** `**bold**` and `__bold__` in already escaped HTML (the markers survive escaping). */
function emphasis(html: string): string {
  return html.replace(/\*\*(?=\S)([^*]*?\S)\*\*|__(?=\S)([^_]*?\S)__/g, (_m, a, b) => `<strong>${a ?? b}</strong>`);
}

/** The reply as HTML blocks. */
export function markdownHtml(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let paragraph: string[] = [];
  let list: { tag: 'ul' | 'ol'; items: string[] } | null = null;
  const flush = () => {
    if (paragraph.length > 0) {
      out.push(`<p>${paragraph.map(inlineHtml).join('<br>')}</p>`);
      paragraph = [];
    }
    if (list) {
      out.push(`<${list.tag}>${list.items.map((i) => `<li>${inlineHtml(i)}</li>`).join('')}</${list.tag}>`);
      list = null;
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1];
      const code: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(marker)) {
        code.push(lines[i]);
        i++;
      }
      const lang = fence[2] ? ` class="language-${escapeHtml(fence[2])}"` : '';
      out.push(`<pre><code${lang}>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      const level = Math.min(heading[1].length + 2, 6); // the chat's headings stay small
      out.push(`<h${level}>${inlineHtml(heading[2])}</h${level}>`);
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = bullet ? null : NUMBERED.exec(line);
    if (bullet || numbered) {
      const tag = bullet ? 'ul' : 'ol';
      if (paragraph.length > 0 || (list && list.tag !== tag)) {
        flush();
      }
      list = list ?? { tag, items: [] };
      list.items.push((bullet ?? numbered)![1]);
      continue;
    }
    if (list && /^\s+\S/.test(line)) {
      // An indented line continues the list item above it.
      list.items[list.items.length - 1] += ` ${line.trim()}`;
      continue;
    }
    if (list) {
      flush();
    }
    paragraph.push(line);
  }
  flush();
  return out.join('');
}
