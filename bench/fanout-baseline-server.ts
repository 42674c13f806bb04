import { createServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { serveBareFanout, turnStatusChangedData } from './fanout-bare-child';

/**
 * The baseline of bench/fanout.bench.ts: a bare node:http + ws server, no GraphQL, no
 * database, no gateway code. It speaks just enough graphql-transport-ws for the bench's
 * clients (acknowledges `connection_init`, remembers the operation id of `subscribe`), and
 * on `publish` builds ONE frame shaped like the gateway's turnStatusChanged result and
 * pushes that same buffer to every socket. What it measures is the floor: the sockets, the
 * kernel and the clients, which the gateway cannot go below. It answers the same IPC
 * commands as fanout-server.ts.
 */

/** The operation id each socket subscribed with (the bench's clients all send one subscribe). */
const subscribed = new Map<WebSocket, string>();
let sequence = 0;

function frame(operationId: string, sessionId: string): Buffer {
  return Buffer.from(JSON.stringify({ id: operationId, type: 'next', payload: { data: turnStatusChangedData(sequence, sessionId) } }));
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
  let serialisations = 0;
  await serveBareFanout(http, wss, {
    sessionId: 'baseline-session-0000000000000000',
    publish: (sessionId) => {
      sequence++;
      // One buffer per operation id (the bench's clients share one), sent as text to every socket.
      const frames = new Map<string, Buffer>();
      for (const [ws, operationId] of subscribed) {
        let bytes = frames.get(operationId);
        if (!bytes) {
          frames.set(operationId, (bytes = frame(operationId, sessionId)));
          serialisations++;
        }
        ws.send(bytes, { binary: false });
      }
    },
    subscribers: () => subscribed.size,
    serialisations: () => serialisations,
  });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
