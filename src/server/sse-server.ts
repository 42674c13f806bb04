import express, { type Request, type Response, type Router } from 'express';
import type { ExecutionResult, FormattedExecutionResult, GraphQLFormattedError } from 'graphql';
import { createHandler, type Request as SseRequest, type Response as SseAnswer } from 'graphql-sse';
import type { Config } from '../config';
import type { Caller } from '../domain/caller';
import { INTERNAL_MESSAGE } from '../domain/errors';
import type { Logger } from '../logger';
import type { LiveOperations } from './live-operations';
import { LiveStream, SharedPayload, type Congestion } from './ws-live-stream';
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

/** What the hooks learn about one request: who sent it, and the per-user slot it holds. */
interface StreamRequest {
  readonly res: Response;
  readonly congestion: Congestion;
  caller: Caller | null;
  expiresAt: number;
  userKey: string | null;
}

/** Token expiry is checked this often, as on WebSockets. */
const EXPIRY_SWEEP_MS = 1_000;
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

/**
 * GraphQL over Server-Sent Events: graphql-sse's own handler (`createHandler`), in its
 * "distinct connections" mode: `POST /graphql/stream` (JSON body) or
 * `GET /graphql/stream?query=…&variables=…` with `Accept: text/event-stream` and
 * `Authorization: Bearer <jwt>`; each request is one operation, answered by `next` events
 * and one `complete`. The gateway's part comes through its hooks: the token (authenticate:
 * 401, or 431 when too large), the per-user stream limit (onConnect: 429), and the operation
 * checked and run by LiveOperations as over WebSocket (onSubscribe: limits, cost, shared
 * execution; a document that does not parse is a 400 GRAPHQL_PARSE_FAILED, any other refusal
 * one `next` with the coded errors, then `complete`). The response is written here: a stream
 * is ended without `complete` (the client resumes with afterEventId) when its token expires,
 * when it has more than WS_MAX_BUFFERED_BYTES unsent, and on shutdown.
 */
export function createGraphQLSse(deps: SseDeps): GraphQLSseServer {
  const { config, logger, operations } = deps;
  const { live } = config;
  const perUser = new ConnectionsPerUser(live.sseMaxStreamsPerUser);
  const open = new Set<OpenStream>();
  let slowConsumersDropped = 0;
  let accepting = true;

  const handler = createHandler<Request, StreamRequest>({
    async authenticate(req) {
      const admission = await operations.admit(req.headers.get('authorization'));
      if (admission.kind === 'token-too-large') return refusal(431, 'UNAUTHENTICATED', admission.reason);
      if (admission.kind === 'unavailable') return refusal(503, 'SERVICE_UNAVAILABLE', admission.reason);
      if (admission.kind !== 'accepted') return refusal(401, 'UNAUTHENTICATED', 'missing, invalid or expired bearer token');
      req.context.caller = admission.caller;
      req.context.expiresAt = admission.expiresAt;
      // No stream token: every request is its own stream (graphql-sse's distinct connections).
      return null;
    },

    onConnect(req) {
      // The client left while its token was checked: open (and count) no stream.
      if (req.raw.socket.destroyed) return refusal(400, 'BAD_REQUEST', 'the client closed the request');
      const key = userKeyOf(req.context.caller as Caller);
      if (!perUser.tryOpen(key)) {
        return refusal(429, 'TOO_MANY_SUBSCRIPTIONS', `At most ${live.sseMaxStreamsPerUser} event streams may be open at once per user`);
      }
      req.context.userKey = key;
    },

    async onSubscribe(req, params) {
      const prepared = operations.prepare(params, req.context.caller as Caller, 1, 'sse', req.method === 'GET');
      if (prepared.kind === 'refused') {
        const errors = operations.formatErrors(prepared.errors);
        // A document that does not parse is answered as GraphQL over HTTP answers it.
        if (errors[0]?.extensions?.code === 'GRAPHQL_PARSE_FAILED') return [JSON.stringify({ errors }), { status: 400, statusText: 'Bad Request', headers: JSON_TYPE }];
        // The user's live operations at LIVE_MAX_OPERATIONS_PER_USER: refused as a stream over its limit is.
        if (errors[0]?.extensions?.code === 'TOO_MANY_SUBSCRIPTIONS') return [JSON.stringify({ errors }), { status: 429, statusText: 'Too Many Requests', headers: JSON_TYPE }];
        return once({ errors });
      }
      const stream = new LiveStream(req.context.congestion);
      const started = await operations.start(prepared, stream.sink);
      if ('live' in started) {
        stream.attach(started.live);
        // It yields SharedPayloads, which onNext turns into the result.
        return stream as unknown as AsyncGenerator<ExecutionResult>;
      }
      return once(started.result);
    },

    onNext(_ctx, req, result) {
      if (!(result instanceof SharedPayload)) return;
      if (result.flushed) flushedWhenDrained(req.context.res, result.flushed);
      return resultOf(result.bytes);
    },
  });

  const serve = async (req: Request, res: Response) => {
    if (!accepting) return sendJson(res, 503, errorsOf('SERVICE_UNAVAILABLE', 'shutting down'));
    if (!(req.get('accept') ?? '').includes('text/event-stream')) return sendJson(res, 406, errorsOf('BAD_REQUEST', 'Accept must include text/event-stream'));
    const context: StreamRequest = { res, congestion: { get congested() { return res.writableLength > live.wsMaxBufferedBytes / 4; } }, caller: null, expiresAt: Infinity, userKey: null };
    const request: SseRequest<Request, StreamRequest> = {
      method: req.method,
      url: req.originalUrl,
      headers: {
        // Matched loosely above; graphql-sse wants exactly this value for an event stream.
        get: (key) => (key === 'accept' ? 'text/event-stream' : req.get(key)),
      },
      body: (req.body as Record<string, unknown> | undefined) ?? null,
      raw: req,
      context,
    };
    const release = () => {
      if (context.userKey) perUser.close(context.userKey);
      context.userKey = null;
    };
    let answer: SseAnswer;
    try {
      answer = await handler(request);
    } catch (err) {
      release();
      logger.error({ err }, 'an event-stream operation failed unexpectedly');
      return sendJson(res, 500, errorsOf('INTERNAL_SERVER_ERROR', INTERNAL_MESSAGE));
    }
    const [body, init] = answer;
    if (!body || typeof body === 'string') {
      release();
      return sendJson(res, init.status, body ? coded(body) : null, init.headers);
    }
    const { caller } = context;
    const stream = new OpenStream(res, body, context.expiresAt, live.wsMaxBufferedBytes, () => {
      slowConsumersDropped++;
      logger.warn({ userId: caller?.userId, orgId: caller?.orgId }, 'event stream ended: slow consumer (WS_MAX_BUFFERED_BYTES)');
    });
    open.add(stream);
    res.on('close', () => {
      stream.drop();
      open.delete(stream);
      release();
    });
    const { 'content-encoding': _notAnEncoding, ...headers } = init.headers ?? {};
    // Proxies such as nginx would otherwise hold events back.
    res.writeHead(init.status, { ...headers, 'x-accel-buffering': 'no' });
    await stream.pump();
  };

  const router = express.Router();
  // The body is read by the pipeline's one body parser (http-app.ts), its errors answered by its one presenter.
  router.post(SSE_PATH, serve);
  router.get(SSE_PATH, serve);
  router.all(SSE_PATH, (_req, res) => {
    res.set('allow', 'GET, POST');
    sendJson(res, 405, errorsOf('BAD_REQUEST', 'use GET or POST'));
  });

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

const errorsOf = (code: string, message: string) => JSON.stringify({ errors: [{ message, extensions: { code } }] });

const refusal = (status: number, code: string, message: string): SseAnswer => [errorsOf(code, message), { status, statusText: String(status), headers: JSON_TYPE }];

function sendJson(res: Response, status: number, body: string | null, headers: Readonly<Record<string, string>> = JSON_TYPE): void {
  res.writeHead(status, headers);
  res.end(body ?? undefined);
}

/** graphql-sse's own refusals of malformed request parameters carry no code: they get BAD_REQUEST, as every error carries one. */
function coded(body: string): string {
  let parsed: { errors?: GraphQLFormattedError[] };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return body;
  }
  if (!parsed.errors?.some((e) => e.extensions?.code === undefined)) return body;
  return JSON.stringify({ ...parsed, errors: parsed.errors.map((e) => (e.extensions?.code === undefined ? { ...e, extensions: { ...e.extensions, code: 'BAD_REQUEST' } } : e)) });
}

