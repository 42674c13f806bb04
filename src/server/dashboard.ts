import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Request, type Response, type Router } from 'express';
import type { DashboardSignInConfig } from '../auth/auth-config';
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
 * over fetch, subscriptions over a same-origin WebSocket, which 'self' covers) and, when it
 * signs in through an identity provider, to that provider (discovery and token requests).
 * No inline code, no other origin, no framing.
 */
export function dashboardCsp(providerOrigins: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    ["connect-src 'self'", ...providerOrigins].join(' '),
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const DASHBOARD_CSP = dashboardCsp();

/** How the dashboard signs in, as it reads it from `/dashboard/sign-in.json`. */
export interface DashboardSignIn {
  /** Pasting a token is offered (not with a provider in production). */
  readonly paste: boolean;
  /** Authorization code + PKCE with this provider (DASHBOARD_OIDC_CLIENT_ID), or null. */
  readonly provider: DashboardSignInConfig | null;
}

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
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
export function dashboardRouter(deps: { readonly dir: string; readonly logger: Logger; readonly signIn?: DashboardSignIn }): Router {
  const signIn: DashboardSignIn = deps.signIn ?? { paste: true, provider: null };
  const csp = dashboardCsp(signIn.provider ? [new URL(signIn.provider.issuer).origin] : []);
  const secure = (res: Response) => {
    res.setHeader('content-security-policy', csp);
    for (const [header, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(header, value);
  };
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
    secure(res);
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
  router.get('/dashboard/sign-in.json', (_req: Request, res: Response) => {
    secure(res);
    res.setHeader('cache-control', 'no-store');
    res.status(200).json(signIn);
  });
  router.get('/dashboard/:file', (req: Request, res: Response) => {
    const name = String(req.params.file);
    serve(Object.hasOwn(FILES, name) ? name : '')(req, res);
  });
  return router;
}
