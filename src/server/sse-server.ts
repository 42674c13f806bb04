import express, { type Request, type Response, type Router } from 'express';
import type { FormattedExecutionResult, GraphQLFormattedError } from 'graphql';
import type { Config } from '../config';
import type { LiveSubscription } from '../graphql/live/live-group';
import type { Logger } from '../logger';
import { jsonBody } from './json-body';
import type { LiveOperations, OperationRequest, OperationSink } from './live-operations';
import { ConnectionsPerUser, userKeyOf } from './ws-limits';

export const SSE_PATH = '/graphql/stream';

export interface SseDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly operations: LiveOperations;
}

export interface GraphQLSseServer {
  readonly router: Router;
  /** Open event streams. */
  readonly streams: number;
  /** Streams ended so far because the client did not read (WS_MAX_BUFFERED_BYTES). */
  readonly slowConsumersDropped: number;
  /** Ends every stream (shutdown): clients resume elsewhere with afterEventId. */
  close(): void;
}

/** Token expiry is checked this often, as on WebSockets. */
const EXPIRY_SWEEP_MS = 1_000;
const COMPLETE = Buffer.from('event: complete\ndata:\n\n');
const NEXT_HEAD = Buffer.from('event: next\ndata: ');
const NEXT_TAIL = Buffer.from('\n\n');

/**
 * GraphQL over Server-Sent Events, the graphql-sse protocol's "distinct connections" mode:
 * `POST /graphql/stream` (JSON body) or `GET /graphql/stream?query=…&variables=…` with
 * `Accept: text/event-stream` and `Authorization: Bearer <jwt>`; each request is one
 * operation, answered by a stream of `next` events and one `complete`. The operation runs
 * through LiveOperations like a WebSocket one (limits, cost, shared execution); a `next`
 * event carries the group's one serialised payload as is. A refused token is an HTTP 401
 * (431 when too large) and a user over SSE_MAX_STREAMS_PER_USER a 429, both with GraphQL
 * errors as JSON; a refused operation is one `next` with the coded errors, then `complete`.
 * A stream is ended without `complete` (the client resumes with afterEventId) when its
 * token expires, when it has more than WS_MAX_BUFFERED_BYTES unsent, and on shutdown.
 */
export function createGraphQLSse(deps: SseDeps): GraphQLSseServer {
  const { config, logger, operations } = deps;
  const { live } = config;
  const perUser = new ConnectionsPerUser(live.sseMaxStreamsPerUser);
  const open = new Set<SseStream>();
  let slowConsumersDropped = 0;
  let accepting = true;

  const handle = async (req: Request, res: Response, request: OperationRequest | string, readOnly: boolean) => {
    if (!accepting) return refuse(res, 503, 'SERVICE_UNAVAILABLE', 'shutting down');
    if (!(req.get('accept') ?? '').includes('text/event-stream')) return refuse(res, 406, 'BAD_REQUEST', 'Accept must include text/event-stream');
    const admission = await operations.admit(req.headers.authorization);
    if (admission.kind === 'token-too-large') return refuse(res, 431, 'UNAUTHENTICATED', admission.reason);
    if (admission.kind === 'unavailable') return refuse(res, 503, 'SERVICE_UNAVAILABLE', admission.reason);
    // The client left while its token was checked: no stream to open (or count).
    if (req.socket.destroyed) return;
    if (admission.kind !== 'accepted') return refuse(res, 401, 'UNAUTHENTICATED', 'missing, invalid or expired bearer token');
    if (typeof request === 'string') return refuse(res, 400, 'BAD_REQUEST', request);
    const { caller } = admission;
    const key = userKeyOf(caller);
    if (!perUser.tryOpen(key)) {
      return refuse(res, 429, 'TOO_MANY_SUBSCRIPTIONS', `At most ${live.sseMaxStreamsPerUser} event streams may be open at once per user`);
    }
    const stream = new SseStream(res, admission.expiresAt, live.wsMaxBufferedBytes, () => {
      slowConsumersDropped++;
      logger.warn({ userId: caller.userId, orgId: caller.orgId }, 'event stream ended: slow consumer (WS_MAX_BUFFERED_BYTES)');
    });
    open.add(stream);
    res.on('close', () => {
      stream.cancel();
      open.delete(stream);
      perUser.close(key);
    });
    operations.run(stream, request, caller, 1, 'sse', readOnly).catch((err: unknown) => {
      logger.error({ err }, 'an event-stream operation failed unexpectedly');
      stream.drop();
    });
  };

  const router = express.Router();
  router.post(SSE_PATH, jsonBody(config.limits.bodyLimitBytes), (req, res) => handle(req, res, parseParams(req.body), false));
  router.get(SSE_PATH, (req, res) => handle(req, res, parseQuery(req.query), true));
  router.all(SSE_PATH, (_req, res) => {
    res.set('allow', 'GET, POST');
    refuse(res, 405, 'BAD_REQUEST', 'use GET or POST');
  });
  router.use(SSE_PATH, ((error, _req, res, next) => {
    if (res.headersSent) return next(error);
    const type = (error as { type?: unknown } | null)?.type;
    if (type === 'entity.too.large') return refuse(res, 413, 'BAD_REQUEST', 'the request body is too large');
    if (type === 'entity.parse.failed') return refuse(res, 400, 'BAD_REQUEST', 'the request body is not valid JSON');
    next(error);
  }) as express.ErrorRequestHandler);

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const stream of open) {
      if (stream.expiresAt <= now) stream.drop();
      else if (live.wsKeepAliveMs > 0) stream.keepAlive(now, live.wsKeepAliveMs);
    }
  }, EXPIRY_SWEEP_MS);
  sweep.unref();

  return {
    router,
    get streams() {
      return open.size;
    },
    get slowConsumersDropped() {
      return slowConsumersDropped;
    },
    close() {
      accepting = false;
      clearInterval(sweep);
      for (const stream of open) stream.drop();
    },
  };
}

