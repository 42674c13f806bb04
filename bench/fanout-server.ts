import 'reflect-metadata';
import { loadConfig } from '../src/config';
import type { Caller } from '../src/domain/caller';
import { createLogger } from '../src/logger';
import { createGateway } from '../src/main';
import { PhaseProfiler } from './fanout-profiler';

/**
 * One gateway instance for bench/fanout.bench.ts, run as a child process (so its RSS is
 * its own). The parent drives it over IPC: create a session, publish a status change (an
 * added turn), create a running turn and stream text into it (what the slow readers
 * follow), report memory and subscription counters.
 */
type Command = { readonly id: number } & (
  | { readonly type: 'session' }
  | { readonly type: 'publish'; readonly sessionId: string }
  | { readonly type: 'busyTurn' }
  | { readonly type: 'flood'; readonly sessionId: string; readonly turnId: string; readonly bytes: number }
  | { readonly type: 'stats' }
  | { readonly type: 'cpu' }
  | { readonly type: 'profile'; readonly action: 'heap' | 'start' | 'stop'; readonly label: string }
);

const FLOOD_DELTA_CHARS = 16 * 1024;

const owner: Caller = { userId: 'bench-owner', userName: 'Bench Owner', orgId: 'bench', orgName: 'Bench', roles: [] };

async function main(): Promise<void> {
  const gateway = await createGateway(loadConfig(), createLogger('error'));
  const url = await gateway.listen();
  const reply = (message: Record<string, unknown>) => process.send?.(message);
  let floodIndex = 0;
  const profiler = new PhaseProfiler(process.env.BENCH_PROFILE_DIR);
  process.on('message', (raw: Command) => {
    void (async () => {
      switch (raw.type) {
        case 'session': {
          const session = await gateway.sessions.lifecycle.createSession(owner, { name: 'watched by many', agentContextId: 'bench', isPublic: true });
          reply({ id: raw.id, sessionId: session.id });
          return;
        }
        case 'publish': {
          const started = process.hrtime.bigint();
          await gateway.sessions.lifecycle.addTurn(owner, raw.sessionId, { instructionSummary: 'benchmark turn' });
          reply({ id: raw.id, started: String(started), committed: String(process.hrtime.bigint()) });
          return;
        }
        case 'busyTurn': {
          const session = await gateway.sessions.lifecycle.createSession(owner, { name: 'streaming', agentContextId: 'bench', isPublic: true });
          const turn = await gateway.sessions.lifecycle.addTurn(owner, session.id, { instructionSummary: 'streams a lot of text' });
          reply({ id: raw.id, sessionId: session.id, turnId: turn.id });
          return;
        }
        case 'flood': {
          const text = 'x'.repeat(FLOOD_DELTA_CHARS);
          for (let sent = 0; sent < raw.bytes; sent += text.length) {
            gateway.output.append({ orgId: owner.orgId, sessionId: raw.sessionId, turnId: raw.turnId, index: floodIndex++, textDelta: text });
          }
          reply({ id: raw.id });
          return;
        }
        case 'profile': {
          if (raw.action === 'heap') profiler.heapSnapshot(raw.label);
          else if (raw.action === 'start') await profiler.start();
          else await profiler.stop(raw.label);
          reply({ id: raw.id });
          return;
        }
        case 'cpu': {
          const { user, system } = process.cpuUsage();
          reply({ id: raw.id, micros: user + system });
          return;
        }
        case 'stats': {
          (globalThis as { gc?: () => void }).gc?.();
          const { executor, websockets } = gateway.live;
          reply({
            id: raw.id,
            rss: process.memoryUsage().rss,
            heapUsed: process.memoryUsage().heapUsed,
            subscribers: executor.subscriberCount,
            connections: websockets.connections,
            executions: executor.executions,
            serialisations: executor.serialisations,
            slowConsumersDropped: websockets.slowConsumersDropped,
          });
          return;
        }
      }
    })().catch((e: unknown) => reply({ id: raw.id, error: String(e) }));
  });
  process.once('SIGTERM', () => {
    gateway.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  reply({ id: 0, url });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
