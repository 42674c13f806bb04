import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler } from 'express';

/** A request as node:http made it, with the body a body reader sets. */
export type PlainRequest = IncomingMessage & { body?: unknown };
/** A response as node:http made it, with express's `locals` (the request id lives there). */
export type PlainResponse = ServerResponse & { locals: Record<string, unknown> };
/** Middleware that needs nothing express adds to a request: it runs in express and in a plain lane alike. */
export type PlainHandler = (req: PlainRequest, res: PlainResponse, next: (error?: unknown) => void) => void | Promise<void>;

/** What a route answers when a request fails there (the socket is closed if the answer had begun). */
export type RequestFailed = (error: unknown, req: PlainRequest, res: PlainResponse) => void;

/** `failed` as express error middleware, for the requests express routes (other spellings, other methods). */
export const expressFailure =
  (failed: RequestFailed): ErrorRequestHandler =>
  (error, req, res, _next) =>
    failed(error, req, res);

/** A POST route served by a plain lane: its handlers after the common ones, and what answers its failures. */
export interface PlainRoute {
  readonly path: string;
  readonly handlers: readonly PlainHandler[];
  readonly failed: RequestFailed;
}

/** The path of a request target, without its query string. */
export const pathOf = (url: string | undefined): string => {
  const target = url ?? '/';
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
};

/**
 * Runs `handlers` in order on node:http's own request and response, as an express route runs
 * them (`next()` goes on, `next(error)`, a throw or a rejected promise stops at `failed`), but
 * without express's application layer. That layer gives every request and response a new
 * prototype (app.request, app.response); V8 then gives each such object a hidden class of its
 * own once one of its fields changes, so every property access on them in node:http, express,
 * Apollo and our handlers misses its inline cache, and each request allocates two maps and
 * their descriptor arrays (~2.5 KB, heap snapshot of 2,000 executes in flight).
 */
export function plainLane(handlers: readonly PlainHandler[], failed: RequestFailed): (req: IncomingMessage, res: ServerResponse) => void {
  return (request, response) => {
    const req: PlainRequest = request;
    // express's own default (app.handle): a null-prototype object.
    const res: PlainResponse = Object.assign(response, { locals: Object.create(null) as Record<string, unknown> });
    let at = 0;
    let stopped = false;
    const stop = (error: unknown) => {
      if (stopped) return;
      stopped = true;
      failed(error, req, res);
    };
    const next = (error?: unknown): void => {
      if (stopped) return;
      if (error !== undefined && error !== null) return stop(error);
      const handler = handlers[at++];
      if (!handler) return stop(new Error('no handler of the lane answered the request'));
      try {
        const done = handler(req, res, next);
        if (done instanceof Promise) done.catch(stop);
      } catch (e) {
        stop(e);
      }
    };
    next();
  };
}