function refuse(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ errors: [{ message, extensions: { code } }] });
}

/** The graphql-sse request parameters, or why they are not. */
function parseParams(body: unknown): OperationRequest | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body must be a JSON object';
  const { query, operationName, variables } = body as Record<string, unknown>;
  if (typeof query !== 'string' || query.length === 0) return '"query" must be a non-empty string';
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return '"operationName" must be a string';
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return '"variables" must be an object';
  return { query, operationName: operationName ?? null, variables: (variables as Record<string, unknown> | null | undefined) ?? null };
}

function parseQuery(query: Request['query']): OperationRequest | string {
  const { variables } = query;
  let parsed: unknown = undefined;
  if (typeof variables === 'string' && variables !== '') {
    try {
      parsed = JSON.parse(variables);
    } catch {
      return '"variables" must be JSON';
    }
  }
  return parseParams({ query: query.query, operationName: query.operationName, variables: parsed });
}

/**
 * One event stream, which is one operation. Each `next` event is written as one buffer:
 * the event head, the shared serialised payload, the blank line (a payload is JSON, so it
 * holds no newline).
 */
class SseStream implements OperationSink {
  private live: LiveSubscription | null = null;
  private ended = false;
  private lastWrite = Date.now();

  constructor(
    private readonly res: Response,
    readonly expiresAt: number,
    private readonly maxBufferedBytes: number,
    private readonly onSlowConsumer: () => void,
  ) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // Proxies such as nginx would otherwise hold events back.
      'x-accel-buffering': 'no',
    });
    res.write(':\n\n');
  }

  get congested(): boolean {
    return this.res.writableLength > this.maxBufferedBytes / 4;
  }

  attach(live: LiveSubscription): void {
    if (this.ended) live.cancel();
    else this.live = live;
  }

  next(payload: Buffer, flushed?: () => void): void {
    if (this.ended || this.res.writableEnded) return flushed?.();
    if (this.res.writableLength > this.maxBufferedBytes) {
      this.onSlowConsumer();
      this.drop();
      return flushed?.();
    }
    this.lastWrite = Date.now();
    this.res.write(Buffer.concat([NEXT_HEAD, payload, NEXT_TAIL]), flushed && (() => flushed()));
  }

  result(result: FormattedExecutionResult): void {
    this.next(Buffer.from(JSON.stringify(result)));
  }

  error(errors: readonly GraphQLFormattedError[]): void {
    this.result({ errors });
    this.complete();
  }

  complete(): void {
    if (this.ended) return;
    this.ended = true;
    this.live = null;
    this.res.end(COMPLETE);
  }

  /** A comment line now and then, so proxies and the client see the stream is alive. */
  keepAlive(now: number, intervalMs: number): void {
    if (this.ended || now - this.lastWrite < intervalMs) return;
    this.lastWrite = now;
    this.res.write(':\n\n');
  }

  /** Ends the stream without `complete`: the client sees it drop and resumes. */
  drop(): void {
    this.cancel();
    this.res.destroy();
  }

  /** The client went away (or the stream is dropped): stop, send nothing. */
  cancel(): void {
    this.ended = true;
    this.live?.cancel();
    this.live = null;
  }
}
