/**
 * The relay's HTTP/1.1 parser (src/api/http1/parser.ts) against llhttp (node:http's parser): the
 * same byte streams, smuggling cases first, go to both, and both must frame them alike (the same
 * requests: method, target, header fields, body; in the same number) or both refuse. The two share
 * the public port (a connection starts on one and may move to the other), so a request one of them
 * frames differently from the other is a request that could be smuggled past either.
 *
 * llhttp is observed through a real node:http server on a socket. The parser is driven as the lean
 * server drives it when it takes every request of a connection.
 *
 * A few streams the parser refuses while llhttp accepts them are listed apart (STRICTER): refusing
 * is always safe here (a connection's first request that does not parse goes to node:http; later
 * ones are refused), and each of them is asserted as such, so a change on either side shows.
 */
import http, { type IncomingMessage } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpParseError, MESSAGE, NEED_MORE, RequestParser } from '../../src/api/http1/parser.js';

interface Framed {
  method: string;
  url: string;
  /** Field names lower-cased; repeated fields joined with ', ' (cookie: '; '), as the parser joins them. */
  headers: Record<string, string>;
  body: string;
}

interface Outcome {
  requests: Framed[];
  refused: boolean;
}

const H = 'Host: x\r\n';
const CHUNKED = `POST /c HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n`;
const NEXT = `GET /next HTTP/1.1\r\n${H}\r\n`;

