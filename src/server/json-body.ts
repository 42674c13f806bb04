import { AsyncResource } from 'node:async_hooks';
import type { RequestHandler } from 'express';

/** Why a body was not read; the error presenter (http-errors.ts) answers each with its status. */
export type BodyRefusal = 'entity.too.large' | 'entity.parse.failed' | 'encoding.unsupported' | 'charset.unsupported' | 'request.aborted';

export class BodyError extends Error {
  constructor(
    readonly type: BodyRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** JSON starts with an object or an array here (GraphQL over HTTP, REST execute): anything else is refused unparsed. */
const OBJECT_OR_ARRAY = /^[\s]*[{[]/;

/**
 * The pipeline's one JSON body parser (in place of express.json, which reads a refused body
 * to its end before answering): an `application/json` body is read up to `limitBytes` and
 * parsed into `req.body`. A declared Content-Length over the limit is refused before a byte
 * is read, a chunked body as soon as it passes the limit; either way the rest is not read
 * (the error presenter closes the connection after its answer). Only UTF-8 and no
 * Content-Encoding: compressed bodies would make the limit a limit on the compressed size.
 */
export function jsonBody(limitBytes: number): RequestHandler {
  return (req, _res, next) => {
    // Apollo's express integration wants the property present (undefined without a body), as express.json leaves it.
    req.body = undefined;
    if (!req.is('application/json')) return next();
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity') return next(new BodyError('encoding.unsupported', `content-encoding "${encoding.slice(0, 40)}" is not supported: send the body uncompressed`));
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return next(new BodyError('charset.unsupported', 'the request body must be UTF-8'));
    const declared = Number(req.headers['content-length']);
    if (declared > limitBytes) return next(tooLarge());

    // The stream's events run outside this request's async context; the rest of the pipeline
    // (its trace span above all) must run inside it.
    const resume = AsyncResource.bind((err?: unknown) => next(err));
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.pause();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        stop();
        resume(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      const text = Buffer.concat(chunks, size).toString('utf8');
      // As express.json: an empty body is an empty object (Apollo then answers what is missing).
      if (text.trim() === '') {
        req.body = {};
        return resume();
      }
      if (!OBJECT_OR_ARRAY.test(text)) return resume(notJson());
      try {
        req.body = JSON.parse(text) as unknown;
      } catch {
        return resume(notJson());
      }
      resume();
    };
    // A client that went away before its body ended: nobody is left to answer; the presenter logs it quietly.
    const onClose = () => {
      stop();
      resume(new BodyError('request.aborted', 'the client closed the request before its body ended'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
  };
}

const tooLarge = () => new BodyError('entity.too.large', 'the request body is too large');
const notJson = () => new BodyError('entity.parse.failed', 'the request body is not valid JSON');
