import type { FormattedExecutionResult } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/** A graphql-ws client for `httpUrl`'s /graphql, authenticating with `token` (no retries: tests see every close). */
export function wsClient(httpUrl: string, token: string | null, options: { onClosed?: (code: number) => void } = {}): Client {
  const client = createClient({
    url: `${httpUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: token === null ? {} : { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: true,
  });
  if (options.onClosed) {
    const onClosed = options.onClosed;
    client.on('closed', (event) => onClosed((event as { code: number }).code));
  }
  return client;
}

export interface Subscribed<T> {
  /** Every `next` payload so far. */
  readonly results: FormattedExecutionResult<T>[];
  /** `data` of every result that had some. */
  readonly data: T[];
  /** Settles when the server completes the operation (rejects on an `error` message or a closed socket). */
  readonly done: Promise<void>;
  /** Resolves once `count` results arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<FormattedExecutionResult<T>[]>;
  unsubscribe(): void;
}

/** What graphql-ws and graphql-sse clients have alike: `subscribe(request, sink)`. */
export interface SubscribingClient {
  subscribe<T>(
    request: { query: string; variables: Record<string, unknown> },
    sink: { next(result: FormattedExecutionResult<T>): void; error(e: unknown): void; complete(): void },
  ): () => void;
}

export function subscribe<T = Record<string, unknown>>(client: SubscribingClient, query: string, variables: Record<string, unknown> = {}): Subscribed<T> {
  const results: FormattedExecutionResult<T>[] = [];
  const data: T[] = [];
  const waiters: (() => void)[] = [];
  let settle!: { resolve: () => void; reject: (e: unknown) => void };
  const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => undefined);
  const unsubscribe = client.subscribe<T>(
    { query, variables },
    {
      next: (result) => {
        results.push(result);
        if (result.data) data.push(result.data);
        waiters.splice(0).forEach((w) => w());
      },
      error: (e) => {
        settle.reject(e);
        waiters.splice(0).forEach((w) => w());
      },
      complete: () => {
        settle.resolve();
        waiters.splice(0).forEach((w) => w());
      },
    },
  );
  return {
    results,
    data,
    done,
    unsubscribe,
    async waitFor(count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (results.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} results, got ${results.length}: ${JSON.stringify(results)}`);
        await new Promise<void>((r) => {
          const timer = setTimeout(r, left);
          waiters.push(() => {
            clearTimeout(timer);
            r();
          });
        });
      }
      return results.slice(0, count);
    },
  };
}

export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A bare graphql-transport-ws socket, for protocol misbehaviour the client library would never send. */
export class RawSocket {
  readonly messages: Record<string, unknown>[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly opened: Promise<void>;
  readonly ws: WebSocket;

  /** `protocol` null offers no subprotocol at all. */
  constructor(httpUrl: string, protocol: string | null = 'graphql-transport-ws', path = '/graphql') {
    const url = `${httpUrl.replace(/^http/, 'ws')}${path}`;
    this.ws = protocol === null ? new WebSocket(url) : new WebSocket(url, protocol);
    this.ws.on('message', (data) => this.messages.push(JSON.parse((data as Buffer).toString('utf8')) as Record<string, unknown>));
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) => this.ws.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
    this.closed.catch(() => undefined);
    this.opened.catch(() => undefined);
  }

  async send(message: unknown): Promise<void> {
    await this.opened;
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  async waitForMessage(type: string, timeoutMs = 5_000): Promise<Record<string, unknown>> {
    await waitUntil(() => this.messages.some((m) => m.type === type), timeoutMs, `a "${type}" message`);
    return this.messages.find((m) => m.type === type) as Record<string, unknown>;
  }
}
