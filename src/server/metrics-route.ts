import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Router } from 'express';

export interface MetricsRouteDeps {
  /** The Prometheus text and its content type. */
  readonly render: () => Promise<string>;
  readonly contentType: string;
  /** METRICS_TOKEN: null leaves the endpoint open (it is then for a private network only). */
  readonly token: string | null;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** `GET /metrics` in the Prometheus text format, behind `Authorization: Bearer <METRICS_TOKEN>` when that is set. */
export function metricsRouter(deps: MetricsRouteDeps): Router {
  const router = express.Router();
  // Digests compared in constant time: the comparison says nothing about the token's length or prefix.
  const expected = deps.token === null ? null : digest(`Bearer ${deps.token}`);
  router.get('/metrics', async (req, res) => {
    if (expected && !timingSafeEqual(digest(req.get('authorization') ?? ''), expected)) {
      res.status(401).set('www-authenticate', 'Bearer').json({ errorCode: 'UNAUTHENTICATED', errorMessage: 'GET /metrics needs the METRICS_TOKEN as a bearer token' });
      return;
    }
    res.set('content-type', deps.contentType).send(await deps.render());
  });
  return router;
}
