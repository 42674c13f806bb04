import type { FormattedExecutionResult, GraphQLFormattedError } from 'graphql';
import { createClient, NetworkError, type Client } from 'graphql-sse';
import { currentToken, type ConnectionStatus, type SubscriptionTransport, type TokenSource, type TransportFailure } from './transport';

export interface SseTransportOptions {
  /** http(s)://host:port/graphql/stream */
  readonly url: string;
  readonly token: TokenSource;
  /** Browsers and Node 18+ have a global fetch. */
  readonly fetch?: typeof fetch;
}

/** HTTP answers that subscribing again cannot cure (a refused token, a malformed request). */
const FINAL_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 404, 405, 406, 413, 415, 431]);

/**
 * Subscriptions over Server-Sent Events (graphql-sse, one stream per subscription), for
 * networks where WebSockets are unwelcome. The token goes in the Authorization header.
 * graphql-sse's own retries are off: a dropped stream fails its subscription, and the client
 * re-subscribes from where it was, as with the WebSocket transport. The status reports
 * `connected` while any stream is open.
 */
export function sseTransport(options: SseTransportOptions): SubscriptionTransport {
  const listeners = new Set<(status: ConnectionStatus) => void>();
  const fetchFn: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  // Streams opening and open: the status is `connected` while any is open, `connecting` while none is but one is opening.
  let opening = 0;
  let open = 0;
  let status: ConnectionStatus = 'disconnected';
  const update = () => {
    const now: ConnectionStatus = open > 0 ? 'connected' : opening > 0 ? 'connecting' : 'disconnected';
    if (now === status) return;
    status = now;
    listeners.forEach((l) => l(now));
  };

  const client: Client = createClient({
    url: options.url,
    fetchFn,
    headers: async () => ({ authorization: `Bearer ${await currentToken(options.token)}` }),
    retryAttempts: 0,
  });

  return {
    subscribe(request, sink) {
      const { query, variables, operationName } = request();
      let state: 'idle' | 'opening' | 'open' | 'closed' = 'idle';
      const moveTo = (next: 'opening' | 'open' | 'closed') => {
        if (state === 'closed') return;
        if (state === 'opening') opening--;
        if (state === 'open') open--;
        if (next === 'opening') opening++;
        if (next === 'open') open++;
        state = next;
        update();
      };
      const unsubscribe = client.subscribe<Record<string, unknown>>(
        { query, variables, ...(operationName ? { operationName } : {}) },
        {
          next: (result) => sink.next(result as FormattedExecutionResult),
          complete: () => {
            moveTo('closed');
            sink.complete();
          },
          error: (error: unknown) => {
            moveTo('closed');
            void failureOf(error).then((failure) => sink.error(failure));
          },
        },
        {
          connecting: () => moveTo('opening'),
          connected: () => moveTo('open'),
        },
      );
      return () => {
        moveTo('closed');
        unsubscribe();
      };
    },
    onStatus(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async dispose() {
      client.dispose();
    },
  };
}

/** A refusal the gateway answered with JSON errors keeps its codes; anything else is a dropped connection. */
async function failureOf(error: unknown): Promise<TransportFailure> {
  if (error instanceof NetworkError && error.response) {
    const response = error.response as Response;
    const errors = await response
      .json()
      .then((body: unknown) => (body as { errors?: GraphQLFormattedError[] } | null)?.errors)
      .catch(() => undefined);
    if (errors?.length && response.status !== 503) return { kind: 'graphql', errors };
    return { kind: 'closed', retryable: !FINAL_STATUSES.has(response.status), code: response.status, reason: response.statusText };
  }
  return { kind: 'closed', retryable: true, code: null, reason: error instanceof Error ? error.message : 'connection failed' };
}
