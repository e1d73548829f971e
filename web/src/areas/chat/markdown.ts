/**
 * Replies as Markdown: parsed by marked into segments — HTML for prose, code blocks apart (the page
 * renders them with highlighting and a copy button). Safety in two layers: raw HTML in the text is
 * escaped by the renderer (a reply's <script> shows as text), and the HTML is then sanitized by
 * DOMPurify (links like javascript: and any attribute marked would pass).
 */
import DOMPurify from 'dompurify';
import { Marked, type Token } from 'marked';

export type Segment = { kind: 'html'; html: string } | { kind: 'code'; lang: string; code: string };

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    // Raw HTML (blocks and inline tags) is shown as text, never parsed.
    html: ({ text }) => escapeHtml(text),
  },
});

/** DOMPurify needs a DOM: in the browser always; elsewhere (unit tests) only the escaping applies. */
export function sanitize(html: string): string {
  if (typeof window === 'undefined' || !DOMPurify.isSupported) return html;
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select'] });
}

/** The first word of a fence's info string, lower-case ("ts {title}" -> "ts"). */
export const fenceLanguage = (info: string | undefined): string => (info ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';

export function segments(text: string): Segment[] {
  const tokens = marked.lexer(text);
  const out: Segment[] = [];
  let group: Token[] = [];
  const flush = () => {
    if (group.length === 0) return;
    const html = sanitize(marked.parser(group));
    if (html.trim()) out.push({ kind: 'html', html });
    group = [];
  };
  for (const token of tokens) {
    if (token.type === 'code') {
      flush();
      out.push({ kind: 'code', lang: fenceLanguage((token as { lang?: string }).lang), code: (token as { text: string }).text });
    } else group.push(token);
  }
  flush();
  return out;
}
