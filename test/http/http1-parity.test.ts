/**
 * The relay's own HTTP/1.1 server against llhttp (node:http): the same raw bytes go to both, and
 * both must answer with the same statuses and close (or keep) the connection alike. The lean
 * server is observed twice: with the case as a connection's first request (where a head it
 * cannot parse is handed to node:http) and after a request it served (where it answers itself).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttp1Server, type Http1Server } from '../../src/api/http1/server.js';

const CHUNKED = 'POST /fast HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n';
const NEXT = 'GET /next HTTP/1.1\r\nHost: x\r\n\r\n';

/** Raw requests; each is followed by NEXT on the same connection (answered only if it stays open). */
const CASES: Array<{ name: string; bytes: string }> = [
  // What llhttp refuses and the lean parser used to accept.
  { name: 'duplicate identical Content-Length', bytes: 'POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok' },
  { name: 'whitespace before ; in a chunk extension', bytes: `${CHUNKED}2 ;a=b\r\nok\r\n0\r\n\r\n` },
  { name: 'whitespace after ; in a chunk extension', bytes: `${CHUNKED}2; a=b\r\nok\r\n0\r\n\r\n` },
  { name: 'a non-token chunk extension name', bytes: `${CHUNKED}2;a@b\r\nok\r\n0\r\n\r\n` },
  { name: 'a non-token chunk extension value', bytes: `${CHUNKED}2;a=b c\r\nok\r\n0\r\n\r\n` },
  { name: 'an empty chunk extension', bytes: `${CHUNKED}2;\r\nok\r\n0\r\n\r\n` },
  { name: 'whitespace around = in a chunk extension', bytes: `${CHUNKED}2;a = b\r\nok\r\n0\r\n\r\n` },
  { name: 'Content-Length in chunked trailers', bytes: `${CHUNKED}2\r\nok\r\n0\r\nContent-Length: 5\r\n\r\n` },
  { name: 'Transfer-Encoding in chunked trailers', bytes: `${CHUNKED}2\r\nok\r\n0\r\ntransfer-encoding: chunked\r\n\r\n` },
  { name: 'Expect: 200-ok (417, then the connection goes on)', bytes: 'POST /fast HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\nok' },
  // Valid controls: accepted by both.
  { name: 'a plain Content-Length body', bytes: 'POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok' },
  { name: 'token and quoted chunk extensions', bytes: `${CHUNKED}2;a=b;c;d="e f\\"g"\r\nok\r\n0;x=y\r\n\r\n` },
  { name: 'ordinary trailers', bytes: `${CHUNKED}2\r\nok\r\n0\r\nX-Trailer: 1\r\nHost: y\r\n\r\n` },
  { name: 'Expect: 100-continue in a list', bytes: 'POST /fast HTTP/1.1\r\nHost: x\r\nExpect: foo, 100-Continue\r\nContent-Length: 2\r\n\r\nok' },
];

interface Outcome {
  statuses: number[];
  /** Bodies of the 2xx answers (what each server read of the request body). */
  bodies: string[];
  closed: boolean;
}

/** Sends `bytes`; collects answers until the server closes or nothing comes for a moment. */
function exchange(port: number, bytes: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    let quiet: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(quiet);
      socket.destroy();
      const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])).filter((s) => s !== 100);
      const bodies = [...received.matchAll(/\r\n\r\n(ok \d+)/g)].map((m) => m[1]!);
      resolve({ statuses, bodies, closed });
    };
    const waitQuiet = () => {
      clearTimeout(quiet);
      quiet = setTimeout(() => finish(false), 150);
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      waitQuiet();
    });
    socket.on('close', () => finish(true));
    socket.on('error', reject);
    waitQuiet();
  });
}

/** Both servers answer every request they take with "ok <body bytes read>". */
function nodeHandler(req: IncomingMessage, res: ServerResponse) {
  let n = 0;
  req.on('data', (chunk: Buffer) => (n += chunk.length));
  req.on('end', () => res.end(`ok ${n}`));
}

describe('lean HTTP/1.1 server: same answers as llhttp (node:http)', () => {
  let bare: http.Server;
  let fallback: http.Server;
  let lean: Http1Server;
  let barePort = 0;
  let leanPort = 0;

  beforeAll(async () => {
    bare = http.createServer(nodeHandler);
    fallback = http.createServer(nodeHandler);
    lean = createHttp1Server({
      accepts: (method, path) => method === 'POST' && path === '/fast',
      handle: (request, response) => response.send(200, {}, `ok ${request.body.length}`),
      fallback,
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => lean.listen(0, '127.0.0.1', resolve));
    barePort = (bare.address() as AddressInfo).port;
    leanPort = (lean.address() as AddressInfo).port;
  });
  afterAll(async () => {
    lean.closeAllConnections();
    bare.closeAllConnections();
    await new Promise((resolve) => lean.close(resolve));
    await new Promise((resolve) => bare.close(resolve));
  });

  for (const c of CASES) {
    it(c.name, async () => {
      const reference = await exchange(barePort, c.bytes + NEXT);
      expect(reference.statuses.length).toBeGreaterThan(0);
      // As the first request of a connection.
      expect(await exchange(leanPort, c.bytes + NEXT)).toEqual(reference);
      // After a request the lean server served itself on that connection.
      const warm = 'POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nw';
      const after = await exchange(leanPort, warm + c.bytes + NEXT);
      expect({ ...after, statuses: after.statuses.slice(1), bodies: after.bodies.slice(1) }).toEqual(reference);
    });
  }
});
