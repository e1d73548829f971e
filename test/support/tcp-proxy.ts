/**
 * A TCP proxy in front of a service (the NATS bus), to make it die and come back as a network
 * outage would: `cut()` drops every connection and stops listening; `restore()` listens again on
 * the same port.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** host:port clients connect to. */
  readonly port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const serve = () =>
    createServer((client) => {
      const upstream = createConnection({ host: targetHost, port: targetPort });
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
  const listen = (server: Server, port: number) => new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
  let server: Server | null = serve();
  const port = await listen(server, 0);
  const stop = async () => {
    const closing = server;
    server = null;
    for (const s of sockets) s.destroy();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };
  return {
    port,
    cut: stop,
    async restore() {
      if (server) return;
      server = serve();
      await listen(server, port);
    },
    close: stop,
  };
}
