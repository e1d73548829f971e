import { describe, expect, it } from 'vitest';
import { escapeHtml, fenceLanguage, segments } from './markdown';

const html = (text: string) =>
  segments(text)
    .map((s) => (s.kind === 'html' ? s.html : ''))
    .join('');

describe('reply markdown', () => {
  it('renders prose as HTML and splits code blocks out with their language', () => {
    const parts = segments('Some **bold** text\n\n```ts {x}\nconst a = 1;\n```\n\nafter');
    expect(parts).toHaveLength(3);
    expect(parts[0]).toMatchObject({ kind: 'html' });
    expect((parts[0] as { html: string }).html).toContain('<strong>bold</strong>');
    expect(parts[1]).toEqual({ kind: 'code', lang: 'ts', code: 'const a = 1;' });
    expect((parts[2] as { html: string }).html).toContain('after');
  });

  it('shows raw HTML as text: no script or event handler survives as markup', () => {
    const out = html('Hi <script>window.pwned=1</script>\n\n<img src=x onerror="window.pwned=1">\n\ninline <b onclick="x()">b</b>');
    expect(out).not.toMatch(/<script|<img|<b /i);
    expect(out).toContain('&lt;script&gt;');
    expect(out).toContain('&lt;img src=x onerror=&quot;window.pwned=1&quot;&gt;');
  });

  it('keeps an unfinished fence (a reply still streaming) as a code block', () => {
    expect(segments('```py\nprint(1)')).toEqual([{ kind: 'code', lang: 'py', code: 'print(1)' }]);
  });

  it('escapes and reads fence languages', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(fenceLanguage(' Python  extra')).toBe('python');
    expect(fenceLanguage(undefined)).toBe('');
  });
});
