import { createServer } from 'node:http';
import { buildSchema, parse, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { handleProtocols, makeServer, type WebSocket as GraphQLWsSocket } from 'graphql-ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { LiveStream, takeSharedPayload } from '../src/server/ws-live-stream';
import { serveBareFanout, turnStatusChangedData } from './fanout-bare-child';

/**
 * The `graphql-ws` scenario of bench/fanout.bench.ts: the baseline's bare node:http + ws
 * server with graphql-ws's server (`makeServer`) as the protocol, and no gateway: no auth,
 * no database, no execution. Each subscription is a LiveStream (the gateway's), fed one
 * prebuilt payload per event; the socket adapter splices it into graphql-ws's message as
 * the gateway's does. What it measures is the floor of the design the gateway keeps
 * (graphql-ws's per-operation loop, one send per socket) on this machine; it answers the same
 * IPC commands as fanout-server.ts.
 */

const schema = buildSchema('type Query { x: Int } type Subscription { turnStatusChanged: Int }');
const document = parse('subscription { turnStatusChanged }');
const TAIL = 'null}';
const streams = new Set<LiveStream>();
let sequence = 0;

function payload(sessionId: string): Buffer {
  return Buffer.from(JSON.stringify({ data: turnStatusChangedData(sequence, sessionId) }));
}

/** graphql-ws's socket: a `next` whose payload stood in for shared bytes goes out as head, bytes, brace (as the gateway's adapter does, without its cache). */
class Socket implements GraphQLWsSocket {
  constructor(readonly ws: WebSocket) {}
  get protocol(): string {
    return this.ws.protocol;
  }
  send(data: string): void {
    const shared = takeSharedPayload();
    if (!shared) return this.ws.send(data);
    const head = Buffer.byteLength(data) - TAIL.length;
    const frame = Buffer.allocUnsafe(head + shared.bytes.length + 1);
    frame.write(data, 0, head);
    shared.bytes.copy(frame, head);
    frame[frame.length - 1] = 0x7d;
    this.ws.send(frame, { binary: false });
  }
  close(code?: number, reason?: string): void {
    this.ws.close(code, reason);
  }
  onMessage(cb: (data: string) => Promise<void>): void {
    this.ws.on('message', (data) => void cb((data as Buffer).toString('utf8')));
  }
}

async function main(): Promise<void> {
  const server = makeServer({
    connectionInitWaitTimeout: 0,
    onSubscribe: (): ExecutionArgs => ({ schema, document }),
    subscribe: () => {
      const stream = new LiveStream({ congested: false });
      streams.add(stream);
      stream.attach({ cancel: () => streams.delete(stream) });
      return stream as unknown as AsyncGenerator<ExecutionResult>;
    },
    onNext: (_ctx, _id, _payload, _args, result) => result,
  });
  const http = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server: http, path: '/graphql', handleProtocols });
  wss.on('connection', (ws) => {
    const closed = server.opened(new Socket(ws), {});
    ws.once('close', (code, reason) => void closed(code, String(reason)));
  });
  await serveBareFanout(http, wss, {
    sessionId: 'graphql-ws-session-000000000000000',
    publish: (sessionId) => {
      sequence++;
      const bytes = payload(sessionId);
      for (const stream of streams) stream.sink.next(bytes);
    },
    subscribers: () => streams.size,
    serialisations: () => sequence,
  });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
