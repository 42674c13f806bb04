import { AsyncResource } from 'node:async_hooks';
import express from 'express';
import type { PlainHandler, PlainRequest } from './plain-lane';

/** What nearly every client sends: JSON in UTF-8 (the default), not compressed. */
const PLAIN_JSON = /^application\/json\s*(;\s*charset="?utf-8"?\s*)?$/i;

/** A refused body, shaped as body-parser shapes it: the error handlers read `type` and `status`. */
function bodyError(status: 400 | 413, type: 'entity.parse.failed' | 'entity.too.large', message: string): Error {
  return Object.assign(new Error(message), { status, statusCode: status, expose: true, type });
}

/**
 * express.json, with the common case read directly: a plain UTF-8 application/json body is
 * collected and parsed as body-parser would (an empty body is `{}`, only an object or array is
 * accepted, the same error types and statuses), without its per-request type matching, charset
 * lookup and decoder (~0.1 ms of CPU per GraphQL request). Anything else, compressed or in
 * another charset or type, goes to express.json itself.
 */
export function jsonBody(limit: number): PlainHandler {
  const general = express.json({ limit });
  return (req, res, next) => {
    const type = req.headers['content-type'];
    if (req.headers['content-encoding'] !== undefined || typeof type !== 'string' || !PLAIN_JSON.test(type)) {
      // body-parser reads only what node:http gives a request; its types ask for express's.
      general(req, res, next);
      return;
    }
    // No Content-Length and no Transfer-Encoding: no body at all (type-is `hasBody`), left unread as body-parser leaves it.
    const declared = Number(req.headers['content-length']);
    if (req.headers['transfer-encoding'] === undefined && Number.isNaN(declared)) {
      next();
      return;
    }
    if (declared > limit) {
      req.resume();
      next(bodyError(413, 'entity.too.large', 'request entity too large'));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    // Run in this request's async context (as raw-body binds its callback): the stream's events
    // run in the socket's, and the handlers after this one must see the request's trace span.
    // runInAsyncScope rather than AsyncResource.bind, which builds two deprecation wrappers per
    // call (its `asyncResource` property, DEP0172): 0.6% of an execute's CPU.
    const context = new AsyncResource('gateway.jsonBody');
    const finish = (error: Error | null) => context.runInAsyncScope(settle, null, error);
    const settle = (error: Error | null) => {
      if (done) return;
      done = true;
      req.removeListener('data', onData);
      if (error) {
        req.resume();
        next(error);
        return;
      }
      try {
        setBody(req, parse(Buffer.concat(chunks, size).toString('utf8')));
      } catch (e) {
        next(bodyError(400, 'entity.parse.failed', (e as Error).message));
        return;
      }
      next();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) finish(bodyError(413, 'entity.too.large', 'request entity too large'));
      else chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => finish(null));
    req.once('error', (e) => finish(e));
  };
}

/** body-parser's strict JSON: an empty body is `{}`; otherwise the first character past JSON whitespace must open an object or array. */
function parse(text: string): unknown {
  if (text.length === 0) return {};
  const first = /^[\x20\x09\x0a\x0d]*(.)/s.exec(text)?.[1];
  if (first !== '{' && first !== '[') throw new SyntaxError(`Unexpected token ${first ?? 'end'} in JSON: only an object or an array is accepted`);
  return JSON.parse(text);
}

function setBody(req: PlainRequest, body: unknown): void {
  req.body = body;
  // body-parser's mark that the body is read: a later parser on the route leaves it alone.
  (req as PlainRequest & { _body?: boolean })._body = true;
}
