import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Router } from 'express';
import type { Config } from '../config';

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

/**
 * Where /metrics is served (issue 36): on its own listener when METRICS_PORT is set; else on
 * the API port, except in production without a METRICS_TOKEN, where it is not served at all
 * (an open /metrics would tell anyone the gateway's traffic).
 */
export type MetricsPlacement = 'apart' | 'api' | 'closed';

export function metricsPlacement(config: Pick<Config, 'metricsPort' | 'metricsToken' | 'isProduction'>): MetricsPlacement {
  if (config.metricsPort !== null) return 'apart';
  return config.isProduction && config.metricsToken === null ? 'closed' : 'api';
}

export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

/** /metrics alone on `port` at `host` (METRICS_PORT, METRICS_HOST: 127.0.0.1 unless told), everything else 404. */
export async function listenForMetrics(router: Router, port: number, host: string): Promise<MetricsListener> {
  const app = express();
  app.disable('x-powered-by');
  app.use(router);
  app.use((_req, res) => {
    res.status(404).json({ errorCode: 'NOT_FOUND', errorMessage: 'only GET /metrics is served here' });
  });
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host }, resolve);
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
