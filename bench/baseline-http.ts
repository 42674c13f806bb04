import { createSecretKey } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import jwt from 'jsonwebtoken';

/** What the hand-written baselines (list-baseline.ts, execute-baseline.ts) share: the bare HTTP edge. */

export interface Caller {
  readonly org: string;
  readonly user: string;
}

export async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * The bearer token's org and user, checked with the same secret and algorithm as the gateway's;
 * null if absent or invalid. The key is built once, as the gateway does: given the secret as a
 * string, jsonwebtoken first fails to parse it as a public key on every call (~0.7 ms here).
 */
export function callerCheck(secret: string): (req: IncomingMessage) => Caller | null {
  const key = createSecretKey(Buffer.from(secret, 'utf8'));
  return (req) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token) return null;
    try {
      const claims = jwt.verify(token, key, { algorithms: ['HS256'] }) as { sub?: unknown; org?: unknown };
      return typeof claims.sub === 'string' && typeof claims.org === 'string' ? { org: claims.org, user: claims.sub } : null;
    } catch {
      return null;
    }
  };
}

export function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
