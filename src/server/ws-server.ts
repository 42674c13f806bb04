import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  execute,
  getOperationAST,
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { GRAPHQL_TRANSPORT_WS_PROTOCOL, type SubscribePayload } from 'graphql-ws';
import { WebSocketServer } from 'ws';
import type { Config } from '../config';
import type { Caller } from '../domain/caller';
import { isDomainError } from '../domain/errors';
import type { GraphQLContext } from '../graphql/context';
import { formatResult, type SubscriptionExecutor } from '../graphql/live/subscription-executor';
import { createLoaders, type Loaders } from '../graphql/loaders';
import type { Protection } from '../graphql/protection';
import type { Services } from '../graphql/services';
import type { Logger } from '../logger';
import { authenticate } from './auth';
import { Connection, type Accepted, type ConnectionPolicy, type Operation, type Refused } from './ws-connection';
import { ConnectionsPerUser, DocumentCache, GatewayCloseCode, MAX_TOKEN_BYTES } from './ws-limits';

export interface WebSocketDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly services: Services;
  readonly protection: Protection;
  readonly schema: GraphQLSchema;
  readonly executor: SubscriptionExecutor;
  readonly httpServer: Server;
}

export interface GraphQLWebSocketServer {
  /** Open WebSocket connections. */
  readonly connections: number;
  /** Estimated bytes held by the parsed-document cache. */
  readonly documentCacheBytes: number;
  /** Sockets closed with 4413 so far because they did not read (WS_MAX_BUFFERED_BYTES). */
  readonly slowConsumersDropped: number;
  /** Refuses new WebSocket upgrades (shutdown has begun). */
  stopAccepting(): void;
  /** Closes every connection with 1001 (going away), waiting at most `graceMs` for clients to answer. */
  close(graceMs: number): Promise<void>;
}

/** Parsed documents shared by every connection; a bound in (estimated) bytes, not entries. */
const DOCUMENT_CACHE_BYTES = 16 * 1024 * 1024;
const PATH = '/graphql';
/** Token expiry is checked this often (a JWT's `exp` has one-second resolution anyway). */
const EXPIRY_SWEEP_MS = 1_000;
/** Keepalive pings go out in this many slices of the interval, not to every socket at once. */
const PING_SLICES = 10;

/**
 * GraphQL over WebSocket (graphql-transport-ws) on the HTTP server's port and path.
 * `connection_init` carries `{ authorization: "Bearer <jwt>" }`; a missing or bad token
 * closes with 4403, and the socket closes with 4403 when the token expires. Every
 * operation gets the HTTP transport's parser (token limit), validation rules (depth,
 * aliases, directives) and cost check (with its variables), without introspection in
 * production. Limits per socket and user: message size (1009), token size (4431),
 * sockets per user (4429), operations at once per socket (TOO_MANY_SUBSCRIPTIONS, the
 * socket stays open), unsent bytes (4413, see ws-connection.ts). Subscriptions run through
 * the SubscriptionExecutor; queries and mutations are executed as usual, per operation.
 */
