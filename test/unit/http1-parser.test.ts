/**
 * The fast path's HTTP/1.1 request parser: valid requests (whole, split at every byte offset,
 * pipelined), each refusal with its status, and the hand-over contract (`takeUnconsumed`).
 */
import { describe, expect, it } from 'vitest';
import { HEAD, HttpParseError, MESSAGE, NEED_MORE, RequestParser, hasToken, type ParserLimits, type RequestHead } from '../../src/api/http1/parser.js';

interface Parsed {
  heads: number;
  messages: Array<{ head: RequestHead; body: string }>;
  error?: { status: number; message: string };
}

/** Feeds the chunks in order and drives the parser to the end (or its first error). */
function parse(chunks: Array<string | Buffer>, limits?: ParserLimits): Parsed {
  const parser = new RequestParser(limits);
  const out: Parsed = { heads: 0, messages: [] };
  try {
    for (const chunk of chunks) {
      parser.feed(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk);
      for (;;) {
        const step = parser.next();
        if (step === NEED_MORE) break;
        if (step === HEAD) out.heads++;
        if (step === MESSAGE) out.messages.push({ head: parser.head!, body: parser.body.toString('latin1') });
      }
    }
  } catch (error) {
    if (!(error instanceof HttpParseError)) throw error;
    out.error = { status: error.status, message: error.message };
  }
  return out;
}

/** Headers as a plain object (the parser's have no prototype, which toEqual would notice). */
const plain = (m: { head: RequestHead; body: string }) => ({ ...m, head: { ...m.head, headers: { ...m.head.headers } } });
const plainAll = (p: Parsed) => ({ ...p, heads: p.heads, messages: p.messages.map(plain) });

const splits = (input: string): Array<Array<string>> => {
  const out: string[][] = [];
  for (let i = 1; i < input.length; i++) out.push([input.slice(0, i), input.slice(i)]);
  out.push([...input]); // one byte at a time
  return out;
};

