import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** How a proxy cuts the line: `reset` closes every socket and refuses new ones; `blackhole` keeps them open and forwards nothing. */
export type CutMode = 'reset' | 'blackhole';

/** A TCP proxy the test can cut: simulates a server that goes away and comes back. */
export interface TcpProxy {
  readonly port: number;
  /**
   * `reset` (default): drops every open connection and refuses new ones until `restore`.
   * `blackhole`: a partition that drops packets. Open connections stay open but nothing
   * passes, not even a close; new connections are accepted and then ignored. Connections
   * from before or during the cut stay dead after `restore` (their state was lost, as at a
   * NAT or firewall that forgot them); only new ones work again.
   */
  cut(mode?: CutMode): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let mode: CutMode | null = null;
  const sockets = new Set<Socket>();
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const swallow = (s: Socket) => {
    s.on('data', () => undefined);
  };
  // allowHalfOpen: a FIN from one side is not answered by Node for us, so a blackhole stays silent.
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    track(client);
    if (mode === 'reset') return void client.destroy();
    if (mode === 'blackhole') return swallow(client);
    const upstream = connect({ port: targetPort, host: targetHost, allowHalfOpen: true });
    track(upstream);
    const pair = { client, upstream };
    pairs.add(pair);
    client.pipe(upstream).pipe(client);
    const forget = () => pairs.delete(pair);
    client.on('close', () => (upstream.destroy(), forget()));
    upstream.on('close', () => (client.destroy(), forget()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    cut(how: CutMode = 'reset') {
      mode = how;
      if (how === 'reset') {
        for (const s of sockets) s.destroy();
        return;
      }
      for (const { client, upstream } of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        swallow(client);
        swallow(upstream);
      }
      pairs.clear();
    },
    restore() {
      mode = null;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
