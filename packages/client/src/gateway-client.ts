import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { DocumentNode, OperationDefinitionNode } from 'graphql';
// From the package root: Node's ESM loader cannot reach graphql-js's files by path (no exports map), and bundlers tree-shake the rest.
import { Kind, print } from 'graphql';
import { LatestEventIdDocument } from './generated/operations';
import { getText, postOperation, type HttpOptions, type RequestOptions } from './http';
import { DEFAULT_RETRY, resumableSubscription, type RetryPolicy, type SubscriptionObserver } from './resumable-subscription';
import { resumePlanOf } from './resume';
import type { ConnectionStatus, SubscriptionTransport, TokenSource } from './transport';
import { sseTransport } from './sse-transport';
import { webSocketTransport } from './ws-transport';

export interface GatewayClientOptions {
  /** The GraphQL endpoint over HTTP: http(s)://host:port/graphql */
  readonly url: string;
  /** The WebSocket endpoint; by default `url` with ws(s):// instead of http(s)://. */
  readonly wsUrl?: string;
  readonly token: TokenSource;
  /** Browsers and Node 18+ have a global fetch. */
  readonly fetch?: typeof fetch;
  /** The WebSocket class when there is no global one (Node 20: `import WebSocket from 'ws'`). */
  readonly webSocketImpl?: unknown;
  /**
   * How subscriptions travel: 'ws' (graphql-ws, the default), 'sse' (graphql-sse, one HTTP
   * event stream per subscription, for networks where WebSockets are unwelcome), or a
   * transport of your own.
   */
  readonly transport?: 'ws' | 'sse' | SubscriptionTransport;
  /** The event-stream endpoint for 'sse'; by default `url` + `/stream`. */
  readonly sseUrl?: string;
  readonly retry?: Partial<RetryPolicy>;
}

/** `variables` may be left out when the operation has no required ones. */
type VariablesArgs<V> = Record<string, never> extends V ? [variables?: V, options?: RequestOptions] : [variables: V, options?: RequestOptions];

export interface GatewayClient {
  query<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, ...args: VariablesArgs<V>): Promise<R>;
  mutate<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, ...args: VariablesArgs<V>): Promise<R>;
  /**
   * Follows a subscription until it completes, fails for good, or the returned function is
   * called. Survives dropped connections without losing or repeating events (see resume.ts).
   */
  subscribe<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: V, observer: SubscriptionObserver<R>): () => void;
  /** A gateway URL that needs the token, as text (the full instruction and answer of a turn). */
  fetchText(url: string, options?: RequestOptions): Promise<string>;
  /** The subscription connection's state, for a "live / reconnecting" indicator. */
  onStatus(listener: (status: ConnectionStatus) => void): () => void;
  /** Ends every subscription and closes the connection. */
  dispose(): Promise<void>;
}

export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  // The global fetch is called as a plain function: browsers refuse it detached from `window`.
  const http: HttpOptions = { url: options.url, token: options.token, fetch: options.fetch ?? ((input, init) => fetch(input, init)) };
  // Made at the first subscription, so queries and SSE never need a WebSocket class (Node 20 has none).
  let made: SubscriptionTransport | undefined;
  const statusListeners = new Set<(status: ConnectionStatus) => void>();
  const transport = (): SubscriptionTransport => {
    if (!made) {
      made = transportOf(options, http.fetch);
      made.onStatus((status) => statusListeners.forEach((l) => l(status)));
    }
    return made;
  };
  const retry: RetryPolicy = { ...DEFAULT_RETRY, ...options.retry };
  const printed = new WeakMap<DocumentNode, string>();
  const live = new Set<() => void>();

  const run = (document: DocumentNode, variables: unknown, requestOptions?: RequestOptions) =>
    postOperation(http, { query: textOf(printed, document), operationName: operationNameOf(document), variables: variables ?? {} }, requestOptions);

  const client: GatewayClient = {
    query: (document, ...[variables, requestOptions]) => run(document, variables, requestOptions) as Promise<never>,
    mutate: (document, ...[variables, requestOptions]) => run(document, variables, requestOptions) as Promise<never>,
    subscribe<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: V, observer: SubscriptionObserver<R>) {
      const stop = resumableSubscription(
        { transport: transport(), retry, latestEventId: async () => (await client.query(LatestEventIdDocument)).latestEventId },
        { query: textOf(printed, document), operationName: operationNameOf(document), plan: resumePlanOf(document), variables },
        {
          // The transport hands over the parsed JSON of the document's result type.
          next: (data) => observer.next(data as R),
          error: (error) => {
            live.delete(stop);
            observer.error?.(error);
          },
          complete: () => {
            live.delete(stop);
            observer.complete?.();
          },
        },
      );
      live.add(stop);
      return () => {
        live.delete(stop);
        stop();
      };
    },
    fetchText: (url, requestOptions) => getText(http, url, requestOptions),
    onStatus: (listener) => {
      statusListeners.add(listener);
      return () => statusListeners.delete(listener);
    },
    async dispose() {
      for (const stop of live) stop();
      live.clear();
      await made?.dispose();
    },
  };
  return client;
}

function transportOf(options: GatewayClientOptions, fetchFn: typeof fetch): SubscriptionTransport {
  const chosen = options.transport ?? 'ws';
  if (typeof chosen !== 'string') return chosen;
  if (chosen === 'sse') return sseTransport({ url: options.sseUrl ?? `${options.url.replace(/\/$/, '')}/stream`, token: options.token, fetch: fetchFn });
  return webSocketTransport({
    url: options.wsUrl ?? options.url.replace(/^http/, 'ws'),
    token: options.token,
    ...(options.webSocketImpl ? { webSocketImpl: options.webSocketImpl } : {}),
  });
}

function textOf(cache: WeakMap<DocumentNode, string>, document: DocumentNode): string {
  let text = cache.get(document);
  if (text === undefined) {
    text = print(document);
    cache.set(document, text);
  }
  return text;
}

const operationNameOf = (document: DocumentNode): string | null =>
  document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)?.name?.value ?? null;
