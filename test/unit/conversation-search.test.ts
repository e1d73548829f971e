import { describe, expect, it } from 'vitest';
import { containsPattern, searchScore, searchTerms, snippetOf } from '../../src/conversations/search.js';
import { exportFileName } from '../../src/conversations/views.js';

describe('conversation search, the pure part', () => {
  it('splits a query into distinct lower-cased terms', () => {
    expect(searchTerms('  Sourdough   STARTER sourdough ')).toEqual(['sourdough', 'starter']);
    expect(searchTerms(Array.from({ length: 20 }, (_, i) => `t${i}`).join(' '))).toHaveLength(8);
  });

  it('escapes LIKE wildcards and its escape character', () => {
    expect(containsPattern('50%_off!')).toBe('%50!%!_off!!%');
  });

  it('cuts a snippet around the first match and points at each term', () => {
    const text = `${'a'.repeat(200)} the Sourdough starter ${'b'.repeat(300)}`;
    const snippet = snippetOf(text, ['starter', 'sourdough'])!;
    expect(snippet.text.startsWith('…')).toBe(true);
    expect(snippet.text.endsWith('…')).toBe(true);
    expect(snippet.highlights.map(([s, e]) => snippet.text.slice(s, e))).toEqual(['Sourdough', 'starter']);
    expect(snippetOf('short text', ['short'])).toEqual({ text: 'short text', highlights: [[0, 5]] });
    expect(snippetOf('nothing here', ['absent'])).toBeNull();
  });

  it('ranks a title match above any number of message matches', () => {
    expect(searchScore(true, 0)).toBeGreaterThan(searchScore(false, 50));
    expect(searchScore(false, 3)).toBeGreaterThan(searchScore(false, 2));
  });

  it('names exports after the title, in ASCII', () => {
    const view = { id: 'conv_1', title: 'Café: plans / 2027!' } as Parameters<typeof exportFileName>[0];
    expect(exportFileName(view, 'md')).toBe('cafe-plans-2027.md');
    expect(exportFileName({ ...view, title: '日本語' }, 'json')).toBe('conv_1.json');
  });
});
