/** The shell's pure parts: the SSE parser, query strings, translations, the theme. */
import { describe, expect, it } from 'vitest';
import { withQuery } from './api/client';
import { parseSseChunk, readSse } from './api/sse';
import { common } from './i18n/common';
import { format, langOf, translator } from './i18n/core';
import { resolvedTheme } from './theme';

describe('SSE parsing', () => {
  it('splits events, keeps the unfinished tail, joins multi-line data, skips comments', () => {
    const { events, rest } = parseSseChunk(': ping\n\nevent: conversation.reply\ndata: {"a":\ndata: 1}\n\ndata: [DONE]\n\ndata: {"par');
    expect(events).toEqual([
      { event: 'conversation.reply', data: '{"a":\n1}' },
      { event: 'message', data: '[DONE]' },
    ]);
    expect(rest).toBe('data: {"par');
  });

  it('reads a stream cut at any byte, CRLF included, and stops at [DONE]', async () => {
    const text = 'data: {"x":"é"}\r\n\r\nevent: e\ndata: 2\n\ndata: [DONE]\n\ndata: after\n\n';
    const bytes = new TextEncoder().encode(text);
    for (const cut of [1, 3, 7, bytes.length - 1]) {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(bytes.slice(0, cut));
          c.enqueue(bytes.slice(cut));
          c.close();
        },
      });
      const seen = [];
      for await (const e of readSse(body)) seen.push(e);
      expect(seen, `cut at ${cut}`).toEqual([
        { event: 'message', data: '{"x":"é"}' },
        { event: 'e', data: '2' },
      ]);
    }
  });
});

describe('query strings', () => {
  it('drops empty values, repeats arrays, appends to an existing query', () => {
    expect(withQuery('/v1/usage', { group_by: 'day', from: '', to: undefined, model: null, limit: 5 })).toBe('/v1/usage?group_by=day&limit=5');
    expect(withQuery('/x?a=1', { tag: ['a b', 'c'] })).toBe('/x?a=1&tag=a+b&tag=c');
    expect(withQuery('/x', {})).toBe('/x');
  });
});

describe('translations', () => {
  it('maps stored language tags to the two UI languages', () => {
    expect(['zh-CN', 'zh', 'zh-Hans-CN', 'cn', 'ZH-tw'].map(langOf)).toEqual(['cn', 'cn', 'cn', 'cn', 'cn']);
    expect(['en', 'en-GB', 'fr', '', null, undefined].map(langOf)).toEqual(['en', 'en', 'en', 'en', 'en', 'en']);
  });

  it('fills {names}, leaves unknown ones, and has every common word in both languages', () => {
    expect(format('Maintenance: {message} ({x})', { message: 'back soon' })).toBe('Maintenance: back soon ({x})');
    expect(translator(common, 'cn')('maintenance', { message: '稍后' })).toBe('维护中：稍后');
    expect(Object.keys(common.cn).sort()).toEqual(Object.keys(common.en).sort());
    for (const [key, text] of Object.entries(common.cn)) expect(text, key).not.toBe('');
  });
});

describe('theme', () => {
  it('follows the system only when asked to', () => {
    expect(resolvedTheme('system', true)).toBe('dark');
    expect(resolvedTheme('system', false)).toBe('light');
    expect(resolvedTheme('light', true)).toBe('light');
    expect(resolvedTheme('dark', false)).toBe('dark');
  });
});