describe('http1 parser: valid requests', () => {
  const cases: Array<{ name: string; input: string; expected: Array<{ head: Partial<RequestHead>; body: string }> }> = [
    {
      name: 'GET with Host',
      input: 'GET /v1/models HTTP/1.1\r\nHost: a.example\r\n\r\n',
      expected: [{ head: { method: 'GET', url: '/v1/models', path: '/v1/models', httpVersion: '1.1', headers: { host: 'a.example' }, keepAlive: true, expectContinue: false, expectUnsupported: false }, body: '' }],
    },
    {
      name: 'POST with Content-Length',
      input: 'POST /v1/chat/completions HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{"model":"x"}',
      expected: [{ head: { method: 'POST', headers: { host: 'h', 'content-type': 'application/json', 'content-length': '13' } }, body: '{"model":"x"}' }],
    },
    {
      name: 'chunked with extensions and trailers',
      input: 'POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n1;x;q="a \\"b"\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\nOther: u\r\n\r\n',
      expected: [{ head: { method: 'POST', headers: { host: 'h', 'transfer-encoding': 'chunked' } }, body: 'hello 0123456789' }],
    },
    {
      name: 'chunked with upper-case hex and leading zeros, no trailers',
      input: 'POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n000B\r\nhello world\r\n00\r\n\r\n',
      expected: [{ head: {}, body: 'hello world' }],
    },
    {
      name: 'HTTP/1.0: no Host needed, close by default',
      input: 'GET / HTTP/1.0\r\n\r\n',
      expected: [{ head: { httpVersion: '1.0', keepAlive: false, headers: {} }, body: '' }],
    },
    {
      name: 'HTTP/1.0 keep-alive',
      input: 'GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n',
      expected: [{ head: { httpVersion: '1.0', keepAlive: true }, body: '' }],
    },
    {
      name: 'HTTP/1.1 Connection: close (among other tokens)',
      input: 'GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade, CLOSE\r\n\r\n',
      expected: [{ head: { keepAlive: false }, body: '' }],
    },
    {
      name: 'query string: path without it, url with it',
      input: 'GET /a/b?x=1&y=?2 HTTP/1.1\r\nHost: h\r\n\r\n',
      expected: [{ head: { url: '/a/b?x=1&y=?2', path: '/a/b' }, body: '' }],
    },
    {
      name: 'names lower-cased, values trimmed, empty value, duplicates joined (cookie with "; ")',
      input: 'GET / HTTP/1.1\r\nHOST: h\r\nX-A:  1 \t\r\nx-a: 2\r\nCookie: a=1\r\ncookie: b=2\r\nX-Empty:\r\nX-Tab:\t\t\r\n\r\n',
      expected: [{ head: { headers: { host: 'h', 'x-a': '1, 2', cookie: 'a=1; b=2', 'x-empty': '', 'x-tab': '' } }, body: '' }],
    },
    {
      name: 'known field names in any case, and near misses of them',
      input: 'GET / HTTP/1.1\r\nhOsT: h\r\nCONTENT-TYPE: a\r\nContent-Typ^: b\r\nContent-Typ~: c\r\nX-Stainless-Lang: d\r\nx-stainless-lanh: e\r\n\r\n',
      expected: [{ head: { headers: { host: 'h', 'content-type': 'a', 'content-typ^': 'b', 'content-typ~': 'c', 'x-stainless-lang': 'd', 'x-stainless-lanh': 'e' } }, body: '' }],
    },
    {
      name: 'field names that are Object.prototype properties',
      input: 'GET / HTTP/1.1\r\nHost: h\r\n__proto__: p\r\nconstructor: c\r\ntoString: t\r\n\r\n',
      expected: [{ head: { headers: { host: 'h', ['__proto__']: 'p', constructor: 'c', tostring: 't' } }, body: '' }],
    },
    {
      name: 'obs-text (latin1) in a value',
      input: 'GET / HTTP/1.1\r\nHost: h\r\nX-Name: caf\xe9\r\n\r\n',
      expected: [{ head: { headers: { host: 'h', 'x-name': 'caf\xe9' } }, body: '' }],
    },
    {
      name: 'Expect: 100-continue',
      input: 'POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\nx',
      expected: [{ head: { expectContinue: true }, body: 'x' }],
    },
    {
      name: 'Expect: something else (node:http answers it 417)',
      input: 'POST / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\nx',
      expected: [{ head: { expectContinue: false, expectUnsupported: true }, body: 'x' }],
    },
    {
      name: 'empty lines before a request line are ignored',
      input: '\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n',
      expected: [{ head: { url: '/' }, body: '' }],
    },
    {
      name: 'pipelining: three requests (GET, chunked, length) in one input',
      input:
        'GET /1 HTTP/1.1\r\nHost: h\r\n\r\n' +
        'POST /2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n' +
        '\r\nPOST /3 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nConnection: close\r\n\r\nxyz',
      expected: [
        { head: { url: '/1', keepAlive: true }, body: '' },
        { head: { url: '/2' }, body: 'abc' },
        { head: { url: '/3', keepAlive: false }, body: 'xyz' },
      ],
    },
    {
      name: 'absolute-form target and a method llhttp knows beyond the usual ones',
      input: 'M-SEARCH http://h/x HTTP/1.1\r\nHost: h\r\n\r\n',
      expected: [{ head: { method: 'M-SEARCH', url: 'http://h/x' }, body: '' }],
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const result = parse([c.input]);
      expect(result.error).toBeUndefined();
      expect(result.heads).toBe(c.expected.length);
      expect(result.messages.map(plain)).toMatchObject(c.expected);
    });
  }

  it.each([cases[1]!, cases[2]!, cases[14]!])('gives the same result for every split of "$name" (and byte by byte)', (c) => {
    const whole = plainAll(parse([c.input]));
    for (const chunks of splits(c.input)) expect(plainAll(parse(chunks))).toEqual(whole);
  });

  it('returns the head before the body has arrived, and commitHead says whether a body follows', () => {
    const parser = new RequestParser();
    parser.feed(Buffer.from('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nab'));
    expect(parser.next()).toBe(HEAD);
    expect(parser.head!.url).toBe('/');
    expect(parser.commitHead()).toBe(true);
    expect(parser.next()).toBe(NEED_MORE);
    expect(parser.inBody).toBe(true);
    parser.feed(Buffer.from('cd'));
    expect(parser.next()).toBe(MESSAGE);
    expect(parser.body.toString()).toBe('abcd');
    expect(parser.idle).toBe(true);

    parser.feed(Buffer.from('GET / HTTP/1.1\r\nHost: h\r\n\r\n'));
    expect(parser.next()).toBe(HEAD);
    expect(parser.commitHead()).toBe(false);
    expect(parser.next()).toBe(MESSAGE);
    expect(parser.body.length).toBe(0);
  });

  it('hands out the body as a view of the input when it arrived in one piece', () => {
    const input = Buffer.from('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello');
    const parser = new RequestParser();
    parser.feed(input);
    expect(parser.next()).toBe(HEAD);
    expect(parser.next()).toBe(MESSAGE);
    expect(parser.body.buffer).toBe(input.buffer);
    expect(parser.body.toString()).toBe('hello');
  });

  it('does not let later input overwrite a body already handed out', () => {
    const parser = new RequestParser();
    // The head arrives in pieces (so the parser copies into its own buffer), then body + next request.
    parser.feed(Buffer.from('POST / HTTP/1.1\r\nHo'));
    parser.feed(Buffer.from('st: h\r\nContent-Length: 3\r\n\r\nabcGET /2 HT'));
    expect(parser.next()).toBe(HEAD);
    expect(parser.next()).toBe(MESSAGE);
    const body = parser.body;
    parser.feed(Buffer.from('TP/1.1\r\nHost: h\r\n\r\n'));
    expect(parser.next()).toBe(HEAD);
    expect(parser.head!.url).toBe('/2');
    expect(body.toString()).toBe('abc');
  });

  it('reads bodies sent in many tiny pieces (chunked: 1-byte chunks; Content-Length: 1-byte reads)', () => {
    const text = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const chunked = 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n' + [...text].map((c) => `1\r\n${c}\r\n`).join('') + '0\r\n\r\n';
    const chunkedResult = parse([chunked]);
    expect(chunkedResult.messages.map((m) => m.body)).toEqual([text]);
    const length = `POST / HTTP/1.1\r\nHost: h\r\nContent-Length: ${text.length}\r\n\r\n`;
    const lengthResult = parse([length, ...text, 'GET /next HTTP/1.1\r\nHost: h\r\n\r\n']);
    expect(lengthResult.messages.map((m) => [m.head.url, m.body])).toEqual([
      ['/', text],
      ['/next', ''],
    ]);
  });

  it('reads a large chunked body split into many pieces', () => {
    const payload = Buffer.alloc(300_000, 'x');
    for (let i = 0; i < payload.length; i += 7) payload[i] = 97 + (i % 26);
    const pieces: Buffer[] = [Buffer.from('POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n')];
    for (let i = 0; i < payload.length; i += 1000) {
      const part = payload.subarray(i, i + 1000);
      pieces.push(Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n'));
    }
    pieces.push(Buffer.from('0\r\n\r\n'));
    const wire = Buffer.concat(pieces);
    const chunks: Buffer[] = [];
    for (let i = 0; i < wire.length; i += 333) chunks.push(wire.subarray(i, i + 333));
    const result = parse(chunks);
    expect(result.error).toBeUndefined();
    expect(result.messages).toHaveLength(1);
    expect(Buffer.from(result.messages[0]!.body, 'latin1').equals(payload)).toBe(true);
  });
});

