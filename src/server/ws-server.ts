import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { Context } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
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
  /** Refuses new WebSocket upgrades (shutdown has begun). */
  stopAccepting(): void;
  /** Closes every connection with 1001 (going away), waiting at most `graceMs` for clients to answer. */
  close(graceMs: number): Promise<void>;
}

interface ConnectionState {
  readonly caller: Caller;
  /** The caller's key in the per-user connection count. */
  readonly user: string;
  expiry: NodeJS.Timeout | null;
}

type ConnectionParams = { readonly authorization?: unknown };
/** Parsed documents shared by every connection; a bound in (estimated) bytes, not entries. */
const DOCUMENT_CACHE_BYTES = 16 * 1024 * 1024;
const PATH = '/graphql';
/** setTimeout takes at most a signed 32-bit delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * GraphQL over WebSocket (graphql-transport-ws) on the HTTP server's port and path.
 * `connection_init` carries `{ authorization: "Bearer <jwt>" }`; a missing or bad token
 * closes with 4403, and the socket closes with 4403 when the token expires. Every
 * operation gets the HTTP transport's parser (token limit), validation rules (depth,
 * aliases, directives) and cost check (with its variables), without introspection in
 * production. Limits per socket and user: message size (1009), token size (4431),
 * sockets per user (4429), operations at once per socket (TOO_MANY_SUBSCRIPTIONS, the
 * socket stays open). Subscriptions run through the SubscriptionExecutor; queries and
 * mutations are executed as usual, per operation.
 */
