import type { Server } from 'node:http';
import type { ExecuteBudget } from '../budgets/execute-budget.port';
import type { GatewayDatabase } from '../gateway-database';
import type { EventBus } from '../events/event-bus.port';
import type { EventPruner } from '../events/event-pruner';
import type { TurnEventSequencer } from '../events/turn-event-sequencer';
import type { Logger } from '../logger';
import type { Tracing } from '../observability/tracing';
import type { Orchestrator } from '../orchestrator/orchestrator';
import type { Retrieval } from '../retrieval/create-retrieval';
import type { GraphQLSseServer } from '../server/sse-server';
import type { GraphQLWebSocketServer } from '../server/ws-server';

export interface ShutdownHook {
  readonly name: string;
  readonly hook: () => Promise<void>;
}

/** What a gateway's shutdown stops, drains or closes (the composition root built them). */
export interface ShutdownParts {
  /** SHUTDOWN_GRACE_MS: the bound of each drain step and of the hooks. */
  readonly graceMs: number;
  readonly logger: Logger;
  readonly websockets: GraphQLWebSocketServer;
  readonly sse: GraphQLSseServer;
  readonly orchestrator: Pick<Orchestrator, 'inFlightCount' | 'drain'>;
  readonly server: Server;
  /** Apollo's drain plugin stops new requests and waits for in-flight ones. */
  readonly apollo: { stop(): Promise<void> };
  readonly budget: Pick<ExecuteBudget, 'close'>;
  readonly pruner: Pick<EventPruner, 'stop'>;
  /** Unsubscribes the composition root's own bus listeners. */
  readonly stopListeners: readonly (() => void)[];
  readonly statuses: Pick<TurnEventSequencer, 'close'>;
  readonly bus: Pick<EventBus, 'close'>;
  readonly retrieval: Pick<Retrieval, 'close'>;
  readonly db: Pick<GatewayDatabase, 'close'>;
  readonly blobs: { close?(): Promise<void> };
  readonly tracing: Pick<Tracing, 'shutdown'>;
}

/**
 * A gateway's drain and release (SIGTERM, SIGINT, Gateway.close()), run once however often
 * it is asked for. The order below is the contract of README "Running several instances".
 */
export class GatewayShutdown {
  private readonly hooks: ShutdownHook[];
  private closing: Promise<void> | null = null;
  private isDraining = false;

  constructor(
    private readonly parts: ShutdownParts,
    hooks: readonly ShutdownHook[],
  ) {
    this.hooks = [...hooks];
  }

  /** True from the first close() on: /readyz answers 503 so the balancer stops routing here. */
  get draining(): boolean {
    return this.isDraining;
  }

  /** Runs `hook` on shutdown, after HTTP requests drained and before the database closes. */
  add(name: string, hook: () => Promise<void>): void {
    this.hooks.push({ name, hook });
  }

  close(): Promise<void> {
    return (this.closing ??= this.drainAndRelease());
  }

  private async drainAndRelease(): Promise<void> {
    const { graceMs, logger, websockets, sse, orchestrator, server, apollo } = this.parts;
    // The drain (README "Running several instances"): /readyz answers 503 from now on, so
    // the balancer stops routing here. Subscribers are sent away at once (1012, streams
    // ended) and resume elsewhere with afterEventId, since every instance publishes every
    // event. New turns are refused (retryable); the turns running here may finish within
    // the grace while requests are still served, then connections drain within another.
    this.isDraining = true;
    logger.info({ turnsInFlight: orchestrator.inFlightCount, websockets: websockets.connections, eventStreams: sse.streams }, 'draining');
    websockets.stopAccepting();
    sse.close();
    await Promise.all([websockets.close(graceMs), orchestrator.drain(graceMs)]);
    const forced = setTimeout(() => server.closeAllConnections(), graceMs);
    try {
      await apollo.stop();
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    } finally {
      clearTimeout(forced);
      await runHooks(this.hooks, graceMs, logger);
      await this.release();
    }
  }

  private async release(): Promise<void> {
    const { budget, pruner, stopListeners, statuses, bus, retrieval, db, blobs, tracing } = this.parts;
    await budget.close();
    await pruner.stop();
    for (const stop of stopListeners) stop();
    statuses.close();
    await bus.close();
    await retrieval.close();
    await db.close();
    // Last: the shutdown hooks above may still write a turn's partial answer.
    await blobs.close?.();
    await tracing.shutdown();
  }
}

/** Shutdown hooks run side by side; one that fails or overruns the bound does not hold up the others. */
async function runHooks(hooks: readonly ShutdownHook[], boundMs: number, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<void>((r) => {
    timer = setTimeout(() => {
      logger.warn({ boundMs }, 'shutdown hooks did not finish in time');
      r();
    }, boundMs);
  });
  await Promise.race([
    Promise.all(
      hooks.map(({ name, hook }) =>
        hook().catch((err: unknown) => logger.error({ err, hook: name }, 'shutdown hook failed')),
      ),
    ),
    overrun,
  ]);
  clearTimeout(timer);
}
