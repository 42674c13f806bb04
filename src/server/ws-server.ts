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
import { CloseCode, type Context } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Config } from '../config';
import type { Caller } from '../domain/caller';
import { isDomainError } from '../domain/errors';
import type { Protection } from '../graphql/armor';
import type { GraphQLContext } from '../graphql/context';
import { formatError } from '../graphql/error-mapping';
import { formatResult, type SubscriptionExecutor } from '../graphql/live/subscription-executor';
import { createLoaders, type Loaders } from '../graphql/loaders';
import type { Services } from '../graphql/services';
import type { Logger } from '../logger';
import { authenticate } from './auth';

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
  /** Refuses new WebSocket upgrades (shutdown has begun). */
  stopAccepting(): void;
  /** Closes every connection with 1001 (going away), waiting at most `graceMs` for clients to answer. */
  close(graceMs: number): Promise<void>;
}

interface ConnectionState {
  readonly caller: Caller;
  expiry: NodeJS.Timeout | null;
}

type ConnectionParams = { readonly authorization?: unknown };
const DOCUMENT_CACHE_SIZE = 500;
const PATH = '/graphql';
/** setTimeout takes at most a signed 32-bit delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * GraphQL over WebSocket (graphql-transport-ws) on the HTTP server's port and path.
 * `connection_init` carries `{ authorization: "Bearer <jwt>" }`; a missing or bad token
 * closes with 4403, and the socket closes with 4403 when the token expires. Every
 * operation gets the HTTP transport's parser (token limit) and validation rules (depth,
 * aliases, cost...), without introspection in production. Subscriptions run through the
 * SubscriptionExecutor; queries and mutations are executed as usual, per operation.
 */
export function attachGraphQLWebSocket(deps: WebSocketDeps): GraphQLWebSocketServer {
  const { config, logger, services, protection, schema, executor } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.limits.bodyLimitBytes });
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
  const documents = new DocumentCache(DOCUMENT_CACHE_SIZE);
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
    errors.map((error) => {
      const formatted = formatError(error.toJSON(), error);
      return { ...formatted, message: protection.maskSuggestions(formatted.message) };
    });

  const disposable = useServer<ConnectionParams>(
    {
      schema,
      isProd: config.isProduction,
      connectionInitWaitTimeout: config.live.wsConnectionInitTimeoutMs,
      onConnect: (ctx) => {
        const authorization = ctx.connectionParams?.authorization;
        try {
          const { caller, expiresAt } = authenticate(typeof authorization === 'string' ? authorization : null, config.jwtSecret);
          const state: ConnectionState = { caller, expiry: null };
          states.set(ctx, state);
          closeAtExpiry(ctx.extra.socket, state, expiresAt);
          return true;
        } catch (e) {
          // graphql-ws answers `false` with 4403 Forbidden.
          if (isDomainError(e)) return false;
          throw e;
        }
      },
      onSubscribe: (ctx, _id, payload) => {
        const state = states.get(ctx);
        if (!state) return [new GraphQLError('Unauthorized', { extensions: { code: 'UNAUTHENTICATED' } })];
        let document = documents.get(payload.query);
        if (!document) {
          const checked = parseAndValidate(payload.query);
          if (Array.isArray(checked)) return checked;
          document = checked;
          documents.set(payload.query, document);
        }
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
        };
        return {
          schema,
          document,
          operationName: payload.operationName ?? null,
          variableValues: payload.variables ?? null,
          contextValue: context,
        };
      },
      // Shared results arrive already formatted (errors coded and masked once per event, not per
      // subscriber); graphql-ws only needs an async iterable, and onNext passes them on unchanged.
      subscribe: executor.subscribe as unknown as (args: ExecutionArgs) => Promise<AsyncIterable<ExecutionResult> | ExecutionResult>,
      onNext: (_ctx, _id, _payload, args, result) =>
        formatResult(result, logger, (args.contextValue as GraphQLContext | undefined)?.requestId ?? 'ws'),
      onError: (_ctx, _id, _payload, errors) => formatErrors(errors),
      onClose: (ctx) => {
        const state = states.get(ctx);
        if (state?.expiry) clearTimeout(state.expiry);
      },
    },
    wss,
    config.live.wsKeepAliveMs,
  );

  function closeAtExpiry(socket: WebSocket, state: ConnectionState, expiresAt: Date): void {
    const wait = expiresAt.getTime() - Date.now();
    state.expiry = setTimeout(
      () => {
        if (wait > MAX_TIMER_MS) closeAtExpiry(socket, state, expiresAt);
        else socket.close(CloseCode.Forbidden, 'Forbidden: token expired');
      },
      Math.max(0, Math.min(wait, MAX_TIMER_MS)),
    );
  }

  return {
    get connections() {
      return wss.clients.size;
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

/** Valid documents by query text, least recently used dropped first. */
class DocumentCache {
  private readonly entries = new Map<string, DocumentNode>();
  constructor(private readonly max: number) {}

  get(query: string): DocumentNode | undefined {
    const document = this.entries.get(query);
    if (document) {
      this.entries.delete(query);
      this.entries.set(query, document);
    }
    return document;
  }

  set(query: string, document: DocumentNode): void {
    this.entries.set(query, document);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }
}