/** Both parsers must agree on these: the same requests, or a refusal by both. */
const SAME: Array<{ name: string; bytes: string }> = [
  // Content-Length and Transfer-Encoding together.
  { name: 'CL then TE', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${NEXT}` },
  { name: 'TE then CL', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n${NEXT}` },
  { name: 'TE chunked with CL 0', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n` },
  { name: 'CL+TE on a pipelined second request', bytes: `GET /1 HTTP/1.1\r\n${H}\r\nPOST /a HTTP/1.1\r\n${H}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n` },
  // Duplicate Content-Length.
  { name: 'duplicate identical CL', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 2\r\nContent-Length: 2\r\n\r\nok${NEXT}` },
  { name: 'duplicate different CL', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 2\r\nContent-Length: 7\r\n\r\nok${NEXT}` },
  { name: 'CL as a list', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 2, 2\r\n\r\nok${NEXT}` },
  { name: 'empty CL', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: \r\n\r\n${NEXT}` },
  // Transfer codings.
  { name: 'TE: chunked, identity', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: chunked, identity\r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'TE: identity', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: identity\r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'TE: xchunked', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: xchunked\r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'TE in upper case', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: CHUNKED\r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'TE twice', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'whitespace before the colon of TE', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding : chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  // obs-fold.
  { name: 'obs-fold in an ordinary field', bytes: `GET /a HTTP/1.1\r\n${H}X-A: one\r\n two\r\n\r\n${NEXT}` },
  { name: 'obs-fold in TE', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding:\r\n chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'obs-fold with a tab in CL', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length:\r\n\t2\r\n\r\nok${NEXT}` },
  { name: 'whitespace before the first field', bytes: `GET /a HTTP/1.1\r\n Host: x\r\n\r\n${NEXT}` },
  // Bare LF and bare CR.
  { name: 'bare LF after the request line', bytes: `GET /a HTTP/1.1\n${H}\r\n${NEXT}` },
  { name: 'bare LF after a field', bytes: `GET /a HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n${NEXT}` },
  { name: 'bare LF ending the head', bytes: `GET /a HTTP/1.1\r\n${H}\n${NEXT}` },
  { name: 'bare LF after a chunk size', bytes: `${CHUNKED}2\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'bare LF after chunk data', bytes: `${CHUNKED}2\r\nok\n0\r\n\r\n${NEXT}` },
  { name: 'bare LF after the last chunk', bytes: `${CHUNKED}2\r\nok\r\n0\n\r\n${NEXT}` },
  { name: 'bare CR in a field value', bytes: `GET /a HTTP/1.1\r\n${H}X-A: a\rb\r\n\r\n${NEXT}` },
  // Chunk sizes.
  { name: 'chunk size over 2^64', bytes: `${CHUNKED}10000000000000002\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'chunk size of 20 hex digits', bytes: `${CHUNKED}fffffffffffffffffff2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'chunk size with leading zeros', bytes: `${CHUNKED}0002\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'chunk size 0x2', bytes: `${CHUNKED}0x2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'chunk size +2', bytes: `${CHUNKED}+2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'chunk size -2', bytes: `${CHUNKED}-2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'chunk size with a space before CRLF', bytes: `${CHUNKED}2 \r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'empty chunk size', bytes: `${CHUNKED}\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'chunk data longer than its size', bytes: `${CHUNKED}2\r\nokk\r\n0\r\n\r\n${NEXT}` },
  // Chunk extensions.
  { name: 'token and quoted chunk extensions', bytes: `${CHUNKED}2;a=b;c;d="e f\\"g"\r\nok\r\n0;x=y\r\n\r\n${NEXT}` },
  { name: 'whitespace before ; in a chunk extension', bytes: `${CHUNKED}2 ;a=b\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'whitespace after ; in a chunk extension', bytes: `${CHUNKED}2; a=b\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'an empty chunk extension', bytes: `${CHUNKED}2;\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'a non-token chunk extension name', bytes: `${CHUNKED}2;a@b\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'whitespace around = in a chunk extension', bytes: `${CHUNKED}2;a = b\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'bare LF in a quoted chunk extension', bytes: `${CHUNKED}2;a="b\nc"\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'bare CR in a chunk extension', bytes: `${CHUNKED}2;a=b\rc\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'an unterminated quoted chunk extension', bytes: `${CHUNKED}2;a="b\r\nok\r\n0\r\n\r\n${NEXT}` },
  // Trailers.
  { name: 'ordinary trailers', bytes: `${CHUNKED}2\r\nok\r\n0\r\nX-Trailer: 1\r\n\r\n${NEXT}` },
  { name: 'CL in trailers', bytes: `${CHUNKED}2\r\nok\r\n0\r\nContent-Length: 5\r\n\r\n${NEXT}` },
  { name: 'obs-fold in trailers', bytes: `${CHUNKED}2\r\nok\r\n0\r\nX-T: a\r\n b\r\n\r\n${NEXT}` },
  // Signed and otherwise malformed lengths.
  { name: 'CL +2', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: +2\r\n\r\nok${NEXT}` },
  { name: 'CL -2', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: -2\r\n\r\nok${NEXT}` },
  { name: 'CL 0x2', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 0x2\r\n\r\nok${NEXT}` },
  { name: 'CL 2 2', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 2 2\r\n\r\nok${NEXT}` },
  { name: 'CL with leading zeros', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 002\r\n\r\nok${NEXT}` },
  { name: 'CL with whitespace around it', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length:  2 \r\n\r\nok${NEXT}` },
  { name: 'CL over 2^64', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 18446744073709551618\r\n\r\nok${NEXT}` },
  // NUL, CR and other controls.
  { name: 'NUL in a field value', bytes: `GET /a HTTP/1.1\r\n${H}X-A: a\0b\r\n\r\n${NEXT}` },
  { name: 'NUL in a field name', bytes: `GET /a HTTP/1.1\r\n${H}X\0A: a\r\n\r\n${NEXT}` },
  { name: 'NUL in the request target', bytes: `GET /a\0b HTTP/1.1\r\n${H}\r\n${NEXT}` },
  { name: 'DEL in a field value', bytes: `GET /a HTTP/1.1\r\n${H}X-A: a\x7fb\r\n\r\n${NEXT}` },
  { name: 'a vertical tab in a field value', bytes: `GET /a HTTP/1.1\r\n${H}X-A: a\x0bb\r\n\r\n${NEXT}` },
  { name: 'a tab in a field value', bytes: `GET /a HTTP/1.1\r\n${H}X-A: a\tb\r\n\r\n${NEXT}` },
  { name: 'latin1 in a field value', bytes: `GET /a HTTP/1.1\r\n${H}X-A: caf\xe9\r\n\r\n${NEXT}` },
  { name: 'a space in a field name', bytes: `GET /a HTTP/1.1\r\n${H}X A: a\r\n\r\n${NEXT}` },
  { name: 'an empty field name', bytes: `GET /a HTTP/1.1\r\n${H}: a\r\n\r\n${NEXT}` },
  // Request line.
  // Alone: node:http answers its 400 but goes on framing what follows on the connection.
  { name: 'HTTP/1.1 without Host', bytes: 'GET /a HTTP/1.1\r\n\r\n' },
  { name: 'a lower-case version', bytes: `GET /a http/1.1\r\n${H}\r\n${NEXT}` },
  { name: 'empty lines before a request', bytes: `\r\n\r\nGET /a HTTP/1.1\r\n${H}\r\n` },
  { name: 'a lower-case method', bytes: `get /a HTTP/1.1\r\n${H}\r\n${NEXT}` },
  { name: 'an unknown method', bytes: `FOO /a HTTP/1.1\r\n${H}\r\n${NEXT}` },
  { name: 'a fragment in the target', bytes: `GET /a#b HTTP/1.1\r\n${H}\r\n${NEXT}` },
  { name: 'an absolute-form target', bytes: `GET http://x/a?b HTTP/1.1\r\n${H}\r\n${NEXT}` },
  { name: 'TE: chunked with a trailing comma', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: chunked,\r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'CL with a trailing tab', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 2\t\r\n\r\nok${NEXT}` },
  { name: 'CL with a leading tab', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length:\t2\r\n\r\nok${NEXT}` },
  { name: 'CL with a tab then a space', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 2\t \r\n\r\nok${NEXT}` },
  { name: 'TE: chunked with a trailing tab', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: chunked\t\r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'TE: chunked with a trailing space', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: chunked \r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  { name: 'Host with a trailing tab', bytes: `GET /a HTTP/1.1\r\nHost: x\t\r\n\r\n${NEXT}` },
  { name: 'a field value that is only a tab', bytes: `GET /a HTTP/1.1\r\n${H}X-A:\t\r\n\r\n${NEXT}` },
  { name: 'a field value ending in a tab', bytes: `GET /a HTTP/1.1\r\n${H}X-A: a\t\r\n\r\n${NEXT}` },
  { name: 'a head over 16 KiB', bytes: `GET /a HTTP/1.1\r\n${H}X-A: ${'a'.repeat(17 * 1024)}\r\n\r\n${NEXT}` },
  { name: 'bytes after a zero Content-Length that are no request', bytes: `POST /a HTTP/1.1\r\n${H}Content-Length: 0\r\n\r\nok\r\n\r\n` },
  // Pipelined requests.
  { name: 'two pipelined GETs', bytes: `GET /1 HTTP/1.1\r\n${H}\r\n${NEXT}` },
  { name: 'a POST body then a GET', bytes: `POST /1 HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello${NEXT}` },
  { name: 'a chunked body then a GET', bytes: `${CHUNKED}5\r\nhello\r\n0\r\n\r\n${NEXT}` },
  { name: 'a CL shorter than what follows (the rest is the next request)', bytes: `POST /1 HTTP/1.1\r\n${H}Content-Length: 3\r\n\r\nabcGET /2 HTTP/1.1\r\n${H}\r\n` },
  { name: 'a body that looks like a request', bytes: `POST /1 HTTP/1.1\r\n${H}Content-Length: ${NEXT.length}\r\n\r\n${NEXT}${NEXT}` },
  { name: 'three requests, the last one cut short', bytes: `GET /1 HTTP/1.1\r\n${H}\r\n${NEXT}POST /3 HTTP/1.1\r\n${H}Content-Length: 9\r\n\r\nabc` },
  { name: 'duplicate fields joined', bytes: `GET /a HTTP/1.1\r\n${H}Accept: a\r\nAccept: b\r\nCookie: c=1\r\nCookie: d=2\r\n\r\n${NEXT}` },
  { name: 'a keep-alive HTTP/1.0 request then another', bytes: `GET /1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n${NEXT}` },
];

/**
 * The parser refuses these and llhttp takes them. Refusing is the safe side (see above); each is
 * here so a change on either side is noticed.
 */
const STRICTER: Array<{ name: string; bytes: string }> = [
  // llhttp frames these as chunked; the parser supports no other coding (501).
  { name: 'TE: gzip, chunked', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  // Which Host or credentials would count is a guess (node:http keeps the first).
  { name: 'Host twice', bytes: `GET /a HTTP/1.1\r\n${H}Host: y\r\n\r\n${NEXT}` },
  { name: 'Authorization twice', bytes: `GET /a HTTP/1.1\r\n${H}Authorization: a\r\nAuthorization: b\r\n\r\n${NEXT}` },
  // Chunked framing is HTTP/1.1's; llhttp frames it on an HTTP/1.0 request too.
  { name: 'TE in an HTTP/1.0 request', bytes: `POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n` },
  // Only HTTP/1.0 and 1.1 are served by the parser (505).
  { name: 'HTTP/2.0 on the request line', bytes: `GET /a HTTP/2.0\r\n${H}\r\n` },
  // The request line's grammar has exactly one space after the method.
  { name: 'two spaces after the method', bytes: `GET  /a HTTP/1.1\r\n${H}\r\n${NEXT}` },
  // llhttp skips the empty list element; the parser does not guess at a malformed list.
  { name: 'TE: chunked with a leading comma', bytes: `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: ,chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n${NEXT}` },
  // The parser bounds a chunk-size line (endless extensions are a known way to hold a connection).
  { name: 'chunk extensions over 4 KiB', bytes: `${CHUNKED}2;a=${'b'.repeat(5000)}\r\nok\r\n0\r\n\r\n${NEXT}` },
];

/** Joins a field's values as the parser does (node:http's own join keeps only the first of some fields). */
function joined(distinct: NodeJS.Dict<string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(distinct)) out[name] = values!.join(name === 'cookie' ? '; ' : ', ');
  return out;
}

/** The parser, as the lean server drives it when it takes every request: what it frames, until it refuses. */
function parserOutcome(bytes: string): Outcome {
  const parser = new RequestParser();
  const requests: Framed[] = [];
  try {
    parser.feed(Buffer.from(bytes, 'latin1'));
    for (let step = parser.next(); step !== NEED_MORE; step = parser.next()) {
      if (step !== MESSAGE) continue;
      const head = parser.head!;
      requests.push({ method: head.method, url: head.url, headers: { ...head.headers }, body: parser.body.toString('latin1') });
    }
  } catch (error) {
    if (!(error instanceof HttpParseError)) throw error;
    return { requests, refused: true };
  }
  return { requests, refused: false };
}

describe('http1 parser and llhttp frame the same bytes alike', () => {
  let server: http.Server;
  let port = 0;
  /** What node:http framed on each connection. Exchanges run one at a time: a new connection is the current one. */
  const outcomes = new WeakMap<net.Socket, Outcome>();
  let current: Outcome = { requests: [], refused: false };

  beforeAll(async () => {
    server = http.createServer((req: IncomingMessage, res) => {
      const outcome = outcomes.get(req.socket)!;
      const parts: Buffer[] = [];
      req.on('data', (part: Buffer) => parts.push(part));
      req.on('end', () => {
        outcome.requests.push({ method: req.method!, url: req.url!, headers: joined(req.headersDistinct), body: Buffer.concat(parts).toString('latin1') });
        res.end('ok');
      });
    });
    server.on('connection', (socket: net.Socket) => outcomes.set(socket, current));
    server.on('clientError', (error: NodeJS.ErrnoException, socket: net.Socket) => {
      // The client closing on an unfinished request (the tests close after each exchange) is no refusal.
      if (error.code !== 'ECONNRESET' && error.code !== 'HPE_INVALID_EOF_STATE') outcomes.get(socket)!.refused = true;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** llhttp's framing of `bytes`: sent on a new connection, read until it closes or falls quiet. */
  function llhttpOutcome(bytes: string): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      const outcome: Outcome = { requests: [], refused: false };
      current = outcome;
      const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes, 'latin1'));
      let quiet: NodeJS.Timeout | undefined;
      let received = '';
      const finish = () => {
        clearTimeout(quiet);
        socket.destroy();
        // The server side may still be handling the close: give it a turn.
        setImmediate(() => {
          // Some refusals node:http answers itself (a 4xx) without a clientError.
          resolve({ requests: outcome.requests, refused: outcome.refused || /HTTP\/1\.1 [45]\d\d /.test(received) });
        });
      };
      const waitQuiet = () => {
        clearTimeout(quiet);
        quiet = setTimeout(finish, 100);
      };
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        received += chunk;
        waitQuiet();
      });
      socket.on('close', finish);
      socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? finish() : reject(error)));
      waitQuiet();
    });
  }

  for (const c of SAME) {
    it(c.name, async () => {
      const reference = await llhttpOutcome(c.bytes);
      expect(parserOutcome(c.bytes)).toEqual(reference);
    });
  }

  for (const c of STRICTER) {
    it(`${c.name}: only the parser refuses`, async () => {
      const reference = await llhttpOutcome(c.bytes);
      expect(reference.refused).toBe(false);
      const outcome = parserOutcome(c.bytes);
      expect(outcome.refused).toBe(true);
      // What it framed before refusing, llhttp framed too.
      expect(reference.requests.slice(0, outcome.requests.length)).toEqual(outcome.requests);
    });
  }
});