/** One result as a stream of one: graphql-sse sends it as a `next`, then `complete` (it takes a bare result only when it has `data`). */
async function* once(result: FormattedExecutionResult): AsyncGenerator<ExecutionResult> {
  // Formatted already (coded, masked); sent as it is.
  yield result as ExecutionResult;
}

/** A group's serialised result, parsed once for every stream of the group (graphql-sse serialises each event itself). */
const parsed = new WeakMap<Buffer, ExecutionResult>();
function resultOf(bytes: Buffer): ExecutionResult {
  let result = parsed.get(bytes);
  if (!result) parsed.set(bytes, (result = JSON.parse(bytes.toString('utf8')) as ExecutionResult));
  return result;
}

/** A long catch-up goes out at the pace the client reads it: its next event waits until the response drained. */
function flushedWhenDrained(res: Response, flushed: () => void): void {
  if (!res.writableNeedDrain) return flushed();
  const once = () => {
    res.off('drain', once);
    res.off('close', once);
    flushed();
  };
  res.on('drain', once);
  res.on('close', once);
}

/** One event stream (one operation) being written: graphql-sse's messages, our keepalive, the slow-reader cut. */
class OpenStream {
  private lastWrite = Date.now();
  private dropped = false;

  constructor(
    private readonly res: Response,
    private readonly body: AsyncGenerator<string, void, undefined>,
    readonly expiresAt: number,
    private readonly maxBufferedBytes: number,
    private readonly onSlowConsumer: () => void,
  ) {}

  /** Writes what graphql-sse produces, without waiting for the client: one that does not read is cut off instead. */
  async pump(): Promise<void> {
    try {
      for await (const message of this.body) {
        if (this.dropped) return;
        if (this.res.writableLength > this.maxBufferedBytes) {
          this.onSlowConsumer();
          return this.drop();
        }
        this.lastWrite = Date.now();
        this.res.write(message);
      }
    } catch {
      // graphql-sse ends the body with an error when an operation fails: the stream drops, the client resumes.
      return this.drop();
    }
    if (!this.dropped) this.res.end();
  }

  /** A comment line now and then, so proxies and the client see the stream is alive. */
  keepAlive(now: number, intervalMs: number): void {
    if (this.dropped || now - this.lastWrite < intervalMs) return;
    this.lastWrite = now;
    this.res.write(':\n\n');
  }

  /** Ends the stream without `complete`: the client sees it drop and resumes. */
  drop(): void {
    if (this.dropped) return;
    this.dropped = true;
    void this.body.return(undefined);
    this.res.destroy();
  }
}
