import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Request, type Response, type Router } from 'express';
import { DomainError } from '../domain/errors';
import type { Logger } from '../logger';

/** Every file the dashboard consists of (`npm run build` writes them to dist/web). Nothing else is served. */
const FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
};

/**
 * What the page may do: its own script, styles and icon, and talk to this gateway (GraphQL
 * over fetch, subscriptions over a same-origin WebSocket, which 'self' covers). No inline
 * code, no other origin, no framing.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

interface StaticFile {
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
}

/**
 * `GET /dashboard`: the admin dashboard's static files, read once at start-up from `dir`.
 * They carry no data and need no token (the page signs in from the browser). Revalidated on
 * every load (`no-cache` + ETag), so a new build shows up without stale mixes of files.
 */
export function dashboardRouter(deps: { readonly dir: string; readonly logger: Logger }): Router {
  const files = new Map<string, StaticFile>();
  for (const [name, contentType] of Object.entries(FILES)) {
    try {
      const body = readFileSync(join(deps.dir, name));
      files.set(name, { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
    } catch {
      // Reported below; the gateway itself runs without its dashboard.
    }
  }
  if (files.size < Object.keys(FILES).length) {
    deps.logger.warn({ dir: deps.dir }, 'the dashboard is not built (run `npm run build`); /dashboard answers 404');
  }

  const serve = (name: string) => (req: Request, res: Response) => {
    for (const [header, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(header, value);
    const file = files.get(name);
    if (!file) throw new DomainError('NOT_FOUND', 'Not found. Is the dashboard built? Run `npm run build`.');
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('etag', file.etag);
    if (req.headers['if-none-match'] === file.etag) {
      res.status(304).end();
      return;
    }
    res.status(200).type(file.contentType).send(file.body);
  };

  const router = express.Router({ strict: true });
  router.get(['/dashboard', '/dashboard/'], serve('index.html'));
  router.get('/dashboard/:file', (req: Request, res: Response) => {
    const name = String(req.params.file);
    serve(Object.hasOwn(FILES, name) ? name : '')(req, res);
  });
  return router;
}