export function attachGraphQLWebSocket(deps: WebSocketDeps): GraphQLWebSocketServer {
  const { config, logger, services, protection, schema, executor } = deps;
  const { live } = config;
  // ws closes a socket whose message is larger with 1009 (message too big).
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: live.wsMaxPayloadBytes,
    handleProtocols: (protocols) => (protocols.has(GRAPHQL_TRANSPORT_WS_PROTOCOL) ? GRAPHQL_TRANSPORT_WS_PROTOCOL : false),
  });
  const rules: ValidationRule[] = [
    ...specifiedRules,
    ...protection.validationRules,
    ...(config.isProduction ? [NoSchemaIntrospectionCustomRule] : []),
  ];
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

  /** Many subscribers send the same few documents: parse and validate each once, share the AST. */
  const documents = new DocumentCache(DOCUMENT_CACHE_BYTES);
  const connectionsPerUser = new ConnectionsPerUser(live.wsMaxConnectionsPerUser);
  const userKey = (caller: Caller) => `${caller.orgId}\n${caller.userId}`;
  const parseAndValidate = (query: string): DocumentNode | GraphQLError[] => {
    let document: DocumentNode;
    try {
      document = protection.parse(query);
    } catch (e) {
      if (!(e instanceof GraphQLError)) throw e;
      return [new GraphQLError(e.message, { nodes: e.nodes, source: e.source, positions: e.positions, extensions: { code: 'GRAPHQL_PARSE_FAILED' } })];
    }
    const errors = validate(schema, document, rules);
    // Coded as Apollo codes them over HTTP, whatever code a rule chose.
    if (errors.length > 0) {
      return errors.map((e) => new GraphQLError(e.message, { nodes: e.nodes, source: e.source, positions: e.positions, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
    }
    return document;
  };
  const refuse = (operation: Operation, errors: readonly GraphQLError[]) =>
    operation.error(errors.map((error) => protection.formatError(error.toJSON(), error)));
  const format = { logger, formatError: protection.formatError };

  const policy: ConnectionPolicy = {
    logger,
    initTimeoutMs: live.wsConnectionInitTimeoutMs,
    maxBufferedBytes: live.wsMaxBufferedBytes,

    accept(params): Accepted | Refused {
      const authorization = params?.authorization;
      if (typeof authorization === 'string' && Buffer.byteLength(authorization) > MAX_TOKEN_BYTES) {
        return { code: GatewayCloseCode.TokenTooLarge, reason: `Token larger than ${MAX_TOKEN_BYTES} bytes` };
      }
      let authenticated: ReturnType<typeof authenticate>;
      try {
        authenticated = authenticate(typeof authorization === 'string' ? authorization : null, config.jwtSecret);
      } catch (e) {
        if (isDomainError(e)) return { code: GatewayCloseCode.Forbidden, reason: 'Forbidden' };
        throw e;
      }
      const { caller, expiresAt } = authenticated;
      if (!connectionsPerUser.tryOpen(userKey(caller))) {
        return { code: GatewayCloseCode.TooManyRequests, reason: `Too many connections: at most ${live.wsMaxConnectionsPerUser} per user` };
      }
      return { caller, expiresAt: expiresAt.getTime() };
    },

    async run(operation: Operation, payload: SubscribePayload, caller: Caller, running: number): Promise<void> {
      if (running > live.wsMaxSubscriptionsPerConnection) {
        return refuse(operation, [
          new GraphQLError(`At most ${live.wsMaxSubscriptionsPerConnection} operations may run at once on one connection; complete one first`, {
            extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit: live.wsMaxSubscriptionsPerConnection },
          }),
        ]);
      }
      let document = documents.get(payload.query);
      if (!document) {
        const checked = parseAndValidate(payload.query);
        if (Array.isArray(checked)) return refuse(operation, checked);
        document = checked;
        documents.set(payload.query, document);
      }
      const variables = payload.variables ?? null;
      const tooCostly = protection.checkCost(document, payload.operationName, variables);
      if (tooCostly) return refuse(operation, [tooCostly]);
      const kind = getOperationAST(document, payload.operationName)?.operation;
      if (!kind) return refuse(operation, [new GraphQLError('Unable to identify operation')]);
      let loaders: Loaders | null = null;
      const context: GraphQLContext = {
        caller,
        services,
        // Made on first use: a subscription's own context never needs them (each event gets fresh ones).
        get loaders() {
          return (loaders ??= createLoaders(caller, services));
        },
        requestId: randomUUID(),
        budget: protection.responseBudget(),
      };
      const args: ExecutionArgs = { schema, document, operationName: payload.operationName ?? null, variableValues: variables, contextValue: context };
      if (kind === 'subscription') {
        const subscribed = await executor.subscribe(args, operation);
        if ('live' in subscribed) return operation.attach(subscribed.live);
        operation.result(formatResult(subscribed.result, context, format));
      } else {
        operation.result(formatResult(await execute(args), context, format));
      }
      operation.complete();
    },

    closed(connection) {
      connections.delete(connection);
      if (connection.accepted) connectionsPerUser.close(userKey(connection.accepted.caller));
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
    get documentCacheBytes() {
      return documents.bytes;
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
