import { pipeline } from 'node:stream/promises';
import express, { type Request, type Response, type Router } from 'express';
import type { BlobStore } from '../blobs/blob-store.port';
import { assertBlobPathIds, resolveBlobPath } from '../domain/blob-keys';
import { notFound } from '../domain/errors';
import type { SessionReader } from '../sessions/session-store.port';
import type { TokenVerifier } from '../auth/token-verifier.port';
import { authenticate } from './auth';

export interface BlobRouteDeps {
  readonly blobs: BlobStore;
  readonly sessions: Pick<SessionReader, 'getSession'>;
  readonly tokens: TokenVerifier;
}

/**
 * `GET /blobs/sessions/:sessionId/...`: the gateway URLs stored on turns. The caller must be
 * able to read the session; the key is built from the caller's own org, so another org's
 * blob (or a session the caller may not read) answers 404 exactly like a missing one.
 */
export function blobRouter(deps: BlobRouteDeps): Router {
  const router = express.Router();
  // A pattern without parameters: express would decode a parameter itself and fail (500) on what is not UTF-8.
  router.get(/^\/blobs\//i, async (req: Request, res: Response) => {
    const { caller } = await authenticate(req.headers.authorization, deps.tokens);
    const path = req.path.slice('/blobs'.length);
    assertBlobPathIds(path);
    const target = resolveBlobPath(caller.orgId, path);
    const session = target ? await deps.sessions.getSession(caller, target.sessionId) : null;
    const blob = target && session ? await deps.blobs.get(target.key) : null;
    if (!blob) throw notFound('blob');
    res.status(200);
    res.setHeader('content-type', blob.contentType);
    if (blob.sizeBytes !== null) res.setHeader('content-length', String(blob.sizeBytes));
    res.setHeader('cache-control', 'private, no-store');
    res.setHeader('x-content-type-options', 'nosniff');
    await pipeline(blob.body, res);
  });
  return router;
}
