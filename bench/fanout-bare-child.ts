import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebSocketServer } from 'ws';
import { PhaseProfiler } from './fanout-profiler';

/** What bench/fanout.bench.ts asks of a fan-out server process (fanout-server.ts answers the same). */
type Command = { readonly id: number } & (
  | { readonly type: 'session' }
  | { readonly type: 'publish'; readonly sessionId: string }
  | { readonly type: 'stats' }
  | { readonly type: 'cpu' }
  | { readonly type: 'profile'; readonly action: 'heap' | 'start' | 'stop'; readonly label: string }
);

/** The `data` of a turnStatusChanged result as the gateway shapes it, for event `sequence`. */
export function turnStatusChangedData(sequence: number, sessionId: string): Record<string, unknown> {
  const at = new Date().toISOString();
  const turnId = `turn-${String(sequence).padStart(32, '0')}`;
  const user = { id: 'bench-owner', text: 'Bench Owner' };
  return {
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
  };
}

/** What a bare fan-out server (no gateway) does on the bench's commands. */
export interface BareFanout {
  readonly sessionId: string;
  publish(sessionId: string): void;
  readonly subscribers: () => number;
  readonly serialisations: () => number;
}

/**
 * Listens, then answers the bench's IPC commands for a bare fan-out server (the baseline and
 * the graphql-ws floor): its session, publishing, CPU, memory and profiles; ends on SIGTERM.
 */
export async function serveBareFanout(http: Server, wss: WebSocketServer, fanout: BareFanout): Promise<void> {
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
        return reply({ id: command.id, sessionId: fanout.sessionId });
      case 'publish': {
        const started = process.hrtime.bigint();
        fanout.publish(command.sessionId);
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
          subscribers: fanout.subscribers(),
          connections: wss.clients.size,
          executions: 0,
          serialisations: fanout.serialisations(),
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
