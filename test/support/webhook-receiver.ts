/**
 * A webhook receiver for tests: a real node:http server on 127.0.0.1 that records every request
 * and checks its signature with the webhook's secret (as a receiver in production would). It can
 * answer an error status, or stop listening (connection refused) and listen again on its port.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../../src/webhooks/signature.js';

export interface ReceivedDelivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The signature header checked against `secret` (if set) at arrival. */
  signatureValid: boolean;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedDelivery[];
  /** The status answered from now on (default 200). */
  answer(status: number): void;
  /** The secret signatures are checked against. */
  secret: string | null;
  /** Stops listening: connections are refused until `start`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  let status = 200;
  let server: Server | null = null;
  const receiver: WebhookReceiver = {
    url: '',
    port,
    received: [],
    secret: null,
    answer(next) {
      status = next;
    },
    async start() {
      const s = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const header = String(req.headers['x-switchyard-signature'] ?? '');
          const signatureValid = receiver.secret !== null && verifySignature(receiver.secret, header, body, Math.floor(Date.now() / 1000));
          let json: Record<string, unknown> = {};
          try {
            json = JSON.parse(body) as Record<string, unknown>;
          } catch {
            json = {};
          }
          receiver.received.push({ path: req.url ?? '', headers: req.headers, body, json, signatureValid });
          res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'not now');
        });
      });
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(receiver.port, '127.0.0.1', () => resolve());
      });
      server = s;
      receiver.port = (s.address() as AddressInfo).port;
      receiver.url = `http://127.0.0.1:${receiver.port}`;
    },
    async stop() {
      const s = server;
      server = null;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    close() {
      return receiver.stop();
    },
  };
  await receiver.start();
  return receiver;
}
