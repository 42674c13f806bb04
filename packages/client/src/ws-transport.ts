import type { GraphQLFormattedError } from 'graphql';
import { CloseCode, createClient, type Client } from 'graphql-ws/client';
import { currentToken, type ConnectionStatus, type SubscriptionTransport, type TokenSource, type TransportFailure } from './transport';

export interface WebSocketTransportOptions {
  /** ws(s)://host:port/graphql */
  readonly url: string;
  readonly token: TokenSource;
  /** The WebSocket class; browsers have one, Node 20 needs `ws` (`import WebSocket from 'ws'`). */
  readonly webSocketImpl?: unknown;
  /** Ping interval; a connection whose pong does not come back in time is dropped (and resumed). 0 disables. */
  readonly keepAliveMs?: number;
  /** How long a pong may take. */
  readonly pongTimeoutMs?: number;
}

/** Closes that subscribing again cannot cure: the token was refused, or the peers disagree on the protocol. */
const FINAL_CLOSES: ReadonlySet<number> = new Set([
  CloseCode.BadRequest,
  CloseCode.Unauthorized,
  CloseCode.Forbidden,
  CloseCode.SubprotocolNotAcceptable,
  CloseCode.SubscriberAlreadyExists,
  CloseCode.TooManyInitialisationRequests,
]);

/**
 * Subscriptions over graphql-ws (`graphql-transport-ws`), one socket for all of them, opened
 * when the first subscribes and closed when the last leaves. The token goes in
 * `connection_init`, never in the URL. graphql-ws's own retries are off: a dropped socket
 * fails every subscription on it, and the client re-subscribes each one from where it was.
 */
export function webSocketTransport(options: WebSocketTransportOptions): SubscriptionTransport {
  const listeners = new Set<(status: ConnectionStatus) => void>();
  const emit = (status: ConnectionStatus) => listeners.forEach((l) => l(status));
  const keepAlive = options.keepAliveMs ?? 10_000;
  const pongTimeout = options.pongTimeoutMs ?? 5_000;
  let pongTimer: ReturnType<typeof setTimeout> | undefined;

  const client: Client = createClient({
    url: options.url,
    ...(options.webSocketImpl ? { webSocketImpl: options.webSocketImpl } : {}),
    connectionParams: async () => ({ authorization: `Bearer ${await currentToken(options.token)}` }),
    lazy: true,
    retryAttempts: 0,
    keepAlive,
    on: {
      connecting: () => emit('connecting'),
      connected: () => emit('connected'),
      closed: () => {
        clearTimeout(pongTimer);
        emit('disconnected');
      },
      // A half-open connection (a peer gone without a FIN) would otherwise look alive forever.
      ping: (received) => {
        if (received) return;
        clearTimeout(pongTimer);
        pongTimer = setTimeout(() => client.terminate(), pongTimeout);
      },
      pong: (received) => {
        if (received) clearTimeout(pongTimer);
      },
    },
  });

  return {
    subscribe(request, sink) {
      // graphql-ws serialises the payload whenever it sends it, so every send reads the latest request.
      const payload = {
        get query() {
          return request().query;
        },
        get variables() {
          return request().variables;
        },
        get operationName() {
          return request().operationName;
        },
      };
      return client.subscribe<Record<string, unknown>, Record<string, unknown>>(payload, {
        next: (result) => sink.next(result),
        complete: () => sink.complete(),
        error: (error: unknown) => sink.error(failureOf(error)),
      });
    },
    onStatus(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async dispose() {
      clearTimeout(pongTimer);
      await client.dispose();
    },
  };
}

function failureOf(error: unknown): TransportFailure {
  if (Array.isArray(error)) return { kind: 'graphql', errors: error as GraphQLFormattedError[] };
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number') {
    const code = error.code;
    const reason = 'reason' in error && typeof error.reason === 'string' ? error.reason : '';
    return { kind: 'closed', retryable: !FINAL_CLOSES.has(code), code, reason };
  }
  // A socket `error` event (connection refused, reset): the close that follows is what counts.
  return { kind: 'closed', retryable: true, code: null, reason: error instanceof Error ? error.message : 'connection failed' };
}
