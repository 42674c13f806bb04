import type { FormattedExecutionResult, GraphQLFormattedError } from 'graphql';

/** One subscribe message: the document as text and the variables to send this time. */
export interface SubscriptionRequest {
  readonly query: string;
  readonly operationName: string | null;
  readonly variables: Record<string, unknown>;
}

/** Why a transport stopped delivering one subscription before the server completed it. */
export type TransportFailure =
  /** The server refused the operation (validation, authorisation, EVENTS_PRUNED, ...). */
  | { readonly kind: 'graphql'; readonly errors: readonly GraphQLFormattedError[] }
  /**
   * The connection went away. `retryable` says whether subscribing again may work (a dropped
   * or restarted connection) or cannot (a refused token, a protocol error).
   */
  | { readonly kind: 'closed'; readonly retryable: boolean; readonly code: number | null; readonly reason: string };

export interface TransportSink {
  next(result: FormattedExecutionResult): void;
  error(failure: TransportFailure): void;
  /** The server completed the operation. */
  complete(): void;
}

export type ConnectionStatus = 'connecting' | 'connected' | 'disconnected';

/**
 * How subscriptions reach the gateway (graphql-ws today; graphql-sse can be another). A
 * transport delivers one attempt: it never re-subscribes on its own with stale variables.
 * Resuming after a failure is the client's job (gateway-client.ts), which is why `request`
 * is a function: a transport calls it each time it sends the subscription, so whatever it
 * sends carries the latest resume point.
 */
export interface SubscriptionTransport {
  subscribe(request: () => SubscriptionRequest, sink: TransportSink): () => void;
  onStatus(listener: (status: ConnectionStatus) => void): () => void;
  dispose(): Promise<void>;
}

/** The bearer token, or a function giving the current one (called for every request and connection). */
export type TokenSource = string | (() => string | Promise<string>);

export const currentToken = async (token: TokenSource): Promise<string> => (typeof token === 'string' ? token : token());
