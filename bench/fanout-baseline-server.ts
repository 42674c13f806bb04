import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { PhaseProfiler } from './fanout-profiler';

/**
 * The baseline of bench/fanout.bench.ts: a bare node:http + ws server, no GraphQL, no
 * database, no gateway code. It speaks just enough graphql-transport-ws for the bench's
 * clients (acknowledges `connection_init`, remembers the operation id of `subscribe`), and
 * on `publish` builds ONE frame shaped like the gateway's turnStatusChanged result and
 * pushes that same buffer to every socket. What it measures is the floor: the sockets, the
 * kernel and the clients, which the gateway cannot go below. It answers the same IPC
 * commands as fanout-server.ts.
 */
type Command = { readonly id: number } & (
  | { readonly type: 'session' }
  | { readonly type: 'publish'; readonly sessionId: string }
  | { readonly type: 'stats' }
  | { readonly type: 'cpu' }
  | { readonly type: 'profile'; readonly action: 'heap' | 'start' | 'stop'; readonly label: string }
);

/** The operation id each socket subscribed with (the bench's clients all send one subscribe). */
const subscribed = new Map<WebSocket, string>();
let sequence = 0;

function frame(operationId: string, sessionId: string): Buffer {
  const at = new Date().toISOString();
  const turnId = `turn-${String(sequence).padStart(32, '0')}`;
  const user = { id: 'bench-owner', text: 'Bench Owner' };
  return Buffer.from(
    JSON.stringify({
      id: operationId,
      type: 'next',
      payload: {
        data: {
          turnStatusChanged: {
            eventId: String(sequence),
            sequenceNumber: sequence,
            previousStatus: null,
            status: 'PENDING',
            statusTimeStamp: at,
            createdByUser: user,
            turn: { id: turnId, status: 'PENDING', sequenceNumber: sequence, instructionSummary: 'benchmark turn' },
            session: { id: sessionId, name: 'watched by many', turnCount: sequence, lastTurnStatus: 'PENDING', ownerUser: user },
          },
        },
      },
    }),
  );
}

async function main(): Promise<void> {
  const http = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server: http, path: '/graphql', handleProtocols: (protocols) => (protocols.has('graphql-transport-ws') ? 'graphql-transport-ws' : false) });
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const message = JSON.parse((data as Buffer).toString('utf8')) as { type: string; id?: string };
      if (message.type === 'connection_init') ws.send('{"type":"connection_ack"}');
      else if (message.type === 'subscribe' && message.id !== undefined) subscribed.set(ws, message.id);
    });
    ws.on('close', () => subscribed.delete(ws));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const reply = (message: Record<string, unknown>) => process.send?.(message);
  const profiler = new PhaseProfiler(process.env.BENCH_PROFILE_DIR);
  let serialisations = 0;
  process.on('message', (command: Command) => {
    switch (command.type) {
      case 'profile': {
        const done = command.action === 'heap' ? Promise.resolve(profiler.heapSnapshot(command.label)) : command.action === 'start' ? profiler.start() : profiler.stop(command.label);
        void done.then(() => reply({ id: command.id }));
        return;
      }
      case 'session':
        return reply({ id: command.id, sessionId: 'baseline-session-0000000000000000' });
      case 'publish': {
        const started = process.hrtime.bigint();
        sequence++;
        // One buffer per operation id (the bench's clients share one), sent as text to every socket.
        const frames = new Map<string, Buffer>();
        for (const [ws, operationId] of subscribed) {
          let bytes = frames.get(operationId);
          if (!bytes) {
            frames.set(operationId, (bytes = frame(operationId, command.sessionId)));
            serialisations++;
          }
          ws.send(bytes, { binary: false });
        }
        return reply({ id: command.id, started: String(started), committed: String(started) });
      }
      case 'cpu': {
        const { user, system } = process.cpuUsage();
        return reply({ id: command.id, micros: user + system });
      }
      case 'stats':
        (globalThis as { gc?: () => void }).gc?.();
        return reply({ id: command.id, rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed, subscribers: subscribed.size, connections: wss.clients.size, executions: 0, serialisations, slowConsumersDropped: 0 });
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
