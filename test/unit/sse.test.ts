/**
 * The upstream stream framings (SSE events, NDJSON lines): the same result for every split of the
 * input, work linear in the input however it is split, and a line or event over the limit
 * refused as soon as it gets that long.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UpstreamFaultError } from '../../src/errors.js';
import { LineSplitter, SseParser, type SseEvent } from '../../src/relay/sse.js';

const STREAM = [
  ': a comment\n',
  'event: first\r\n',
  'data: {"a":1}\r\n',
  '\r\n',
  'data: line one\n',
  'data: line two\n',
  '\n',
  'data:no-space\r',
  '\r',
  'id: 7\n',
  'data: é and 😀\n\n',
  'data: unterminated',
].join('');

function parseWhole(text: string): SseEvent[] {
  const parser = new SseParser();
  return [...parser.push(text), ...parser.flush()];
}

function parseSplit(text: string, at: number[]): SseEvent[] {
  const parser = new SseParser();
  const out: SseEvent[] = [];
  let from = 0;
  for (const cut of [...at, text.length]) {
    out.push(...parser.push(text.slice(from, cut)));
    from = cut;
  }
  return [...out, ...parser.flush()];
}

function tooLarge(fn: () => unknown): UpstreamFaultError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamFaultError);
    expect((error as UpstreamFaultError).code).toBe('upstream_response_too_large');
    expect((error as UpstreamFaultError).status).toBe(502);
    return error as UpstreamFaultError;
  }
  return expect.fail('expected upstream_response_too_large');
}

/**
 * Characters the string searches of `fn` looked at: every charCodeAt, and for each indexOf the
 * characters from its start position to the end of the string (the most it may scan).
 */
function charactersScanned(fn: () => void): number {
  let scanned = 0;
  const indexOf = String.prototype.indexOf;
  const charCodeAt = String.prototype.charCodeAt;
  vi.spyOn(String.prototype, 'indexOf').mockImplementation(function (this: string, search: string, position?: number) {
    scanned += this.length - (position ?? 0);
    return indexOf.call(this, search, position);
  });
  vi.spyOn(String.prototype, 'charCodeAt').mockImplementation(function (this: string, index: number) {
    scanned += 1;
    return charCodeAt.call(this, index);
  });
  try {
    fn();
  } finally {
    vi.restoreAllMocks();
  }
  return scanned;
}

describe('SSE parser', () => {
  afterEach(() => vi.restoreAllMocks());

  it('reads events, comments, multi-line data, every line end and an unterminated last event', () => {
    expect(parseWhole(STREAM)).toEqual([
      { event: 'first', data: '{"a":1}' },
      { event: null, data: 'line one\nline two' },
      { event: null, data: 'no-space' },
      { event: null, data: 'é and 😀' },
      { event: null, data: 'unterminated' },
    ]);
  });

  it('gives the same events for a split at every position, and for one character at a time', () => {
    const whole = parseWhole(STREAM);
    for (let i = 0; i <= STREAM.length; i++) expect(parseSplit(STREAM, [i])).toEqual(whole);
    expect(parseSplit(STREAM, Array.from({ length: STREAM.length }, (_, i) => i))).toEqual(whole);
  });

  it('looks at each character a bounded number of times, however the input is split (linear, not quadratic)', () => {
    const length = 3_000;
    const parser = new SseParser();
    const events: SseEvent[] = [];
    const scanned = charactersScanned(() => {
      events.push(...parser.push('data: '));
      for (let i = 0; i < length; i++) events.push(...parser.push('x'));
      events.push(...parser.push('\n\n'));
    });
    expect(events).toEqual([{ event: null, data: 'x'.repeat(length) }]);
    // One character per piece: a rescan of what is buffered would be ~length²/2 (4.5 million).
    expect(scanned).toBeLessThan(10 * length);
  });

  it('refuses a line longer than the limit as soon as it is that long, without its line end', () => {
    const parser = new SseParser(1_000);
    parser.push(`data: ${'x'.repeat(900)}`);
    tooLarge(() => parser.push('x'.repeat(200)));
    // Within the limit, complete: fine.
    expect(new SseParser(1_000).push(`data: ${'y'.repeat(900)}\n\n`)).toEqual([{ event: null, data: 'y'.repeat(900) }]);
  });

  it('refuses an event whose data lines add up past the limit', () => {
    const parser = new SseParser(1_000);
    tooLarge(() => parser.push(`data: ${'x'.repeat(400)}\n`.repeat(3)));
  });
});

describe('line splitter (NDJSON)', () => {
  it('splits at \\n, \\r\\n and \\r, also when the \\r\\n pair is split between pieces', () => {
    const lines = new LineSplitter();
    expect(lines.push('a\r')).toEqual(['a']);
    expect(lines.push('\nb\nc')).toEqual(['b']);
    expect(lines.push('d\r\ne\rf')).toEqual(['cd', 'e']);
    expect(lines.flush()).toBe('f');
    expect(lines.flush()).toBe('');
  });

  it('is linear in a long line fed one character at a time, and refuses one past the limit', () => {
    const length = 3_000;
    const lines = new LineSplitter(length);
    const out: string[] = [];
    const scanned = charactersScanned(() => {
      for (let i = 0; i < length; i++) out.push(...lines.push('z'));
      out.push(...lines.push('\n'));
    });
    expect(out).toEqual(['z'.repeat(length)]);
    expect(scanned).toBeLessThan(10 * length);
    tooLarge(() => {
      for (let i = 0; i <= length; i++) lines.push('z');
    });
  });
});
