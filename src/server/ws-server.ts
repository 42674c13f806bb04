import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GRAPHQL_TRANSPORT_WS_PROTOCOL, type SubscribePayload } from 'graphql-ws';
import { WebSocketServer } from 'ws';
import type { Config } from '../config';
import type { Caller } from '../domain/caller';
import type { Logger } from '../logger';
import type { LiveOperations } from './live-operations';
import { Connection, type Accepted, type ConnectionPolicy, type Operation, type Refused } from './ws-connection';
import { ConnectionsPerUser, GatewayCloseCode, userKeyOf } from './ws-limits';

export interface WebSocketDeps {
  readonly config: Config;
  readonly logger: Logger;
  /** Auth, limits and execution shared with the SSE transport. */
  readonly operations: LiveOperations;
  readonly httpServer: Server;
}

export interface GraphQLWebSocketServer {
  /** Open WebSocket connections. */
  readonly connections: number;
  /** Sockets closed with 4413 so far because they did not read (WS_MAX_BUFFERED_BYTES). */
  readonly slowConsumersDropped: number;
  /** Refuses new WebSocket upgrades (shutdown has begun). */
  stopAccepting(): void;
  /** Closes every connection with 1001 (going away), waiting at most `graceMs` for clients to answer. */
  close(graceMs: number): Promise<void>;
}

const PATH = '/graphql';
/** Token expiry is checked this often (a JWT's `exp` has one-second resolution anyway). */
const EXPIRY_SWEEP_MS = 1_000;
/** Keepalive pings go out in this many slices of the interval, not to every socket at once. */
const PING_SLICES = 10;

/**
 * GraphQL over WebSocket (graphql-transport-ws) on the HTTP server's port and path.
 * `connection_init` carries `{ authorization: "Bearer <jwt>" }`; a missing or bad token
 * closes with 4403, and the socket closes with 4403 when the token expires. Every
 * operation is checked and run by LiveOperations (live-operations.ts), as over SSE.
 * Limits per socket and user: message size (1009), token size (4431),
 * sockets per user (4429), operations at once per socket (TOO_MANY_SUBSCRIPTIONS, the
 * socket stays open), unsent bytes (4413, see ws-connection.ts).
 */
export function attachGraphQLWebSocket(deps: WebSocketDeps): GraphQLWebSocketServer {
  const { config, logger, operations } = deps;
  const { live } = config;
  // ws closes a socket whose message is larger with 1009 (message too big).
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: live.wsMaxPayloadBytes,
    handleProtocols: (protocols) => (protocols.has(GRAPHQL_TRANSPORT_WS_PROTOCOL) ? GRAPHQL_TRANSPORT_WS_PROTOCOL : false),
  });
  const connections = new Set<Connection>();
  let accepting = true;
  let slowConsumersDropped = 0;
  let opened = 0;

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (!accepting || path !== PATH) {
      socket.end(`HTTP/1.1 ${accepting ? '404 Not Found' : '503 Service Unavailable'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => connections.add(new Connection(ws, policy, opened++ % PING_SLICES)));
  };
  deps.httpServer.on('upgrade', onUpgrade);

  const connectionsPerUser = new ConnectionsPerUser(live.wsMaxConnectionsPerUser);

  const policy: ConnectionPolicy = {
    logger,
    initTimeoutMs: live.wsConnectionInitTimeoutMs,
    maxBufferedBytes: live.wsMaxBufferedBytes,

    async accept(params): Promise<Accepted | Refused> {
      const admission = await operations.admit(params?.authorization);
      if (admission.kind !== 'accepted') {
        const code = { 'token-too-large': GatewayCloseCode.TokenTooLarge, forbidden: GatewayCloseCode.Forbidden, unavailable: GatewayCloseCode.TryAgainLater }[admission.kind];
        return { code, reason: admission.reason };
      }
      const { caller, expiresAt } = admission;
      if (!connectionsPerUser.tryOpen(userKeyOf(caller))) {
        return { code: GatewayCloseCode.TooManyRequests, reason: `Too many connections: at most ${live.wsMaxConnectionsPerUser} per user` };
      }
      return { caller, expiresAt };
    },

    run: (operation: Operation, payload: SubscribePayload, caller: Caller, running: number) => operations.run(operation, payload, caller, running, 'ws'),

    closed(connection) {
      connections.delete(connection);
      if (connection.accepted) connectionsPerUser.close(userKeyOf(connection.accepted.caller));
    },

    slowConsumer(connection, bufferedBytes) {
      slowConsumersDropped++;
      const caller = connection.accepted?.caller;
      logger.warn({ userId: caller?.userId, orgId: caller?.orgId, bufferedBytes }, 'WebSocket closed: slow consumer (WS_MAX_BUFFERED_BYTES)');
    },
  };

  const expirySweep = setInterval(() => {
    const now = Date.now();
    for (const connection of connections) {
      const expiresAt = connection.accepted?.expiresAt;
      if (expiresAt !== undefined && expiresAt <= now) connection.close(GatewayCloseCode.Forbidden, 'Forbidden: token expired');
    }
  }, EXPIRY_SWEEP_MS);
  expirySweep.unref();
  const keepAlive = live.wsKeepAliveMs > 0 ? startKeepAlive(connections, live.wsKeepAliveMs) : null;

  return {
    get connections() {
      return wss.clients.size;
    },
    get slowConsumersDropped() {
      return slowConsumersDropped;
    },
    stopAccepting() {
      accepting = false;
    },
    async close(graceMs: number) {
      accepting = false;
      clearInterval(expirySweep);
      if (keepAlive) clearInterval(keepAlive);
      for (const connection of connections) connection.close(GatewayCloseCode.GoingAway, 'Going away');
      const deadline = Date.now() + graceMs;
      while (wss.clients.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      deps.httpServer.off('upgrade', onUpgrade);
      logger.debug('websocket server closed');
    },
  };
}

/**
 * Pings every socket once per interval and drops one that did not answer the previous
 * ping. The sockets are pinged a slice at a time, so ten thousand pings do not all go
 * out (and hold up the process) at the same moment.
 */
function startKeepAlive(connections: Set<Connection>, intervalMs: number): NodeJS.Timeout {
  let tick = 0;
  const timer = setInterval(
    () => {
      const slice = tick++ % PING_SLICES;
      for (const connection of connections) {
        if (connection.pingSlot !== slice) continue;
        const { socket } = connection;
        if (socket.readyState !== socket.OPEN) continue;
        if (!connection.alive) {
          socket.terminate();
          continue;
        }
        connection.alive = false;
        socket.ping();
      }
    },
    Math.max(1, Math.floor(intervalMs / PING_SLICES)),
  );
  timer.unref();
  return timer;
}