export function attachGraphQLWebSocket(deps: WebSocketDeps): GraphQLWebSocketServer {
  const { config, logger, services, protection, schema, executor } = deps;
  const { live } = config;
  // ws closes a socket whose message is larger with 1009 (message too big).
  const wss = new WebSocketServer({ noServer: true, maxPayload: live.wsMaxPayloadBytes });
  const rules: ValidationRule[] = [
    ...specifiedRules,
    ...protection.validationRules,
    ...(config.isProduction ? [NoSchemaIntrospectionCustomRule] : []),
  ];
  const states = new WeakMap<Context<ConnectionParams>, ConnectionState>();
  let accepting = true;

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (!accepting || path !== PATH) {
      socket.end(`HTTP/1.1 ${accepting ? '404 Not Found' : '503 Service Unavailable'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  };
  deps.httpServer.on('upgrade', onUpgrade);

  /** Many subscribers send the same few documents: parse and validate each once, share the AST. */
  const documents = new DocumentCache(DOCUMENT_CACHE_BYTES);
  const connectionsPerUser = new ConnectionsPerUser(live.wsMaxConnectionsPerUser);
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

  const formatErrors = (errors: readonly GraphQLError[]): GraphQLFormattedError[] =>
    errors.map((error) => protection.formatError(error.toJSON(), error));

  const disposable = useServer<ConnectionParams>(
    {
      schema,
      isProd: config.isProduction,
      connectionInitWaitTimeout: live.wsConnectionInitTimeoutMs,
      // Answering `false` makes graphql-ws close with 4403; a socket closed here first keeps its own code.
      onConnect: (ctx) => {
        const authorization = ctx.connectionParams?.authorization;
        const socket = ctx.extra.socket;
        if (typeof authorization === 'string' && Buffer.byteLength(authorization) > MAX_TOKEN_BYTES) {
          socket.close(GatewayCloseCode.TokenTooLarge, `Token larger than ${MAX_TOKEN_BYTES} bytes`);
          return false;
        }
        let authenticated: ReturnType<typeof authenticate>;
        try {
          authenticated = authenticate(typeof authorization === 'string' ? authorization : null, config.jwtSecret);
        } catch (e) {
          if (isDomainError(e)) return false;
          throw e;
        }
        const { caller, expiresAt } = authenticated;
        const user = `${caller.orgId}\n${caller.userId}`;
        if (!connectionsPerUser.tryOpen(user)) {
          socket.close(GatewayCloseCode.TooManyRequests, `Too many connections: at most ${live.wsMaxConnectionsPerUser} per user`);
          return false;
        }
        const state: ConnectionState = { caller, user, expiry: null };
        states.set(ctx, state);
        closeAtExpiry(socket, state, expiresAt);
        return true;
      },
      onSubscribe: (ctx, _id, payload) => {
        const state = states.get(ctx);
        if (!state) return [new GraphQLError('Unauthorized', { extensions: { code: 'UNAUTHENTICATED' } })];
        // graphql-ws has already registered this operation: it counts itself.
        if (Object.keys(ctx.subscriptions).length > live.wsMaxSubscriptionsPerConnection) {
          return [
            new GraphQLError(
              `At most ${live.wsMaxSubscriptionsPerConnection} operations may run at once on one connection; complete one first`,
              { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit: live.wsMaxSubscriptionsPerConnection } },
            ),
          ];
        }
        let document = documents.get(payload.query);
        if (!document) {
          const checked = parseAndValidate(payload.query);
          if (Array.isArray(checked)) return checked;
          document = checked;
          documents.set(payload.query, document);
        }
        const variables = payload.variables ?? null;
        const tooCostly = protection.checkCost(document, payload.operationName, variables);
        if (tooCostly) return [tooCostly];
        const caller = state.caller;
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
        return {
          schema,
          document,
          operationName: payload.operationName ?? null,
          variableValues: variables,
          contextValue: context,
        };
      },
      // Shared results arrive already formatted (errors coded and masked once per event, not per
      // subscriber); graphql-ws only needs an async iterable, and onNext passes them on unchanged.
      subscribe: executor.subscribe as unknown as (args: ExecutionArgs) => Promise<AsyncIterable<ExecutionResult> | ExecutionResult>,
      onNext: (_ctx, _id, _payload, args, result) =>
        formatResult(result, args.contextValue as GraphQLContext, { logger, formatError: protection.formatError }),
      onError: (_ctx, _id, _payload, errors) => formatErrors(errors),
      onClose: (ctx) => {
        const state = states.get(ctx);
        if (!state) return;
        states.delete(ctx);
        if (state.expiry) clearTimeout(state.expiry);
        connectionsPerUser.close(state.user);
      },
    },
    wss,
    live.wsKeepAliveMs,
  );
  // ws closes a socket itself on a protocol error (1009 for a message over WS_MAX_PAYLOAD_BYTES,
  // 1002, 1007); graphql-ws would print each one to stderr. They are the client's doing.
  wss.on('connection', (socket: WebSocket) => {
    socket.removeAllListeners('error');
    socket.on('error', (err) => logger.debug({ err }, 'websocket protocol error; ws closed the socket'));
  });

  function closeAtExpiry(socket: WebSocket, state: ConnectionState, expiresAt: Date): void {
    const wait = expiresAt.getTime() - Date.now();
    state.expiry = setTimeout(
      () => {
        if (wait > MAX_TIMER_MS) closeAtExpiry(socket, state, expiresAt);
        else socket.close(GatewayCloseCode.Forbidden, 'Forbidden: token expired');
      },
      Math.max(0, Math.min(wait, MAX_TIMER_MS)),
    );
  }

  return {
    get connections() {
      return wss.clients.size;
    },
    get documentCacheBytes() {
      return documents.bytes;
    },
    stopAccepting() {
      accepting = false;
    },
    async close(graceMs: number) {
      accepting = false;
      let timer: NodeJS.Timeout | undefined;
      // dispose() sends 1001 to every client and resolves when they all closed.
      await Promise.race([
        disposable.dispose(),
        new Promise<void>((r) => {
          timer = setTimeout(r, graceMs);
        }),
      ]);
      clearTimeout(timer);
      for (const socket of wss.clients) socket.terminate();
      deps.httpServer.off('upgrade', onUpgrade);
      logger.debug('websocket server closed');
    },
  };
}
