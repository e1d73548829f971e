/** The chat form of extracted texts (src/files/chat-text.ts) and the temporary HTML reduction. */
import { describe, expect, it } from 'vitest';
import { chatText } from '../../src/files/chat-text.js';
import { htmlText } from '../../src/files/processing/inline-text.js';
import { contentDisposition } from '../../src/api/routes/files.js';

describe('chatText', () => {
  it('keeps a text within the limit whole', () => {
    expect(chatText('short', 5)).toEqual({ text: 'short', truncated: false });
  });

  it('cuts a longer text at the limit and says how long the whole is', () => {
    const { text, truncated } = chatText('a'.repeat(1500), 1000);
    expect(truncated).toBe(true);
    expect(text.startsWith(`${'a'.repeat(1000)}\n\n[`)).toBe(true);
    expect(text).toContain('1500 characters');
    expect(text).toContain('first 1000');
  });

  it('never splits a surrogate pair', () => {
    const { text } = chatText(`ab😀cd`, 3);
    expect(text.startsWith('ab\n\n')).toBe(true);
    expect(text).toContain('first 2');
  });
});

describe('htmlText', () => {
  it('keeps the visible text only', () => {
    expect(htmlText('<html><head><style>p{}</style><script>alert(1)</script></head><body><h1>Title</h1><p>A &amp; B&nbsp;&#233;</p><!-- x --></body></html>')).toBe('Title\nA & B é');
  });
});

describe('contentDisposition', () => {
  it('gives an ASCII fallback and the exact name, encoded', () => {
    expect(contentDisposition('notes.txt')).toBe(`attachment; filename="notes.txt"; filename*=UTF-8''notes.txt`);
    expect(contentDisposition('Grüße "x"\\(1)*.pdf')).toBe(`attachment; filename="Gr__e _x__(1)*.pdf"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%22x%22%5C%281%29%2A.pdf`);
    expect(contentDisposition('a\r\nb')).toBe(`attachment; filename="a__b"; filename*=UTF-8''a%0D%0Ab`);
  });
});
