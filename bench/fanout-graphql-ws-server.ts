import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSchema, parse, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { handleProtocols, makeServer, type WebSocket as GraphQLWsSocket } from 'graphql-ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { LiveStream, takeSharedPayload } from '../src/server/ws-live-stream';
import { PhaseProfiler } from './fanout-profiler';

/**
 * The `graphql-ws` scenario of bench/fanout.bench.ts: the baseline's bare node:http + ws
 * server with graphql-ws's server (`makeServer`) as the protocol, and no gateway: no auth,
 * no database, no execution. Each subscription is a LiveStream (the gateway's), fed one
 * prebuilt payload per event; the socket adapter splices it into graphql-ws's message as
 * the gateway's does. What it measures is the floor of the design the gateway keeps
 * (graphql-ws's per-operation loop, one send per socket) on this machine; it answers the same
 * IPC commands as fanout-server.ts.
 */
type Command = { readonly id: number } & (
  | { readonly type: 'session' }
  | { readonly type: 'publish'; readonly sessionId: string }
  | { readonly type: 'stats' }
  | { readonly type: 'cpu' }
  | { readonly type: 'profile'; readonly action: 'heap' | 'start' | 'stop'; readonly label: string }
);

const schema = buildSchema('type Query { x: Int } type Subscription { turnStatusChanged: Int }');
const document = parse('subscription { turnStatusChanged }');
const TAIL = 'null}';
const streams = new Set<LiveStream>();
let sequence = 0;

function payload(sessionId: string): Buffer {
  const at = new Date().toISOString();
  const turnId = `turn-${String(sequence).padStart(32, '0')}`;
  const user = { id: 'bench-owner', text: 'Bench Owner' };
  const turnStatusChanged = {
    eventId: String(sequence),
    sequenceNumber: sequence,
    previousStatus: null,
    status: 'PENDING',
    statusTimeStamp: at,
    createdByUser: user,
    turn: { id: turnId, status: 'PENDING', sequenceNumber: sequence, instructionSummary: 'benchmark turn' },
    session: { id: sessionId, name: 'watched by many', turnCount: sequence, lastTurnStatus: 'PENDING', ownerUser: user },
  };
  return Buffer.from(JSON.stringify({ data: { turnStatusChanged } }));
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
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const reply = (message: Record<string, unknown>) => process.send?.(message);
  const profiler = new PhaseProfiler(process.env.BENCH_PROFILE_DIR);
  process.on('message', (command: Command) => {
    switch (command.type) {
      case 'profile': {
        const done = command.action === 'heap' ? Promise.resolve(profiler.heapSnapshot(command.label)) : command.action === 'start' ? profiler.start() : profiler.stop(command.label);
        void done.then(() => reply({ id: command.id }));
        return;
      }
      case 'session':
        return reply({ id: command.id, sessionId: 'graphql-ws-session-000000000000000' });
      case 'publish': {
        const started = process.hrtime.bigint();
        sequence++;
        const bytes = payload(command.sessionId);
        for (const stream of streams) stream.sink.next(bytes);
        return reply({ id: command.id, started: String(started), committed: String(started) });
      }
      case 'cpu': {
        const { user, system } = process.cpuUsage();
        return reply({ id: command.id, micros: user + system });
      }
      case 'stats':
        (globalThis as { gc?: () => void }).gc?.();
        return reply({
          id: command.id,
          rss: process.memoryUsage().rss,
          heapUsed: process.memoryUsage().heapUsed,
          subscribers: streams.size,
          connections: wss.clients.size,
          executions: 0,
          serialisations: sequence,
          slowConsumersDropped: 0,
        });
    }
  });
  process.once('SIGTERM', () => {
    for (const ws of wss.clients) ws.terminate();
    http.close(() => process.exit(0));
  });
  reply({ id: 0, url });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