describe('http1 parser: refusals', () => {
  const H = 'Host: h\r\n';
  const cases: Array<{ name: string; input: string; status: number; limits?: ParserLimits }> = [
    // request line
    { name: 'bare LF ending the request line', input: `GET / HTTP/1.1\n${H}\r\n`, status: 400 },
    { name: 'bare LF ending a header line', input: `GET / HTTP/1.1\r\nHost: h\n\r\n`, status: 400 },
    { name: 'bare LF only (no CRLF anywhere, incomplete head)', input: 'GET / HTTP/1.1\nHost: h\n\n', status: 400 },
    { name: 'bare CR inside a value', input: `GET / HTTP/1.1\r\n${H}X: a\rb\r\n\r\n`, status: 400 },
    { name: 'bare CR before the request line', input: `\rGET / HTTP/1.1\r\n${H}\r\n`, status: 400 },
    { name: 'two spaces after the method', input: `GET  / HTTP/1.1\r\n${H}\r\n`, status: 400 },
    { name: 'invalid method character', input: `G(T / HTTP/1.1\r\n${H}\r\n`, status: 400 },
    { name: 'a method llhttp does not know', input: `FOO / HTTP/1.1\r\n${H}\r\n`, status: 400 },
    { name: 'a lower-case method', input: `get / HTTP/1.1\r\n${H}\r\n`, status: 400 },
    { name: 'a tab after the Content-Length value', input: `POST / HTTP/1.1\r\n${H}Content-Length: 2\t\r\n\r\nok`, status: 400 },
    { name: 'a tab after the Transfer-Encoding value', input: `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked\t\r\n\r\n0\r\n\r\n`, status: 400 },
    { name: 'not HTTP at all (incomplete, refused at once)', input: '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03', status: 400 },
    { name: 'method followed by a control character (incomplete)', input: 'GET\t/', status: 400 },
    { name: 'control character in the target', input: `GET /a\x01b HTTP/1.1\r\n${H}\r\n`, status: 400 },
    { name: 'non-ASCII in the target', input: `GET /caf\xe9 HTTP/1.1\r\n${H}\r\n`, status: 400 },
    { name: 'missing version', input: `GET /\r\n${H}\r\n`, status: 400 },
    { name: 'lower-case version', input: `GET / http/1.1\r\n${H}\r\n`, status: 400 },
    { name: 'truncated version', input: `GET / HTTP/1\r\n${H}\r\n`, status: 400 },
    { name: 'trailing space after the version', input: `GET / HTTP/1.1 \r\n${H}\r\n`, status: 400 },
    { name: 'HTTP/2.0', input: `GET / HTTP/2.0\r\n${H}\r\n`, status: 505 },
    { name: 'HTTP/1.2', input: `GET / HTTP/1.2\r\n${H}\r\n`, status: 505 },
    { name: 'HTTP/0.9', input: `GET / HTTP/0.9\r\n${H}\r\n`, status: 505 },
    // header fields
    { name: 'obs-fold', input: `GET / HTTP/1.1\r\n${H}X-A: 1\r\n 2\r\n\r\n`, status: 400 },
    { name: 'whitespace before the first field', input: `GET / HTTP/1.1\r\n ${H}\r\n`, status: 400 },
    { name: 'space before the colon', input: `GET / HTTP/1.1\r\n${H}Content-Length : 0\r\n\r\n`, status: 400 },
    { name: 'tab before the colon', input: `GET / HTTP/1.1\r\n${H}Transfer-Encoding\t: chunked\r\n\r\n`, status: 400 },
    { name: 'space inside a name', input: `GET / HTTP/1.1\r\n${H}X A: 1\r\n\r\n`, status: 400 },
    { name: 'invalid name character', input: `GET / HTTP/1.1\r\n${H}X@A: 1\r\n\r\n`, status: 400 },
    { name: 'empty name', input: `GET / HTTP/1.1\r\n${H}: 1\r\n\r\n`, status: 400 },
    { name: 'no colon', input: `GET / HTTP/1.1\r\n${H}X-A\r\n\r\n`, status: 400 },
    { name: 'NUL in a value', input: `GET / HTTP/1.1\r\n${H}X-A: a\x00b\r\n\r\n`, status: 400 },
    { name: 'control character in a value', input: `GET / HTTP/1.1\r\n${H}X-A: a\x1bb\r\n\r\n`, status: 400 },
    { name: 'DEL in a value', input: `GET / HTTP/1.1\r\n${H}X-A: a\x7fb\r\n\r\n`, status: 400 },
    { name: 'head over the limit (complete)', input: `GET / HTTP/1.1\r\n${H}X-A: ${'a'.repeat(200)}\r\n\r\n`, status: 431, limits: { maxHeaderSize: 128 } },
    { name: 'head over the limit (incomplete)', input: `GET / HTTP/1.1\r\n${H}X-A: ${'a'.repeat(200)}`, status: 431, limits: { maxHeaderSize: 128 } },
    { name: 'default limit 16 KiB', input: `GET / HTTP/1.1\r\n${H}X-A: ${'a'.repeat(16 * 1024)}\r\n\r\n`, status: 431 },
    // framing
    { name: 'HTTP/1.1 without Host', input: 'GET / HTTP/1.1\r\n\r\n', status: 400 },
    { name: 'two Host fields', input: `GET / HTTP/1.1\r\n${H}${H}\r\n`, status: 400 },
    { name: 'Transfer-Encoding and Content-Length', input: `POST / HTTP/1.1\r\n${H}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, status: 400 },
    { name: 'Transfer-Encoding: gzip (chunked not last)', input: `POST / HTTP/1.1\r\n${H}Transfer-Encoding: gzip\r\n\r\n`, status: 400 },
    { name: 'Transfer-Encoding: chunked, gzip', input: `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked, gzip\r\n\r\n`, status: 400 },
    { name: 'Transfer-Encoding: chunked twice (two fields)', input: `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n`, status: 400 },
    { name: 'Transfer-Encoding: gzip, chunked', input: `POST / HTTP/1.1\r\n${H}Transfer-Encoding: gzip, chunked\r\n\r\n`, status: 501 },
    { name: 'Transfer-Encoding: xchunked', input: `POST / HTTP/1.1\r\n${H}Transfer-Encoding: xchunked\r\n\r\n`, status: 400 },
    { name: 'Transfer-Encoding in HTTP/1.0', input: 'POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', status: 400 },
    { name: 'equal duplicate Content-Length fields (as llhttp)', input: `POST / HTTP/1.1\r\n${H}Content-Length: 2\r\nContent-Length: 2\r\n\r\nok`, status: 400 },
    { name: 'two Authorization fields', input: `GET / HTTP/1.1\r\n${H}Authorization: Bearer a\r\nauthorization: Bearer b\r\n\r\n`, status: 400 },
    { name: 'conflicting Content-Length fields', input: `POST / HTTP/1.1\r\n${H}Content-Length: 1\r\nContent-Length: 2\r\n\r\nxx`, status: 400 },
    { name: 'Content-Length list', input: `POST / HTTP/1.1\r\n${H}Content-Length: 1, 1\r\n\r\nx`, status: 400 },
    { name: 'negative Content-Length', input: `POST / HTTP/1.1\r\n${H}Content-Length: -1\r\n\r\n`, status: 400 },
    { name: 'signed Content-Length', input: `POST / HTTP/1.1\r\n${H}Content-Length: +1\r\n\r\nx`, status: 400 },
    { name: 'hex Content-Length', input: `POST / HTTP/1.1\r\n${H}Content-Length: 0x1\r\n\r\nx`, status: 400 },
    { name: 'empty Content-Length', input: `POST / HTTP/1.1\r\n${H}Content-Length:\r\n\r\n`, status: 400 },
    { name: 'Content-Length over the body limit', input: `POST / HTTP/1.1\r\n${H}Content-Length: 11\r\n\r\n`, status: 413, limits: { maxBodySize: 10 } },
    { name: 'Content-Length over 2^53', input: `POST / HTTP/1.1\r\n${H}Content-Length: 99999999999999999999999\r\n\r\n`, status: 413 },
    { name: 'default body limit 32 MiB', input: `POST / HTTP/1.1\r\n${H}Content-Length: ${32 * 1024 * 1024 + 1}\r\n\r\n`, status: 413 },
    // chunked body
    const_chunked('invalid chunk size', 'zz\r\n', 400),
    const_chunked('0x prefix', '0x5\r\nhello\r\n0\r\n\r\n', 400),
    const_chunked('empty chunk size', '\r\nhello\r\n0\r\n\r\n', 400),
    const_chunked('negative chunk size', '-5\r\nhello\r\n0\r\n\r\n', 400),
    const_chunked('space after the size without extension', '5 \r\nhello\r\n0\r\n\r\n', 400),
    const_chunked('bare LF after the size', '5\nhello\r\n0\r\n\r\n', 400),
    const_chunked('data not followed by CRLF', '5\r\nhelloX\r\n0\r\n\r\n', 400),
    const_chunked('data followed by bare LF', '5\r\nhello\n0\r\n\r\n', 400),
    const_chunked('control character in an extension', '5;a=\x01\r\nhello\r\n0\r\n\r\n', 400),
    const_chunked('whitespace before ; (as llhttp)', '5 ;a\r\nhello\r\n0\r\n\r\n', 400),
    const_chunked('whitespace after ;', '5; a\r\nhello\r\n0\r\n\r\n', 400),
    const_chunked('non-token extension name', '5;a@b\r\nhello\r\n0\r\n\r\n', 400),
    const_chunked('non-token extension value', '5;a=b c\r\nhello\r\n0\r\n\r\n', 400),
    const_chunked('empty extension', '5;\r\nhello\r\n0\r\n\r\n', 400),
    const_chunked('unterminated quoted extension value', '5;a="b\r\nhello\r\n0\r\n\r\n', 400),
    const_chunked('Content-Length in trailers', '0\r\nContent-Length: 5\r\n\r\n', 400),
    const_chunked('Transfer-Encoding in trailers', '0\r\nTRANSFER-ENCODING: chunked\r\n\r\n', 400),
    const_chunked('endless extension', `5;${'a'.repeat(5000)}`, 400),
    const_chunked('chunk size overflow', 'ffffffffffffffffffffffff\r\n', 413),
    const_chunked('bare LF in trailers', '0\r\nX: 1\n\r\n', 400),
    const_chunked('invalid trailer field', '0\r\nX 1\r\n\r\n', 400),
    { ...const_chunked('chunks over the body limit', '6\r\nhello!\r\n6\r\nhello!\r\n0\r\n\r\n', 413), limits: { maxBodySize: 10 } },
    { ...const_chunked('trailers over the limit', `0\r\nX: ${'a'.repeat(300)}\r\n\r\n`, 431), limits: { maxHeaderSize: 256 } },
  ];

  function const_chunked(name: string, body: string, status: number) {
    return { name: `chunked: ${name}`, input: `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n${body}`, status };
  }

  for (const c of cases) {
    it(`${c.name} -> ${c.status}`, () => {
      const whole = parse([c.input], c.limits);
      expect(whole.error?.status).toBe(c.status);
      expect(whole.messages).toHaveLength(0);
      // Byte by byte: the same refusal (the size limits may be reached earlier, never later).
      expect(parse([...c.input], c.limits).error?.status).toBe(c.status);
    });
  }

  it('keeps failing once failed', () => {
    const parser = new RequestParser();
    parser.feed(Buffer.from('GET / HTTP/2.0\r\nHost: h\r\n\r\n'));
    expect(() => parser.next()).toThrow(HttpParseError);
    parser.feed(Buffer.from('GET / HTTP/1.1\r\nHost: h\r\n\r\n'));
    expect(() => parser.next()).toThrow('HTTP version not supported');
  });

  it('refuses a pipelined request after a valid one without losing the valid one', () => {
    const result = parse([`GET /ok HTTP/1.1\r\n${H}\r\nGET /bad HTTP/1.1\r\n${H}X : y\r\n\r\n`]);
    expect(result.messages.map((m) => m.head.url)).toEqual(['/ok']);
    expect(result.error?.status).toBe(400);
  });
});

describe('http1 parser: hand-over (takeUnconsumed)', () => {
  it('returns every byte of a head that was not taken, and of what follows it', () => {
    const input = '\r\nGET /other HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nab';
    const parser = new RequestParser();
    parser.feed(Buffer.from(input.slice(0, 10)));
    expect(parser.next()).toBe(NEED_MORE);
    parser.feed(Buffer.from(input.slice(10)));
    expect(parser.next()).toBe(HEAD);
    // The empty line before the request line is not part of any request.
    expect(parser.takeUnconsumed().toString()).toBe(input.slice(2));
    expect(parser.pendingBytes).toBe(0);
    expect(parser.idle).toBe(true);
  });

  it('returns the next request in full after a completed one', () => {
    const second = 'POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nz';
    const parser = new RequestParser();
    parser.feed(Buffer.from(`GET /a HTTP/1.1\r\nHost: h\r\n\r\n${second}`));
    expect(parser.next()).toBe(HEAD);
    expect(parser.next()).toBe(MESSAGE);
    expect(parser.takeUnconsumed().toString()).toBe(second);
  });

  it('returns the bytes of a head it could not parse', () => {
    const input = 'GET / HTTP/1.1\r\nHost: h\r\nBad Name: 1\r\n\r\n';
    const parser = new RequestParser();
    parser.feed(Buffer.from(input));
    expect(() => parser.next()).toThrow(HttpParseError);
    expect(parser.takeUnconsumed().toString()).toBe(input);
  });

  it('refuses once the body is being consumed', () => {
    const parser = new RequestParser();
    parser.feed(Buffer.from('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\na'));
    expect(parser.next()).toBe(HEAD);
    expect(parser.next()).toBe(NEED_MORE);
    expect(() => parser.takeUnconsumed()).toThrow(/already consumed/);
  });
});

describe('hasToken', () => {
  it.each([
    ['close', 'close', true],
    ['Keep-Alive', 'keep-alive', true],
    [' upgrade ,  Close ', 'close', true],
    ['closed', 'close', false],
    ['keep-alive-ish, x', 'keep-alive', false],
    ['', 'close', false],
    [',,close,,', 'close', true],
  ])('%j has %j: %s', (value, token, expected) => {
    expect(hasToken(value, token)).toBe(expected);
  });
});
